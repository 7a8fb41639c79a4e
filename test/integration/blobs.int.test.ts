import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../server/errors";
import { getBlob, putBlob } from "../../server/events/blobs";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

describe("blobs", () => {
  it("stores content once by its sha256 and reads it back byte for byte", async () => {
    const big = "agent output line\n".repeat(50_000);
    const a = await putBlob(db.pool, big);
    const b = await putBlob(db.pool, big);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ size: Buffer.byteLength(big), mediaType: "text/plain; charset=utf-8" });
    expect(a.blob).toMatch(/^[0-9a-f]{64}$/);
    const count = await db.pool.query("SELECT count(*)::int AS n FROM blobs WHERE hash = $1", [a.blob]);
    expect(count.rows[0].n).toBe(1);
    expect((await getBlob(db.pool, a.blob)).content.toString("utf8")).toBe(big);
  });

  it("a missing blob is NOT_FOUND", async () => {
    const missing = getBlob(db.pool, "0".repeat(64));
    await expect(missing).rejects.toThrow(/not found/);
    await expect(missing).rejects.toBeInstanceOf(AppError);
    await expect(missing).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
