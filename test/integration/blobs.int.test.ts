import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../server/errors";
import { collectUnreferencedBlobs, getBlob, putBlob } from "../../server/events/blobs";
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
  it("collects blobs no event references once past the grace period; referenced and recent ones stay", async () => {
    const referenced = await putBlob(db.pool, "the recorded output");
    const orphan = await putBlob(db.pool, "output of an attempt whose result was rejected");
    const recent = await putBlob(db.pool, "output of an attempt still running");
    await db.store.append("s-blobs", "no_stream", [{ type: "SessionCreated", data: { title: "blobs", workflow: "test", state: "open" } }], {
      actor: { kind: "user", id: "t" },
    });
    await db.store.append(
      "s-blobs",
      "any",
      [
        {
          type: "StepScheduled",
          data: { stepId: "3d4f1c8e-1f1e-4c55-9d7e-0f4b8f3c2a10", kind: "x", input: { diff: referenced }, timeoutMs: 1000, maxAttempts: 1 },
        },
      ],
      {
        actor: { kind: "user", id: "t" },
      },
    );
    await db.pool.query("UPDATE blobs SET created_at = now() - interval '2 days' WHERE hash = ANY($1)", [[referenced.blob, orphan.blob]]);
    expect(await collectUnreferencedBlobs(db.pool)).toBe(1);
    const left = (
      await db.pool.query<{ hash: string }>("SELECT hash FROM blobs WHERE hash = ANY($1)", [[referenced.blob, orphan.blob, recent.blob]])
    ).rows.map((r) => r.hash);
    expect(left.sort()).toEqual([referenced.blob, recent.blob].sort());
    // Storing the same content again makes it recent: a new attempt's blob is not collected under it.
    await db.pool.query("UPDATE blobs SET created_at = now() - interval '2 days' WHERE hash = $1", [recent.blob]);
    await putBlob(db.pool, "output of an attempt still running");
    expect(await collectUnreferencedBlobs(db.pool)).toBe(0);
  });
});
