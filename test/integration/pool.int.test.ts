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

describe("withTransaction on a pipelining pool", () => {
  it("the first statement runs inside the transaction although BEGIN's reply was not awaited: a failure rolls it back", async () => {
    await db.pool.query("CREATE TABLE IF NOT EXISTS pipeline_probe (n int)");
    const failed = withTransaction(db.pool, async (tx) => {
      await tx.query("INSERT INTO pipeline_probe VALUES (1)");
      // The INSERT's transaction id is still this statement's: one transaction, not two.
      const inTx = await tx.query<{ open: boolean }>("SELECT txid_current_if_assigned() IS NOT NULL AS open");
      expect(inTx.rows[0]!.open).toBe(true);
      throw new Error("after the first statement");
    });
    await expect(failed).rejects.toThrow("after the first statement");
    expect((await db.pool.query("SELECT count(*)::int AS n FROM pipeline_probe")).rows[0].n).toBe(0);
  });

  it("`behind` runs on the same connection after the COMMIT (it sees the committed row); not at all when the transaction fails; its error fails nothing", async () => {
    await db.pool.query("CREATE TABLE IF NOT EXISTS behind_probe (n int)");
    const seen: { pid: number; rows: number }[] = [];
    let txPid = 0;
    await withTransaction(
      db.pool,
      async (tx) => {
        txPid = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
        await tx.query("INSERT INTO behind_probe VALUES (1)");
      },
      {
        behind: async (c) => {
          const r = await c.query<{ pid: number; n: number }>("SELECT pg_backend_pid() AS pid, count(*)::int AS n FROM behind_probe");
          seen.push({ pid: r.rows[0]!.pid, rows: r.rows[0]!.n });
        },
      },
    );
    expect(seen).toEqual([{ pid: txPid, rows: 1 }]);

    let ranBehind = false;
    const failed = withTransaction(
      db.pool,
      async () => {
        throw new Error("the transaction's own failure");
      },
      {
        behind: async () => {
          ranBehind = true;
        },
      },
    );
    await expect(failed).rejects.toThrow("the transaction's own failure");
    expect(ranBehind).toBe(false);

    const result = await withTransaction(db.pool, async (tx) => (await tx.query("INSERT INTO behind_probe VALUES (2)")).rowCount, {
      behind: async (c) => {
        await c.query("SELECT * FROM no_such_table_behind");
      },
    });
    expect(result).toBe(1);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM behind_probe")).rows[0].n).toBe(2);
  });
});
