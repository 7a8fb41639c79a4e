import { beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../server/db/pool";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

describe("withTransaction", () => {
  it("a connection killed mid-transaction fails the call instead of crashing the process, and the pool recovers", async () => {
    const failed = withTransaction(db.pool, async (tx) => {
      const me = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await db.pool.query("SELECT pg_terminate_backend($1)", [me.rows[0]!.pid]);
      await new Promise((r) => setTimeout(r, 300));
      await tx.query("SELECT 1");
    });
    await expect(failed).rejects.toThrow(/terminat|Connection/i);
    const ok = await withTransaction(db.pool, (tx) => tx.query<{ one: number }>("SELECT 1 AS one"));
    expect(ok.rows[0]!.one).toBe(1);
  });
});
