// The event store at its edges, each case a promise a reader or writer relies on: expected
// version 0 is a new stream; an application projection that fails undoes the whole append,
// also when only some of its events are projected; replay snapshots are kept at the highest
// multiple passed and never at 0, a snapshot that cannot be written only logged; a missing
// stream or session is NOT_FOUND for the fold and the timeline; a timeline page is 100 entries
// by default; one blob collector at a time, `limit` blobs per call; a rebuild keeps a
// projection's operational columns, holds appends until it commits, and says (sorted) which
// projection tables it changed, compared under its lock while sessions are appended alongside.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { createPool, type Tx } from "../../server/db/pool";
import { putBlob, collectUnreferencedBlobs } from "../../server/events/blobs";
import { appRegistry } from "../../server/events/catalog";
import { foldStreamAt, readFoldEvents } from "../../server/events/fold-read";
import type { Projection } from "../../server/events/projection";
import { rebuildAndCompare, rebuildProjections } from "../../server/events/rebuild";
import { snapshotKey, type StreamFold } from "../../server/events/snapshots";
import { EventStore } from "../../server/events/store";
import { readSessionTimeline } from "../../server/events/timeline";
import { logger } from "../../server/log";
import { noteHandedSecret } from "../../server/redact";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

const created = (title = "edges") => ({ type: "SessionCreated", data: { title, workflow: "test", state: "open" } });
const message = (text: string) => ({ type: "OperatorMessagePosted", data: { text } });

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: Error & { code?: string }) => err,
  );
}

describe("appends", () => {
  it("expected version 0 creates the stream, as no_stream does; a second such append is a conflict", async () => {
    const id = uniqueId();
    const first = await db.store.append(id, 0, [created()], { actor: testActor });
    expect(first).toMatchObject({ version: 1, duplicate: false });
    const again = await rejection(db.store.append(id, 0, [created()], { actor: testActor }));
    expect(again).toMatchObject({ code: "CONFLICT" });
    expect((await db.store.readStream(id)).map((e) => e.type)).toEqual(["SessionCreated"]);
  });

  it("an application projection that fails undoes the whole append, also when only some of its events are projected and another projection handles none", async () => {
    const failing: Projection = {
      name: "failing",
      handles: ["OperatorMessagePosted"],
      tables: [],
      async apply(tx: Tx, events) {
        // Writes first, then fails: its write must go with the append.
        await tx.query("CREATE TEMP TABLE IF NOT EXISTS projection_writes (n int)");
        await tx.query("INSERT INTO projection_writes VALUES ($1)", [events.length]);
        if (events.some((e) => (e.data as { text?: string }).text === "boom")) throw new Error("projection failed");
      },
    };
    const pool = createPool(db.url, 1);
    try {
      // Handles only what the failing one does not: the append still needs a transaction.
      const bystander: Projection = { name: "bystander", handles: ["StepScheduled"], tables: [], apply: async () => {} };
      const store = new EventStore(pool, { registry: appRegistry, projections: [failing, bystander] });
      const id = uniqueId();
      await store.append(id, "no_stream", [created()], { actor: testActor });
      const err = await rejection(store.append(id, 1, [created("not projected"), message("boom")], { actor: testActor }));
      expect(err.message).toBe("projection failed");
      expect((await store.readStream(id)).map((e) => e.type)).toEqual(["SessionCreated"]);
      expect(await store.streamVersion(id)).toBe(1);
      const writes = await pool.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'projection_writes'");
      expect(writes.rows[0].n).toBe(0);
    } finally {
      await pool.end();
    }
  });
});

