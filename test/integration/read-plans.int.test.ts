// Reading a stream stays an index read whatever the log holds: the plan PostgreSQL picks for
// the store's stream read, once its statistics show one very long stream beside many short
// ones (as autovacuum's ANALYZE makes them in a database in use). Its own database: the
// 100,000 events written here would change what other tests of the log see.
import { beforeAll, describe, expect, it } from "vitest";
import { READ_STREAM_SQL } from "../../server/events/store";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

const message = (text: string) => ({ type: "OperatorMessagePosted", data: { text } });

async function newSession(title: string): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title, workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

describe("reading a stream", () => {
  it("beside a 100,000-event stream and 50 short ones, with statistics up to date, a short stream is read by index, never by scanning every event", async () => {
    const big = await newSession("long");
    for (let v = 1; v < 100_000; v += 1000) {
      await db.store.append(
        big,
        v,
        Array.from({ length: 1000 }, (_, i) => message(`m${v + i}`)),
        { actor: testActor },
      );
    }
    const shorts: string[] = [];
    for (let i = 0; i < 50; i++) {
      const id = await newSession(`short ${i}`);
      await db.store.append(
        id,
        1,
        Array.from({ length: 30 }, (_, j) => message(`s${j}`)),
        { actor: testActor },
      );
      shorts.push(id);
    }
    await db.pool.query("VACUUM (ANALYZE) events, streams");
    const client = await db.pool.connect();
    const plans: string[] = [];
    try {
      await client.query(`PREPARE read_stream(text, int, int) AS ${READ_STREAM_SQL}`);
      // The plan of a call (custom), and the one a prepared statement settles on (generic).
      for (const mode of ["force_custom_plan", "force_generic_plan"]) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        const rows = (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE read_stream('${shorts[7]}', 1, 2147483647)`)).rows;
        plans.push(rows.map((r) => r["QUERY PLAN"]).join("\n"));
      }
    } finally {
      await client.query("DEALLOCATE read_stream").catch(() => undefined);
      await client.query("RESET plan_cache_mode").catch(() => undefined);
      client.release();
    }
    for (const plan of plans) {
      expect(plan).toMatch(/Index Scan using \S+ on events/);
      expect(plan).not.toMatch(/Seq Scan on events/);
    }
    expect((await db.store.readStream(shorts[7]!)).map((e) => e.version)).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
  }, 120_000);
});
