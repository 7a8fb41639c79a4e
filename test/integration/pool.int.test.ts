import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, NestedPoolUseError, takeNestedPoolUses, withTransaction } from "../../server/db/pool";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
/** A second pool on the same database: what a test does beside a transaction, not inside it. */
let other: ReturnType<typeof createPool>;
beforeAll(async () => {
  db = await createTestDatabase();
  other = createPool(db.url, 2);
});
afterAll(() => other.end());

describe("withTransaction", () => {
  it("a connection killed mid-transaction fails the call instead of crashing the process, and the pool recovers", async () => {
    const failed = withTransaction(db.pool, async (tx) => {
      const me = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await other.query("SELECT pg_terminate_backend($1)", [me.rows[0]!.pid]);
      await new Promise((r) => setTimeout(r, 300));
      await tx.query("SELECT 1");
    });
    await expect(failed).rejects.toThrow(/terminat|Connection/i);
    const ok = await withTransaction(db.pool, (tx) => tx.query<{ one: number }>("SELECT 1 AS one"));
    expect(ok.rows[0]!.one).toBe(1);
  });
});

describe("a second connection asked of a pool inside its own transaction (CATCAFE_POOL_CHECKS, on in the tests)", () => {
  it("is refused, by query and by connect, with a callback or a promise, and recorded; the transaction itself is unharmed", async () => {
    expect(process.env.CATCAFE_POOL_CHECKS).toBe("1");
    const seen = await withTransaction(db.pool, async (tx) => {
      const byQuery = await db.pool.query("SELECT 1").catch((err: unknown) => err);
      const byConnect = await db.pool.connect().catch((err: unknown) => err);
      const byCallback = await new Promise<unknown>((resolve) => db.pool.connect((err) => resolve(err)));
      const nested = await withTransaction(db.pool, (inner) => inner.query("SELECT 1")).catch((err: unknown) => err);
      const own = await tx.query<{ one: number }>("SELECT 1 AS one");
      return { errors: [byQuery, byConnect, byCallback, nested], own: own.rows[0]!.one };
    });
    for (const err of seen.errors) {
      expect(err).toBeInstanceOf(NestedPoolUseError);
      expect((err as Error).message).toContain("use the transaction's client");
    }
    expect(seen.own).toBe(1);
    const recorded = takeNestedPoolUses();
    expect(recorded).toHaveLength(4);
    expect(recorded[0]).toContain("pool.int.test.ts");
    // Nothing was handed out: every connection is back (the refused ones were never taken).
    expect(db.pool.totalCount - db.pool.idleCount).toBe(0);
  });

  it("is allowed outside the transaction, after it, in work it started detached, and of another pool inside it", async () => {
    let detached: Promise<unknown> = Promise.resolve();
    const rows = await withTransaction(db.pool, async (tx) => {
      const elsewhere = await other.query<{ one: number }>("SELECT 1 AS one");
      // A timer set inside runs outside: by then the transaction is over.
      detached = new Promise((resolve) => setTimeout(() => resolve(db.pool.query("SELECT 2 AS two")), 50));
      await tx.query("SELECT 1");
      return elsewhere.rows;
    });
    expect(rows).toEqual([{ one: 1 }]);
    expect(((await detached) as { rows: unknown[] }).rows).toEqual([{ two: 2 }]);
    expect((await db.pool.query("SELECT 3 AS three")).rows).toEqual([{ three: 3 }]);
    expect(takeNestedPoolUses()).toEqual([]);
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
