// Replay from snapshots (server/events/snapshots.ts, fold-read.ts): the state folded from
// the nearest snapshot plus the events after it is the state folded from every event read
// whole and decoded — at positions before the first snapshot, exactly at one, between them,
// through a fork's lineage, after the fold's version changes, with events stored under an
// older schema version — and deleting the snapshots changes no result.
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { withTransaction } from "../../server/db/pool";
import { foldStreamAt, LATEST_VERSION, snapshotVersions as snapshotVersionsKept } from "../../server/events/fold-read";
import { replayAt } from "../../server/sessions/replay";
import { splitRounds } from "../../server/sessions/rounds";
import { defineEvent, EventRegistry } from "../../server/events/registry";
import { MAX_SNAPSHOTS_PER_READ, snapshotKey, type StreamFold } from "../../server/events/snapshots";
import { EventStore } from "../../server/events/store";
import type { FoldEvent } from "../../server/events/types";
import { foldTask, startedTask, taskFold, type TaskState } from "../../server/task-engine";
import { longTaskSession, reviewRound } from "../../bench/lib/task-fixtures";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let sessionId: string;
const EVERY = 100;
const LENGTH = 1234;

beforeAll(async () => {
  db = await createTestDatabase();
  sessionId = await longTaskSession(db.store, testActor, LENGTH);
});

const deps = () => ({ pool: db.pool, registry: db.store.registry });

/** The reference: every event read whole, decoded by the registry, folded by the engine. */
async function fullFold(streamId: string, version: number): Promise<TaskState> {
  return foldTask(await db.store.readStream(streamId, { toVersion: version }));
}

async function expectSameState(streamId: string, version: number): Promise<TaskState> {
  const fast = await foldStreamAt(deps(), taskFold, streamId, version, { every: EVERY });
  const full = await fullFold(streamId, version);
  expect(fast).toEqual(full);
  // Against the lean read without snapshots, even the keys' order is the same (the snapshot
  // column is json, not jsonb). The decoded read orders an object's keys as its zod schema
  // lists them, the lean one as jsonb stored them: equal values, another order.
  const lean = await foldStreamAt(deps(), taskFold, streamId, version, { snapshots: false });
  expect(JSON.stringify(fast)).toBe(JSON.stringify(lean));
  return fast;
}

async function snapshotVersions(streamId: string): Promise<number[]> {
  const r = await db.pool.query<{ version: number }>("SELECT version FROM stream_snapshots WHERE stream_id = $1 ORDER BY version", [
    streamId,
  ]);
  return r.rows.map((row) => row.version);
}