describe("what an append records of a secret", () => {
  it("a value handed to an agent is redacted from an event's data, its keys and its summary, whoever appends it; other events are stored as given", async () => {
    const value = `handed-${uniqueId()}`;
    noteHandedSecret("TEST_HANDED_KEY", value);
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created(), message(`the key is ${value}, said twice: ${value}`)], { actor: testActor });
    await db.store.append(id, 2, [message("nothing secret here")], { actor: testActor });
    const rows = await db.pool.query<{ data: string; summary: string }>(
      "SELECT data::text AS data, summary FROM events WHERE stream_id = $1 ORDER BY version",
      [id],
    );
    expect(rows.rows.map((r) => r.data + r.summary).join("\n")).not.toContain(value);
    const said = (await db.store.readStream(id)).map((e) => (e.data as { text?: string }).text);
    expect(said).toEqual([
      undefined,
      "the key is [redacted TEST_HANDED_KEY], said twice: [redacted TEST_HANDED_KEY]",
      "nothing secret here",
    ]);
  });
});

describe("what an append or a read refuses, and how it says so", () => {
  it("reading a stream that does not exist is NOT_FOUND; reading past an existing stream's end is empty", async () => {
    expect(await rejection(db.store.readStream("s-never-written"))).toMatchObject({
      code: "NOT_FOUND",
      message: "stream s-never-written does not exist",
    });
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created()], { actor: testActor });
    expect(await db.store.readStream(id, { fromVersion: 5 })).toEqual([]);
  });

  it("an append of no events, and an append to a stream that does not exist, are refused by name", async () => {
    const id = uniqueId();
    expect(await rejection(db.store.append(id, "no_stream", [], { actor: testActor }))).toMatchObject({
      code: "INVALID_INPUT",
      message: "append needs at least one event",
    });
    expect(await rejection(db.store.append(id, "any", [message("x")], { actor: testActor }))).toMatchObject({
      code: "NOT_FOUND",
      message: `stream ${id} does not exist`,
      details: { streamId: id },
    });
    expect(await rejection(db.store.append(id, 3, [message("x")], { actor: testActor }))).toMatchObject({
      code: "NOT_FOUND",
      message: `stream ${id} does not exist (expected version 3)`,
      details: { streamId: id, expected: 3 },
    });
  });

  it("a conflict names the version the stream is at and the one expected", async () => {
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created(), message("a")], { actor: testActor });
    expect(await rejection(db.store.append(id, 1, [message("b")], { actor: testActor }))).toMatchObject({
      code: "CONFLICT",
      message: `stream ${id} is at version 2, expected 1: it already moved on`,
      details: { streamId: id, expected: 1, actual: 2 },
    });
    for (const expected of ["no_stream", 0] as const) {
      expect(await rejection(db.store.append(id, expected, [created()], { actor: testActor }))).toMatchObject({
        code: "CONFLICT",
        message: `stream ${id} is at version 2, expected a new stream: it already moved on`,
      });
    }
  });

  it("a new stream is a session unless its type is given", async () => {
    const session = uniqueId();
    const other = uniqueId();
    await db.store.append(session, "no_stream", [created()], { actor: testActor });
    await db.store.append(other, "no_stream", [created()], { actor: testActor }, { streamType: "conversation" });
    const types = await db.pool.query<{ id: string; type: string }>(
      "SELECT id, type FROM streams WHERE id = ANY($1) ORDER BY id = $2 DESC",
      [[session, other], session],
    );
    expect(types.rows).toEqual([
      { id: session, type: "session" },
      { id: other, type: "conversation" },
    ]);
  });

  it("a retried append is recognised only by all of its event ids, in its own stream", async () => {
    const id = uniqueId();
    const first = { ...message("once"), eventId: "0193a000-0000-7000-8000-0000000000a1" };
    await db.store.append(id, "no_stream", [created()], { actor: testActor });
    const recorded = await db.store.append(id, 1, [first], { actor: testActor });
    // The same append again: recorded once, the original events returned.
    const again = await db.store.append(id, 1, [first], { actor: testActor });
    expect(again).toMatchObject({ duplicate: true, version: 2 });
    expect(again.events.map((e) => e.eventId)).toEqual(recorded.events.map((e) => e.eventId));
    // With an event that has no id it cannot be the same append: the conflict stands.
    expect(await rejection(db.store.append(id, 1, [first, message("new")], { actor: testActor }))).toMatchObject({ code: "CONFLICT" });
    // With one id recorded and one not: not the same append either.
    const unrecorded = { ...message("other"), eventId: "0193a000-0000-7000-8000-0000000000a2" };
    expect(await rejection(db.store.append(id, 1, [first, unrecorded], { actor: testActor }))).toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("it already moved on"),
    });
    // Its ids in another stream: refused as such.
    const elsewhere = uniqueId();
    await db.store.append(elsewhere, "no_stream", [created()], { actor: testActor });
    expect(await rejection(db.store.append(elsewhere, 1, [first], { actor: testActor }))).toMatchObject({
      code: "CONFLICT",
      message: "some of these event ids are already recorded with other events",
      details: { streamId: elsewhere },
    });
    // All its ids recorded, but one of them in another stream: not this append either.
    const second = { ...message("there"), eventId: "0193a000-0000-7000-8000-0000000000a3" };
    await db.store.append(elsewhere, 1, [second], { actor: testActor });
    expect(await rejection(db.store.append(id, 2, [first, second], { actor: testActor }))).toMatchObject({
      code: "CONFLICT",
      message: "some of these event ids are already recorded with other events",
    });
    expect(await rejection(db.store.append(id, 1, [first, second], { actor: testActor }))).toMatchObject({
      code: "CONFLICT",
      message: `stream ${id} is at version 2, expected 1: it already moved on`,
    });
    // A recorded id beside an event without one, at the stream's version: the same refusal, not the database's error.
    expect(await rejection(db.store.append(id, 2, [first, message("new")], { actor: testActor }))).toMatchObject({
      code: "CONFLICT",
      message: "some of these event ids are already recorded with other events",
      details: { streamId: id },
    });
    expect((await db.store.readStream(id)).length).toBe(2);
    expect((await db.store.readStream(elsewhere)).length).toBe(2);
  });

  it("a projection's own unique violation is its error, not taken for an event id recorded before", async () => {
    const twice: Projection = {
      name: "twice",
      handles: ["OperatorMessagePosted"],
      tables: [],
      async apply(tx: Tx) {
        await tx.query("CREATE TEMP TABLE edges_once (n int PRIMARY KEY) ON COMMIT DROP");
        await tx.query("INSERT INTO edges_once VALUES (1), (1)");
      },
    };
    const pool = createPool(db.url, 1);
    try {
      const store = new EventStore(pool, { registry: appRegistry, projections: [twice] });
      const id = uniqueId();
      await store.append(id, "no_stream", [created()], { actor: testActor });
      const fresh = { ...message("refused"), eventId: "0193a000-0000-7000-8000-0000000000b1" };
      expect(await rejection(store.append(id, 1, [fresh], { actor: testActor }))).toMatchObject({
        code: "23505",
        constraint: "edges_once_pkey",
      });
      expect(await store.streamVersion(id)).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("what a projection rejects with reaches the caller as it was, even when it is no error at all", async () => {
    const odd: Projection = {
      name: "odd",
      handles: ["OperatorMessagePosted"],
      tables: [],
      apply: () => Promise.reject(undefined),
    };
    const store = new EventStore(db.pool, { registry: appRegistry, projections: [odd] });
    const id = uniqueId();
    await store.append(id, "no_stream", [created()], { actor: testActor });
    // With an event id, as a retry would have: the store looks for the append before rethrowing.
    const withId = { ...message("odd"), eventId: "0193a000-0000-7000-8000-0000000000b2" };
    const outcome = await store.append(id, 1, [withId], { actor: testActor }).then(
      () => "appended",
      (err: unknown) => ({ rejectedWith: err }),
    );
    expect(outcome).toEqual({ rejectedWith: undefined });
    expect(await store.streamVersion(id)).toBe(1);
  });

  it("a fork: at versions 1 to the parent's last only, of a parent that exists, into a stream that does not", async () => {
    const parent = uniqueId();
    await db.store.append(parent, "no_stream", [created(), message("a"), message("b")], { actor: testActor });
    const fork = (atVersion: number, childId = uniqueId(), parentId = parent) =>
      db.store.fork({ parentId, atVersion, childId, event: message(`fork at ${atVersion}`), metadata: { actor: testActor } });
    for (const atVersion of [0, 4, 1.5]) {
      expect(await rejection(fork(atVersion))).toMatchObject({
        code: "INVALID_INPUT",
        message: `cannot fork ${parent} at ${atVersion}: it has events 1..3`,
      });
    }
    expect(await fork(1)).toMatchObject({ version: 2 });
    const child = uniqueId();
    expect(await fork(3, child)).toMatchObject({ version: 4 });
    expect(await rejection(fork(2, child))).toMatchObject({ code: "CONFLICT", message: `stream ${child} already exists` });
    expect(await rejection(fork(1, uniqueId(), "s-no-parent"))).toMatchObject({
      code: "NOT_FOUND",
      message: "cannot fork: stream s-no-parent does not exist",
    });
  });

  it("an application projection is handed only appends with events it handles", async () => {
    const batches: string[][] = [];
    const pool = createPool(db.url, 1);
    try {
      const store = new EventStore(pool, {
        registry: appRegistry,
        projections: [
          {
            name: "listening",
            handles: ["OperatorMessagePosted"],
            tables: [],
            apply: async (_tx, events) => void batches.push(events.map((e) => e.type)),
          },
        ],
      });
      const id = uniqueId();
      await store.append(id, "no_stream", [created()], { actor: testActor });
      await store.append(id, 1, [message("heard")], { actor: testActor });
      expect(batches).toEqual([["OperatorMessagePosted"]]);
    } finally {
      await pool.end();
    }
  });
});

/** Counts events and remembers the versions it saw. */
const counting: StreamFold<{ count: number; versions: number[] }> = {
  name: "edges-count",
  version: 1,
  initial: { count: 0, versions: [] },
  evolve: (s, e) => ({ count: s.count + 1, versions: [...s.versions, e.version] }),
};

describe("replay snapshots", () => {
  const deps = () => ({ pool: db.pool, registry: appRegistry });
  const kept = async (streamId: string) =>
    (
      await db.pool.query<{ version: number }>("SELECT version FROM stream_snapshots WHERE stream_id = $1 AND fold = $2 ORDER BY version", [
        streamId,
        snapshotKey(counting, appRegistry),
      ])
    ).rows.map((r) => r.version);

  it("keeps the state at every multiple of `every` it passed, starts from the nearest one at or below, and keeps none at 0", async () => {
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created(), ...Array.from({ length: 6 }, (_, i) => message(`m${i}`))], { actor: testActor });
    expect(await foldStreamAt(deps(), counting, id, 2, { every: 3 })).toEqual({ count: 2, versions: [1, 2] });
    expect(await kept(id)).toEqual([]);
    expect(await foldStreamAt(deps(), counting, id, 7, { every: 3 })).toEqual({ count: 7, versions: [1, 2, 3, 4, 5, 6, 7] });
    expect(await kept(id)).toEqual([3, 6]);
    expect(await foldStreamAt(deps(), counting, id, 5, { every: 3 })).toMatchObject({ count: 5 });
    expect(await kept(id)).toEqual([3, 6]);
    // From the snapshot at 6: the state says so, as it was saved.
    await db.pool.query("UPDATE stream_snapshots SET state = $3::json WHERE stream_id = $1 AND fold = $2 AND version = 6", [
      id,
      snapshotKey(counting, appRegistry),
      JSON.stringify({ count: 600, versions: [6] }),
    ]);
    expect(await foldStreamAt(deps(), counting, id, 7, { every: 3 })).toEqual({ count: 601, versions: [6, 7] });
    expect(await foldStreamAt(deps(), counting, id, 7, { every: 3, snapshots: false })).toMatchObject({ count: 7 });
  });

  it("a stream that does not exist is NOT_FOUND, by name; an existing one read past its end is empty", async () => {
    const err = await rejection(foldStreamAt(deps(), counting, "s-missing-fold", 3));
    expect(err).toMatchObject({ code: "NOT_FOUND", message: "stream s-missing-fold does not exist" });
    const viaStore = await rejection(db.store.stateAt("s-missing-fold", 3, counting));
    expect(viaStore).toMatchObject({ code: "NOT_FOUND" });
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created()], { actor: testActor });
    expect(await readFoldEvents(deps(), id, 2, 9)).toEqual([]);
  });

  it("a snapshot that cannot be kept is logged and the fold still answers; a fold that passes no snapshot version logs nothing", async () => {
    // A BigInt has no JSON form: the state folds, but its snapshot cannot be written.
    const unkeepable: StreamFold<{ total: bigint }> = {
      name: "edges-unkeepable",
      version: 1,
      initial: { total: 0n },
      evolve: (s) => ({ total: s.total + 1n }),
    };
    const warn = vi.spyOn(logger, "warn").mockImplementation(() => undefined);
    try {
      const id = uniqueId();
      await db.store.append(id, "no_stream", [created(), message("a"), message("b"), message("c")], { actor: testActor });
      expect(await foldStreamAt(deps(), unkeepable, id, 2, { every: 3 })).toEqual({ total: 2n });
      expect(warn).not.toHaveBeenCalled();
      expect(await foldStreamAt(deps(), unkeepable, id, 4, { every: 3 })).toEqual({ total: 4n });
      expect(warn.mock.calls).toEqual([[{ err: expect.any(TypeError), streamId: id, versions: [3] }, "could not keep replay snapshots"]]);
    } finally {
      warn.mockRestore();
    }
  });
});

