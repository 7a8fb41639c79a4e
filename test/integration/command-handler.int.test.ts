// The command handler (server/events/command-handler.ts), the one way every decider appends:
// commands on one stream are decided one at a time, each on the state the one before left;
// the state comes from the nearest snapshot, and a snapshot it folds past is kept inside its
// transaction without ever undoing the decision; in the caller's transaction the decision
// commits or rolls back with the caller's writes; a refusal or an empty decision changes
// nothing; a stream that does not exist is NOT_FOUND (whatever the state is read from), and
// create() makes one only once.
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { withTransaction } from "../../server/db/pool";
import { AppError } from "../../server/errors";
import { commandHandler, foldedState, historyState, streamVersion } from "../../server/events/command-handler";
import { defineEvent, EventRegistry } from "../../server/events/registry";
import { saveSnapshot, snapshotKey, SNAPSHOT_EVERY, type StreamFold } from "../../server/events/snapshots";
import { EventStore } from "../../server/events/store";
import { createTestDatabase, rejection, testActor, uniqueId, type TestDatabase } from "../helpers/db";

const registry = new EventRegistry({ Counted: defineEvent({ version: 1, schema: z.object({ n: z.number().int() }) }) });
const counter: StreamFold<{ count: number; last: number }> = {
  name: "counter",
  version: 1,
  initial: { count: 0, last: 0 },
  evolve: (s, e) => ({ count: s.count + 1, last: (e.data as { n: number }).n }),
};
const counting = commandHandler(foldedState(counter));
const next = (state: { last: number }) => [{ type: "Counted", data: { n: state.last + 1 } }];

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = new EventStore(db.pool, { registry });
});

async function stream(events: number): Promise<string> {
  const id = uniqueId("count");
  const all = Array.from({ length: events }, (_, i) => ({ type: "Counted", data: { n: i + 1 } }));
  for (let at = 0; at < all.length; at += 500)
    await store.append(id, at === 0 ? "no_stream" : at, all.slice(at, at + 500), { actor: testActor });
  return id;
}

const numbers = async (id: string) => (await store.readStream(id)).map((e) => (e.data as { n: number }).n);

describe("the command handler", () => {
  it("decides commands on one stream one at a time, each on the state the one before left: 20 at once, none refused", async () => {
    const id = await stream(1);
    const slow = async (state: { last: number }) => {
      await new Promise((r) => setTimeout(r, 5));
      return next(state);
    };
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => counting.handle(store, id, slow, { actor: testActor })));
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    expect(await numbers(id)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    const versions = results.map((r) => (r.status === "fulfilled" ? r.value.version : 0)).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
  });

  it("reads the state from the nearest snapshot: a planted one is what the decision sees", async () => {
    const id = await stream(SNAPSHOT_EVERY + 3);
    await saveSnapshot(db.pool, id, snapshotKey(counter, registry), SNAPSHOT_EVERY, { count: 1, last: 70_000 });
    const handled = await counting.handle(store, id, next, { actor: testActor });
    expect(handled.state).toEqual({ count: 4, last: SNAPSHOT_EVERY + 3 });
    const planted = await counting.handle(store, id, (s) => [{ type: "Counted", data: { n: s.count } }], { actor: testActor });
    expect(planted.events).toEqual([{ type: "Counted", data: { n: 5 } }]);
  });

  it("keeps the snapshot it folds past inside its transaction; a snapshot the database refuses never undoes the decision", async () => {
    const kept = await stream(SNAPSHOT_EVERY + 1);
    await counting.handle(store, kept, next, { actor: testActor });
    const rows = await db.pool.query("SELECT version FROM stream_snapshots WHERE stream_id = $1", [kept]);
    expect(rows.rows).toEqual([{ version: SNAPSHOT_EVERY }]);

    const refused = await stream(SNAPSHOT_EVERY + 1);
    await db.pool.query(
      `CREATE OR REPLACE FUNCTION refuse_snapshot() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'no snapshots here'; END $$ LANGUAGE plpgsql;
       CREATE TRIGGER refuse_snapshot BEFORE INSERT ON stream_snapshots FOR EACH ROW WHEN (NEW.stream_id = '${refused}') EXECUTE FUNCTION refuse_snapshot();`,
    );
    const handled = await counting.handle(store, refused, next, { actor: testActor });
    expect(handled.version).toBe(SNAPSHOT_EVERY + 2);
    expect((await numbers(refused)).at(-1)).toBe(SNAPSHOT_EVERY + 2);
    expect((await db.pool.query("SELECT 1 FROM stream_snapshots WHERE stream_id = $1", [refused])).rowCount).toBe(0);
  });

  it("in the caller's transaction: appended with the caller's own writes, or not at all", async () => {
    const id = await stream(1);
    await withTransaction(db.pool, async (tx) => {
      await store.appendInTx(tx, id, 1, next({ last: 1 }), { actor: testActor });
      await counting.handle(store, id, next, { actor: testActor }, { tx });
    });
    expect(await numbers(id)).toEqual([1, 2, 3]);

    const undone = await rejection(
      withTransaction(db.pool, async (tx) => {
        await store.appendInTx(tx, id, 3, next({ last: 3 }), { actor: testActor });
        await counting.handle(store, id, next, { actor: testActor }, { tx });
        throw new AppError("CONFLICT", "the caller changed its mind");
      }),
    );
    expect(undone.message).toBe("the caller changed its mind");
    expect(await numbers(id)).toEqual([1, 2, 3]);
  });

  it("a refusal appends nothing and is the caller's error; a decision of nothing appends nothing and answers the version read", async () => {
    const id = await stream(2);
    const refusal = await rejection(
      counting.handle(
        store,
        id,
        () => {
          throw new AppError("CONFLICT", "it already moved on");
        },
        { actor: testActor },
      ),
    );
    expect(refusal).toMatchObject({ code: "CONFLICT", message: "it already moved on" });
    const nothing = await counting.handle(store, id, () => [], { actor: testActor });
    expect(nothing).toMatchObject({ version: 2, events: [], recorded: [] });
    expect(await numbers(id)).toEqual([1, 2]);
  });

  it("a stream that does not exist is NOT_FOUND, whatever the state is read from; create() decides on the initial state and makes it once", async () => {
    const id = uniqueId("count");
    const history = commandHandler(historyState(0, (events) => events.length));
    const versionOnly = commandHandler(streamVersion);
    // One at a time: a refusal not yet awaited would be an unhandled rejection.
    for (const handle of [
      () => counting.handle(store, id, next, { actor: testActor }),
      () => history.handle(store, id, () => [], { actor: testActor }),
      () => versionOnly.handle(store, id, () => [], { actor: testActor }),
    ]) {
      expect(await rejection(handle())).toMatchObject({ code: "NOT_FOUND", message: `stream ${id} does not exist` });
    }
    // The version alone says which stream it looked for.
    expect((await rejection(versionOnly.handle(store, id, () => [], { actor: testActor }))).details).toEqual({ streamId: id });
    const created = await counting.create(store, id, (state) => next(state), { actor: testActor });
    expect(created).toMatchObject({ version: 1, state: { count: 0, last: 0 } });
    expect((await rejection(counting.create(store, id, next, { actor: testActor }))).code).toBe("CONFLICT");
    const empty = uniqueId("count");
    expect(await rejection(counting.create(store, empty, () => [], { actor: testActor }))).toMatchObject({
      code: "INVALID_INPUT",
      message: `nothing to create stream ${empty} with`,
      details: { streamId: empty },
    });
    expect(await numbers(id)).toEqual([1]);
  });
});