describe("snapshot + tail equals the full fold", () => {
  it("at many positions: before the first snapshot, exactly at one, between, at the end", async () => {
    await db.pool.query("DELETE FROM stream_snapshots");
    const positions = [1, 2, 57, 99, 100, 101, 250, 300, 299, 301, 999, 1000, 1001, 1150, 640, 777, LENGTH];
    for (const version of positions) await expectSameState(sessionId, version);
    // Each read kept every snapshot version it folded past (none before the first): the read
    // at 999 kept 400..900, not only 900.
    expect(await snapshotVersions(sessionId)).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200]);
    const state = startedTask(await expectSameState(sessionId, LENGTH));
    expect(state?.startedAtMs).toEqual(expect.any(Number)); // TaskStarted's time went through the lean read
  });

  it("the store's stateAt with the task fold (snapshots every 1,000) is the full fold too", async () => {
    for (const version of [999, 1000, 1001, LENGTH]) {
      expect(await db.store.stateAt(sessionId, version, taskFold)).toEqual(await fullFold(sessionId, version));
    }
    const key = snapshotKey(taskFold, db.store.registry);
    const kept = await db.pool.query("SELECT 1 FROM stream_snapshots WHERE stream_id = $1 AND fold = $2 AND version = 1000", [
      sessionId,
      key,
    ]);
    expect(kept.rowCount).toBe(1);
  });

  it("deleting every snapshot changes no result", async () => {
    const positions = [1, 100, 555, 1000, LENGTH];
    const before = await Promise.all(positions.map((v) => foldStreamAt(deps(), taskFold, sessionId, v, { every: EVERY })));
    await db.pool.query("DELETE FROM stream_snapshots");
    const after = await Promise.all(positions.map((v) => foldStreamAt(deps(), taskFold, sessionId, v, { every: EVERY })));
    expect(JSON.stringify(after)).toBe(JSON.stringify(before));
    const none = await Promise.all(positions.map((v) => foldStreamAt(deps(), taskFold, sessionId, v, { snapshots: false })));
    expect(JSON.stringify(none)).toBe(JSON.stringify(before));
  });

  it("a snapshot is used when there is one, and ignored once the fold's version changes", async () => {
    const key = snapshotKey(taskFold, db.store.registry);
    const honest = await fullFold(sessionId, 400);
    await db.pool.query("DELETE FROM stream_snapshots WHERE stream_id = $1", [sessionId]);
    // A planted snapshot at 400 whose state no fold would make: a read past it starts there.
    const planted = { ...honest, fsm: "planted" };
    await db.pool.query("INSERT INTO stream_snapshots (stream_id, fold, version, state) VALUES ($1, $2, 400, $3::json)", [
      sessionId,
      key,
      JSON.stringify(planted),
    ]);
    const fromPlanted = await foldStreamAt(deps(), taskFold, sessionId, 401, { every: EVERY });
    const truth = await fullFold(sessionId, 401);
    // Event 401 either changes the workflow state (then both agree on it) or keeps the planted one.
    expect(fromPlanted.fsm === "planted" || fromPlanted.fsm === truth.fsm).toBe(true);
    expect(await foldStreamAt(deps(), taskFold, sessionId, 400, { every: EVERY })).toEqual(planted);

    // The fold's code changes (its version is bumped): the planted row is someone else's now.
    const bumped: StreamFold<TaskState> = { ...taskFold, version: taskFold.version + 1 };
    expect(snapshotKey(bumped, db.store.registry)).not.toBe(key);
    expect(await foldStreamAt(deps(), bumped, sessionId, 400, { every: EVERY })).toEqual(honest);
    expect(await foldStreamAt(deps(), bumped, sessionId, 401, { every: EVERY })).toEqual(truth);
    await db.pool.query("DELETE FROM stream_snapshots WHERE stream_id = $1", [sessionId]);
  });
});

describe("forks", () => {
  it("a fork's state uses its parent's snapshots up to the fork point only", async () => {
    const parentId = await longTaskSession(db.store, testActor, 700);
    const at = 550;
    await db.pool.query("DELETE FROM stream_snapshots WHERE stream_id = $1", [parentId]);
    // The parent's snapshots, past the fork point too (600, 700).
    for (const v of [450, 650, 700]) await expectSameState(parentId, v);
    expect(await snapshotVersions(parentId)).toEqual([100, 200, 300, 400, 500, 600, 700]);

    const childId = uniqueId("fork");
    await db.store.fork({
      parentId,
      atVersion: at,
      childId,
      event: {
        type: "SessionForked",
        data: { parentId, atVersion: at, reason: "manual", title: "A fork", workflow: "review_loop", state: "building" },
      },
      metadata: { actor: testActor },
    });
    // The child's own rounds, numbered apart from the parent's so that they fold differently.
    let version = at + 1;
    for (let n = 90; version < 760; n++) {
      version = (await db.store.append(childId, version, reviewRound(n), { actor: testActor })).version;
    }
    const positions = [1, 399, 400, 401, 549, 550, 551, 552, 599, 600, 601, 650, 699, 700, 701, version];
    for (const v of positions) await expectSameState(childId, v);
    // Up to 599 the child starts from the parent's snapshots up to the fork point (300, 400,
    // 500); 600 and up are kept as the child's (never the parent's 600 or 700).
    expect(await snapshotVersions(childId)).toEqual([600, 700]);
    const child600 = await foldStreamAt(deps(), taskFold, childId, 600, { every: EVERY });
    const parent600 = await foldStreamAt(deps(), taskFold, parentId, 600, { every: EVERY });
    expect(child600).not.toEqual(parent600);
    // A fork of the fork, before and after the first fork point.
    const grandchildId = uniqueId("fork");
    await db.store.fork({
      parentId: childId,
      atVersion: 620,
      childId: grandchildId,
      event: {
        type: "SessionForked",
        data: { parentId: childId, atVersion: 620, reason: "rerun", title: "A rerun", workflow: "review_loop", state: "building" },
      },
      metadata: { actor: testActor },
    });
    for (const v of [300, 400, 550, 551, 600, 620, 621]) await expectSameState(grandchildId, v);
  });
});