describe("timelines", () => {
  it("a session that does not exist is NOT_FOUND; an existing one's timeline is its entries", async () => {
    const err = await rejection(readSessionTimeline(db.pool, "s-missing-timeline"));
    expect(err).toMatchObject({ code: "NOT_FOUND", message: "no session s-missing-timeline" });
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created(), message("hello")], { actor: testActor });
    expect((await readSessionTimeline(db.pool, id)).map((e) => [e.version, e.type])).toEqual([
      [1, "SessionCreated"],
      [2, "OperatorMessagePosted"],
    ]);
    expect((await readSessionTimeline(db.pool, id, { afterVersion: 1, limit: 5 })).map((e) => e.version)).toEqual([2]);
  });

  it("a page is 100 entries unless its limit is given", async () => {
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created(), ...Array.from({ length: 100 }, (_, i) => message(`m${i}`))], { actor: testActor });
    const page = await readSessionTimeline(db.pool, id);
    expect(page.map((e) => e.version)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect((await readSessionTimeline(db.pool, id, { afterVersion: 99, limit: 1 })).map((e) => e.version)).toEqual([100]);
    expect((await readSessionTimeline(db.pool, id, { afterVersion: 100 })).map((e) => e.version)).toEqual([101]);
  });
});

describe("blob collection", () => {
  it("one collector at a time: while another holds the collector's lock, nothing is collected; then the unreferenced blob goes", async () => {
    const orphan = await putBlob(db.pool, `orphan ${uniqueId()}`);
    const other = await db.pool.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock(hashtextextended('catcafe-blob-collector', 0))");
      expect(await collectUnreferencedBlobs(db.pool, { graceMs: 0 })).toBe(0);
      await other.query("COMMIT");
    } finally {
      other.release();
    }
    const exists = async () => (await db.pool.query("SELECT 1 FROM blobs WHERE hash = $1", [orphan.blob])).rowCount;
    expect(await exists()).toBe(1);
    expect(await collectUnreferencedBlobs(db.pool, { graceMs: 0 })).toBeGreaterThanOrEqual(1);
    expect(await exists()).toBe(0);
  });

  it("collects at most `limit` blobs per call", async () => {
    await collectUnreferencedBlobs(db.pool, { graceMs: 0 }); // whatever earlier tests left
    await putBlob(db.pool, `orphan ${uniqueId()}`);
    await putBlob(db.pool, `orphan ${uniqueId()}`);
    expect(await collectUnreferencedBlobs(db.pool, { graceMs: 0, limit: 1 })).toBe(1);
    expect(await collectUnreferencedBlobs(db.pool, { graceMs: 0, limit: 1 })).toBe(1);
    expect(await collectUnreferencedBlobs(db.pool, { graceMs: 0, limit: 1 })).toBe(0);
  });
});