describe("the lean read", () => {
  it("replay.at (lean read) shows the state and rounds of the full decoded read", async () => {
    for (const version of [2, 57, 640, LENGTH]) {
      const view = await replayAt({ store: db.store, pool: db.pool }, { sessionId, version });
      const full = await db.store.readStream(sessionId, { toVersion: version });
      const { rounds, final, placed } = splitRounds(full);
      const started = startedTask(final);
      expect(view.state).toMatchObject({ fsm: final.fsm, status: final.status, openIssues: started?.openIssues ?? [] });
      expect(view.state.lastVerdict).toEqual(started?.lastVerdict ?? null);
      expect(view.rounds.map((r) => [r.iteration, r.fromVersion, r.reason])).toEqual(rounds.map((r) => [r.round, r.fromVersion, r.reason]));
      const outputs = (r: (typeof rounds)[number]) => r.events.filter((e) => e.type === "AgentOutputRecorded").length;
      expect(view.rounds.map((r) => r.outputs)).toEqual(rounds.map(outputs));
      expect(view.round?.iteration).toBe(placed.at(-1)?.round);
    }
  });

  it("upcasts events stored under an older schema version, and keys snapshots by the schema versions", async () => {
    const v1 = new EventRegistry({ Note: defineEvent({ version: 1, schema: z.object({ text: z.string() }) }) });
    const v2 = new EventRegistry({
      Note: defineEvent({
        version: 2,
        schema: z.object({ text: z.string(), words: z.number() }),
        upcasters: { 1: (d) => ({ ...(d as { text: string }), words: (d as { text: string }).text.split(" ").length }) },
      }),
    });
    const streamId = uniqueId("notes");
    const old = new EventStore(db.pool, { registry: v1 });
    await old.append(streamId, "no_stream", [{ type: "Note", data: { text: "one two" } }], { actor: testActor }, { streamType: "notes" });
    const now = new EventStore(db.pool, { registry: v2 });
    await now.append(streamId, 1, [{ type: "Note", data: { text: "three", words: 7 } }], { actor: testActor });
    const words: StreamFold<number[]> = {
      name: "words",
      version: 1,
      initial: [],
      evolve: (s, e: FoldEvent) => [...s, (e.data as { words: number }).words],
    };
    expect(await foldStreamAt({ pool: db.pool, registry: v2 }, words, streamId, 2, { every: 1 })).toEqual([2, 7]);
    expect(await now.stateAt(streamId, 2, (s: number[], e) => [...s, (e.data as { words: number }).words], [])).toEqual([2, 7]);
    // Another registry (an upcaster added, a version bumped) is another key.
    expect(snapshotKey(words, v1)).not.toBe(snapshotKey(words, v2));
  });

  it("a read keeps every snapshot version it folds past, so a later read in the middle folds only from there", async () => {
    const other = await longTaskSession(db.store, testActor, LENGTH);
    let calls = 0;
    const counting: StreamFold<{ n: number }> = {
      name: "count-calls",
      version: 1,
      initial: { n: 0 },
      evolve: (s) => {
        calls++;
        return { n: s.n + 1 };
      },
    };
    expect(await foldStreamAt(deps(), counting, other, LENGTH, { every: EVERY })).toEqual({ n: LENGTH });
    expect(await snapshotVersions(other)).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200]);
    calls = 0;
    expect(await foldStreamAt(deps(), counting, other, 600, { every: EVERY })).toEqual({ n: 600 });
    expect(calls).toBe(0);
    expect(await foldStreamAt(deps(), counting, other, 650, { every: EVERY })).toEqual({ n: 650 });
    expect(calls).toBe(50);
  });

  it("a read of the latest state keeps the head's state in place of the earlier head's; a read inside a transaction or at a given version does not", async () => {
    const other = await longTaskSession(db.store, testActor, 250);
    let calls = 0;
    const counting: StreamFold<{ n: number }> = {
      name: "count-head",
      version: 1,
      initial: { n: 0 },
      evolve: (s) => {
        calls++;
        return { n: s.n + 1 };
      },
    };
    const latest = () => foldStreamAt(deps(), counting, other, LATEST_VERSION, { every: EVERY, headAfter: 20 });
    // Inside a transaction (a command's fold): the spacing only.
    const inTx = await withTransaction(db.pool, (tx) =>
      foldStreamAt({ pool: tx, registry: db.store.registry }, counting, other, LATEST_VERSION, {
        every: EVERY,
        headAfter: 20,
        inTransaction: true,
      }),
    );
    expect(inTx).toEqual({ n: 250 });
    expect(await snapshotVersions(other)).toEqual([100, 200]);
    // At a given version: the spacing only.
    expect(await foldStreamAt(deps(), counting, other, 250, { every: EVERY, headAfter: 20 })).toEqual({ n: 250 });
    expect(await snapshotVersions(other)).toEqual([100, 200]);
    expect(await latest()).toEqual({ n: 250 });
    expect(await snapshotVersions(other)).toEqual([100, 200, 250]);
    calls = 0;
    expect(await latest()).toEqual({ n: 250 });
    expect(calls).toBe(0); // one row, nothing folded
    // Ten more events: under headAfter, nothing kept; past it, the new head replaces 250.
    let version = 250;
    for (let n = 500; version < 262; n++) version = (await db.store.append(other, version, reviewRound(n), { actor: testActor })).version;
    await latest();
    expect(await snapshotVersions(other)).toEqual([100, 200, 250]);
    for (let n = 600; version < 275; n++) version = (await db.store.append(other, version, reviewRound(n), { actor: testActor })).version;
    calls = 0;
    expect(await latest()).toEqual({ n: version });
    expect(calls).toBe(version - 250);
    expect(await snapshotVersions(other)).toEqual([100, 200, version]);
    expect(await latest()).toEqual(await foldStreamAt(deps(), counting, other, version, { snapshots: false }));
  });

  it("a read keeps a bounded number of snapshots, evenly spread, the highest always", async () => {
    expect([...snapshotVersionsKept(0, 10_000, 1000)].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((k) => k * 1000));
    const long = [...snapshotVersionsKept(0, 100_500, 1000)].sort((a, b) => a - b);
    expect(long.length).toBeLessThanOrEqual(MAX_SNAPSHOTS_PER_READ);
    expect(long.at(-1)).toBe(100_000);
    expect(long[0]).toBeLessThanOrEqual(7000);
    expect(Math.max(...long.slice(1).map((v, i) => v - long[i]!))).toBe(7000);
    expect([...snapshotVersionsKept(5000, 5999, 1000)]).toEqual([]);
    expect([...snapshotVersionsKept(5000, 6000, 1000)]).toEqual([6000]);
  });

  it("a snapshot that cannot be kept never fails the read", async () => {
    const counting: StreamFold<{ n: bigint }> = { name: "bigint", version: 1, initial: { n: 0n }, evolve: (s) => ({ n: s.n + 1n }) };
    expect(await foldStreamAt(deps(), counting, sessionId, 250, { every: EVERY })).toEqual({ n: 250n });
  });

  it("a stream that does not exist is NOT_FOUND", async () => {
    await expect(foldStreamAt(deps(), taskFold, uniqueId("none"), 10)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