describe("rebuildAndCompare", () => {
  it("rebuilds every projection from the events and names the tables whose rows it changed", async () => {
    const id = uniqueId();
    await db.store.append(id, "no_stream", [created("as recorded")], { actor: testActor });
    // This file's other streams were not all written through the app's projections (one used a
    // store of its own): the first rebuild brings the tables in line with every event.
    await rebuildAndCompare(db.store);
    const clean = await rebuildAndCompare(db.store);
    expect(clean.changedTables).toEqual([]);
    expect(clean.tables).toContain("sessions");
    const total = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events");
    expect(clean.events).toBe(total.rows[0]!.n);

    await db.pool.query("UPDATE sessions SET title = 'tampered' WHERE id = $1", [id]);
    const mended = await rebuildAndCompare(db.store);
    expect(mended.changedTables).toEqual(["sessions"]);
    const title = await db.pool.query<{ title: string }>("SELECT title FROM sessions WHERE id = $1", [id]);
    expect(title.rows[0]!.title).toBe("as recorded");
  });

  it("compares under its own lock: sessions appended all the while (as runners do) are not reported as changes", async () => {
    await rebuildAndCompare(db.store); // this file's other streams, as above
    let writing = true;
    let appended = 0;
    // Three writers, each creating sessions and posting to them through the app's store, so
    // that the sessions projection changes between any two moments the rebuild does not hold.
    const writers = Array.from({ length: 3 }, async () => {
      while (writing) {
        const id = uniqueId();
        await db.store.append(id, "no_stream", [created("while rebuilding")], { actor: testActor });
        await db.store.append(id, 1, [message("still going")], { actor: testActor });
        appended++;
      }
    });
    try {
      for (let run = 0; run < 3; run++) {
        const before = appended;
        const report = await rebuildAndCompare(db.store);
        expect(report.changedTables, `run ${run + 1}`).toEqual([]);
        // Appends went on around this run (and waited for it while it held the lock).
        await vi.waitFor(() => expect(appended).toBeGreaterThan(before + 3), { timeout: 5_000 });
      }
    } finally {
      writing = false;
      await Promise.all(writers);
    }
    expect((await rebuildAndCompare(db.store)).changedTables).toEqual([]);
  });
});

describe("rebuilds of a projection of this file's own", () => {
  // Messages per stream, and the version each stream's messages began at; `seen_by` and
  // `seen_at` are set by readers and held by no event (as a step's heartbeat-extended lease).
  const counts: Projection = {
    name: "edges-counts",
    handles: ["OperatorMessagePosted"],
    tables: ["edges_counts", "edges_began"],
    operationalColumns: { edges_counts: ["seen_by", "seen_at"] },
    async apply(tx: Tx, events) {
      for (const e of events.filter((e) => e.type === "OperatorMessagePosted")) {
        await tx.query(
          "INSERT INTO edges_counts (id, messages) VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET messages = edges_counts.messages + 1",
          [e.streamId],
        );
        await tx.query("INSERT INTO edges_began (id, version) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", [e.streamId, e.version]);
      }
    },
  };
  const store = () => new EventStore(db.pool, { registry: appRegistry, projections: [counts] });
  const row = async (id: string) =>
    (await db.pool.query("SELECT messages, seen_by, seen_at FROM edges_counts WHERE id = $1", [id])).rows[0] as unknown;

  beforeAll(async () => {
    await db.pool.query("CREATE TABLE edges_counts (id text PRIMARY KEY, messages int NOT NULL, seen_by text, seen_at timestamptz)");
    await db.pool.query("CREATE TABLE edges_began (id text PRIMARY KEY, version int NOT NULL)");
  });

  it("keeps the live values of the columns it names operational, row by row, and derives the rest again", async () => {
    const id = uniqueId();
    const other = uniqueId();
    for (const stream of [id, other])
      await store().append(stream, "no_stream", [created(), message("a"), message("b")], { actor: testActor });
    const seenAt = new Date("2026-11-20T10:00:00.000Z");
    await db.pool.query("UPDATE edges_counts SET seen_by = 'reader', seen_at = $2, messages = 99 WHERE id = $1", [id, seenAt]);
    const result = await rebuildProjections(store());
    expect(result.tables).toEqual(["edges_counts", "edges_began"]);
    expect(await row(id)).toEqual({ messages: 2, seen_by: "reader", seen_at: seenAt });
    expect(await row(other)).toEqual({ messages: 2, seen_by: null, seen_at: null });
  });

  it("rebuildAndCompare names the tables it changed, sorted, leaves operational columns out, and times itself", async () => {
    const id = uniqueId();
    await store().append(id, "no_stream", [created(), message("a")], { actor: testActor });
    await rebuildProjections(store()); // this file's other streams, appended without this projection
    await db.pool.query("UPDATE edges_counts SET seen_by = 'someone else' WHERE id = $1", [id]);
    expect((await rebuildAndCompare(store())).changedTables).toEqual([]);
    await db.pool.query("UPDATE edges_counts SET messages = 7 WHERE id = $1", [id]);
    await db.pool.query("UPDATE edges_began SET version = 7 WHERE id = $1", [id]);
    const startedAt = performance.now();
    const report = await rebuildAndCompare(store());
    const took = performance.now() - startedAt;
    expect(report.changedTables).toEqual(["edges_began", "edges_counts"]);
    expect(report.tables).toEqual(["edges_counts", "edges_began"]);
    expect(report.durationMs).toBeGreaterThanOrEqual(0);
    expect(report.durationMs).toBeLessThanOrEqual(Math.ceil(took));
  });

  it("an append waits for a running rebuild (here of a projection that owns no table) to commit, and the rebuild sees none of it", async () => {
    let inside!: () => void;
    const reached = new Promise<void>((resolve) => (inside = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding: Projection = {
      name: "holding",
      handles: [],
      tables: [],
      async apply() {
        inside();
        await held;
      },
    };
    const store = new EventStore(db.pool, { registry: appRegistry, projections: [holding] });
    const id = uniqueId();
    await store.append(id, "no_stream", [created()], { actor: testActor });
    const total = (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events")).rows[0]!.n;
    const rebuilding = rebuildProjections(store);
    let settled = false;
    let waitingOn: string | undefined;
    let appending: Promise<unknown> | undefined;
    try {
      await Promise.race([reached, rebuilding]);
      appending = store.append(id, 1, [message("during the rebuild")], { actor: testActor }).finally(() => (settled = true));
      // Polled until the append is seen waiting, or has settled (it must not).
      while (!settled && !waitingOn) {
        const r = await db.pool.query<{ rel: string }>(
          `SELECT l.relation::regclass::text AS rel FROM pg_locks l JOIN pg_stat_activity a USING (pid)
           WHERE NOT l.granted AND a.datname = current_database()`,
        );
        waitingOn = r.rows[0]?.rel;
        if (!waitingOn) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      release();
    }
    expect(settled).toBe(false);
    expect(waitingOn).toBe("streams");
    expect(await rebuilding).toEqual({ events: total, tables: [] });
    expect(await appending).toMatchObject({ version: 2, duplicate: false });
  });
});
