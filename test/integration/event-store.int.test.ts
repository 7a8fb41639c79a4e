import crypto from "node:crypto";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { isAppError } from "../../server/errors";
import { withTransaction } from "../../server/db/pool";
import { defineEvent, EventRegistry } from "../../server/events/registry";
import { EventStore } from "../../server/events/store";
import { START_CHECKPOINT, type RecordedEvent } from "../../server/events/types";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

const message = (text: string) => ({ type: "OperatorMessagePosted", data: { text } });

async function newSession(title = "a session"): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title, workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

/** `parentId` forked at `atVersion` into a new stream (its SessionForked first); the child's id. */
async function forkAt(parentId: string, atVersion: number, reason: "rerun" | "revert", title: string): Promise<string> {
  const childId = uniqueId();
  await db.store.fork({
    parentId,
    atVersion,
    childId,
    event: { type: "SessionForked", data: { parentId, atVersion, reason, title, workflow: "test", state: "open" } },
    metadata: { actor: testActor },
  });
  return childId;
}

describe("append and read", () => {
  it("records events with versions, positions and full metadata", async () => {
    const id = await newSession();
    const res = await db.store.append(id, 1, [message("one"), message("two")], {
      actor: testActor,
      correlationId: "corr-1",
      causationId: "cause-1",
    });
    expect(res.version).toBe(3);
    const events = await db.store.readStream(id);
    expect(events.map((e) => [e.version, e.type])).toEqual([
      [1, "SessionCreated"],
      [2, "OperatorMessagePosted"],
      [3, "OperatorMessagePosted"],
    ]);
    expect(events[1]!.data).toEqual({ text: "one" });
    expect(events[1]!.metadata).toEqual({ actor: testActor, correlationId: "corr-1", causationId: "cause-1", schemaVersion: 1 });
    expect(events[2]!.position).toBeGreaterThan(events[1]!.position);
    const row = await db.pool.query("SELECT s.state, s.created_by, st.version FROM sessions s JOIN streams st USING (id) WHERE id = $1", [
      id,
    ]);
    expect(row.rows[0]).toEqual({ state: "open", version: 3, created_by: "user:tester" });
    const summaries = await db.pool.query("SELECT summary FROM events WHERE stream_id = $1 ORDER BY version", [id]);
    expect(summaries.rows.map((r) => r.summary)).toEqual(['Session "a session" created (test)', "Message: one", "Message: two"]);
  });

  it("stores metadata without what is empty or the default, and reads it back whole", async () => {
    const id = await newSession();
    await db.store.append(id, 1, [message("caused")], { actor: testActor, correlationId: "corr-2", causationId: "cause-2" });
    await db.store.append(id, 2, [message("two"), message("together")], { actor: testActor });
    const stored = await db.pool.query<{ event_id: string; metadata: Record<string, unknown> }>(
      "SELECT event_id, metadata FROM events WHERE stream_id = $1 ORDER BY version",
      [id],
    );
    const [alone, caused, first, second] = stored.rows.map((r) => r.metadata);
    // One event with no correlation, no causation and schema version 1: none of them is stored.
    expect(alone).toEqual({ actor: testActor });
    expect(caused).toEqual({ actor: testActor, correlationId: "corr-2", causationId: "cause-2" });
    // Events appended together share a correlation id, stored.
    expect(first).toEqual({ actor: testActor, correlationId: expect.any(String) });
    expect(second).toEqual(first);
    const events = await db.store.readStream(id);
    expect(events.map((e) => e.metadata)).toEqual([
      // Alone: its own id is its correlation id.
      { actor: testActor, correlationId: stored.rows[0]!.event_id, causationId: null, schemaVersion: 1 },
      { actor: testActor, correlationId: "corr-2", causationId: "cause-2", schemaVersion: 1 },
      { actor: testActor, correlationId: first!.correlationId, causationId: null, schemaVersion: 1 },
      { actor: testActor, correlationId: first!.correlationId, causationId: null, schemaVersion: 1 },
    ]);
  });

  it("50 concurrent appends at the same expected version: exactly one wins, 49 get CONFLICT", async () => {
    const id = await newSession();
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => db.store.append(id, 1, [message(`confirm ${i}`)], { actor: testActor })),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(49);
    for (const r of lost) {
      expect(isAppError(r.reason, "CONFLICT")).toBe(true);
      expect(String(r.reason.message)).toMatch(/already moved on/);
    }
    const events = await db.store.readStream(id);
    expect(events).toHaveLength(2);
  });

  it("a retried append with the same event ids is recorded once", async () => {
    const id = await newSession();
    const eventId = crypto.randomUUID();
    const first = await db.store.append(id, 1, [{ ...message("once"), eventId }], { actor: testActor });
    const retry = await db.store.append(id, 1, [{ ...message("once"), eventId }], { actor: testActor });
    expect(first.duplicate).toBe(false);
    expect(retry.duplicate).toBe(true);
    expect(retry.events[0]!.position).toBe(first.events[0]!.position);
    expect(await db.store.readStream(id)).toHaveLength(2);
  });

  it("rejects invalid data and unknown types, recording nothing", async () => {
    const id = await newSession();
    await expect(db.store.append(id, 1, [{ type: "OperatorMessagePosted", data: { text: 42 } }], { actor: testActor })).rejects.toThrow(
      /invalid OperatorMessagePosted event: text:/,
    );
    await expect(db.store.append(id, 1, [{ type: "NoSuchEvent", data: {} }], { actor: testActor })).rejects.toThrow(
      /unknown event type "NoSuchEvent"/,
    );
    expect(await db.store.readStream(id)).toHaveLength(1);
    expect(await db.store.streamVersion(id)).toBe(1);
  });

  it("appending to a missing stream with an expected version is NOT_FOUND; creating an existing one is CONFLICT", async () => {
    await expect(db.store.append(uniqueId(), 3, [message("x")], { actor: testActor })).rejects.toSatisfy((e) => isAppError(e, "NOT_FOUND"));
    const id = await newSession();
    await expect(db.store.append(id, "no_stream", [message("x")], { actor: testActor })).rejects.toSatisfy((e) =>
      isAppError(e, "CONFLICT"),
    );
  });

  it("the database refuses UPDATE, DELETE and TRUNCATE on events", async () => {
    const id = await newSession();
    await expect(db.pool.query("UPDATE events SET type = 'X' WHERE stream_id = $1", [id])).rejects.toThrow(/append-only: UPDATE/);
    await expect(db.pool.query("DELETE FROM events WHERE stream_id = $1", [id])).rejects.toThrow(/append-only: DELETE/);
    await expect(db.pool.query("TRUNCATE events")).rejects.toThrow(/append-only: TRUNCATE/);
    expect(await db.store.readStream(id)).toHaveLength(1);
  });

  /** Declares a live watch of `streamId`, as the web process's listener does. */
  const watch = (streamId: string) =>
    db.pool.query("INSERT INTO live_interest (stream_id, listener_id, expires_at) VALUES ($1, 'test', now() + interval '1 minute')", [
      streamId,
    ]);

  it("notifies listeners with a payload-free wake-up naming the stream after commit", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    await listener.query("LISTEN catcafe_events");
    const received = new Promise<string>((resolve) => listener.on("notification", (n) => resolve(n.payload ?? "")));
    const id = uniqueId();
    await watch(id);
    await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "watched", workflow: "test", state: "open" } }], {
      actor: testActor,
    });
    await expect(received).resolves.toBe(id);

    // After commit, not before: while the appending transaction is open nothing arrives, and
    // what arrives after it names a stream whose new event a reader can already see.
    const notes: Array<{ payload: string; visible: boolean }> = [];
    listener.on("notification", (n) => {
      void db.store
        .readStream(n.payload ?? "")
        .then((events) => notes.push({ payload: n.payload ?? "", visible: events.some((e) => e.type === "OperatorMessagePosted") }));
    });
    await withTransaction(db.pool, async (tx) => {
      await db.store.appendInTx(tx, id, "any", [message("after commit")], { actor: testActor });
      await new Promise((r) => setTimeout(r, 300));
      expect(notes).toEqual([]); // still uncommitted: no wake-up yet
    });
    const deadline = Date.now() + 5_000;
    while (notes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(notes).toEqual([{ payload: id, visible: true }]);
    await listener.end();
  });

  it("rings only for watched streams: an append nobody watches sends no NOTIFY (and so never waits on its commit lock)", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    await listener.query("LISTEN catcafe_events");
    const payloads: string[] = [];
    listener.on("notification", (n) => payloads.push(n.payload ?? ""));
    const unwatched = await newSession("nobody watches");
    const watched = uniqueId();
    await watch(watched);
    await db.store.append(unwatched, "any", [message("unseen")], { actor: testActor });
    await db.store.append(watched, "no_stream", [{ type: "SessionCreated", data: { title: "watched", workflow: "test", state: "open" } }], {
      actor: testActor,
    });
    // Notifications arrive in commit order: once the watched stream's is here, the unwatched
    // stream's two earlier commits would have been delivered before it.
    const deadline = Date.now() + 5_000;
    while (!payloads.includes(watched) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(payloads).toEqual([watched]);
    // An expired watch rings no more.
    await db.pool.query("UPDATE live_interest SET expires_at = now() - interval '1 second' WHERE stream_id = $1", [watched]);
    await db.store.append(watched, "any", [message("after expiry")], { actor: testActor });
    const marker = uniqueId();
    await watch(marker);
    await db.store.append(marker, "no_stream", [{ type: "SessionCreated", data: { title: "marker", workflow: "test", state: "open" } }], {
      actor: testActor,
    });
    while (!payloads.includes(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(payloads).toEqual([watched, marker]);
    await listener.end();
  });
});

describe("global order", () => {
  it("a reader racing 16 writers with random commit delays sees every event exactly once, in stream order", async () => {
    const writers = 16;
    const perWriter = 25;
    const streams = await Promise.all(Array.from({ length: writers }, () => newSession()));
    const start = await db.store.readAll(START_CHECKPOINT, 100_000);
    let checkpoint = start.checkpoint;
    const seen: RecordedEvent[] = [];
    let writing = true;
    const reader = (async () => {
      while (writing) {
        const page = await db.store.readAll(checkpoint, 50);
        seen.push(...page.events);
        checkpoint = page.checkpoint;
        await new Promise((r) => setTimeout(r, 2));
      }
      for (;;) {
        const page = await db.store.readAll(checkpoint, 500);
        if (page.events.length === 0) break;
        seen.push(...page.events);
        checkpoint = page.checkpoint;
      }
    })();
    const written: string[] = [];
    await Promise.all(
      streams.map(async (streamId, w) => {
        for (let i = 0; i < perWriter; i++) {
          const res = await withTransaction(db.pool, async (tx) => {
            const r = await db.store.appendInTx(tx, streamId, "any", [message(`w${w}-${i}`)], { actor: testActor });
            // Hold the transaction open so later positions commit first.
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
            return r;
          });
          written.push(res.events[0]!.eventId);
        }
      }),
    );
    writing = false;
    await reader;
    const ids = seen.filter((e) => streams.includes(e.streamId)).map((e) => e.eventId);
    expect(ids).toHaveLength(writers * perWriter);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(written));
    const lastVersion = new Map<string, number>();
    for (const e of seen) {
      expect(e.version).toBeGreaterThan(lastVersion.get(e.streamId) ?? 0);
      lastVersion.set(e.streamId, e.version);
    }
  });
});

describe("fork and replay", () => {
  it("a fork reads the parent up to the fork point, then its own events; the parent is unchanged", async () => {
    const parent = await newSession("parent");
    for (let i = 2; i <= 10; i++) await db.store.append(parent, i - 1, [message(`p${i}`)], { actor: testActor });
    const parentBefore = await db.store.readStream(parent);
    const child = await forkAt(parent, 5, "rerun", "child");
    await db.store.append(child, 6, [message("c7")], { actor: testActor });
    await db.store.append(parent, 10, [message("p11")], { actor: testActor });

    const childEvents = await db.store.readStream(child);
    expect(childEvents.map((e) => [e.streamId === parent ? "P" : "C", e.version])).toEqual([
      ["P", 1],
      ["P", 2],
      ["P", 3],
      ["P", 4],
      ["P", 5],
      ["C", 6],
      ["C", 7],
    ]);
    expect(childEvents[5]!.type).toBe("SessionForked");
    const parentAfter = await db.store.readStream(parent);
    expect(parentAfter.slice(0, 10)).toEqual(parentBefore);
    expect(parentAfter).toHaveLength(11);

    // A grandchild forked inside the inherited part reads the grandparent only up to there.
    const grandchild = await forkAt(child, 3, "revert", "gc");
    const gc = await db.store.readStream(grandchild);
    expect(gc.map((e) => [e.streamId === parent ? "P" : e.streamId === grandchild ? "G" : "C", e.version])).toEqual([
      ["P", 1],
      ["P", 2],
      ["P", 3],
      ["G", 4],
    ]);

    // Lineage both ways, from the sessions projection.
    const rows = await db.pool.query(
      "SELECT id, parent_id, fork_version FROM sessions WHERE id = ANY($1) ORDER BY fork_version NULLS FIRST",
      [[parent, child, grandchild]],
    );
    expect(rows.rows).toEqual([
      { id: parent, parent_id: null, fork_version: null },
      { id: grandchild, parent_id: child, fork_version: 3 },
      { id: child, parent_id: parent, fork_version: 5 },
    ]);
  });

  it("a read of some types only gives those, in order, through the fork's lineage; an existing stream with none is empty, a missing one NOT_FOUND", async () => {
    const parent = await newSession("parent");
    for (let i = 2; i <= 6; i++) await db.store.append(parent, i - 1, [message(`p${i}`)], { actor: testActor });
    const child = await forkAt(parent, 4, "rerun", "child");
    await db.store.append(child, 5, [message("c6")], { actor: testActor });
    const all = await db.store.readStream(child);
    const typed = await db.store.readStream(child, { types: ["OperatorMessagePosted", "SessionForked"] });
    expect(typed).toEqual(all.filter((e) => e.type === "OperatorMessagePosted" || e.type === "SessionForked"));
    expect(typed.map((e) => [e.streamId === parent ? "P" : "C", e.version, e.type])).toEqual([
      ["P", 2, "OperatorMessagePosted"],
      ["P", 3, "OperatorMessagePosted"],
      ["P", 4, "OperatorMessagePosted"],
      ["C", 5, "SessionForked"],
      ["C", 6, "OperatorMessagePosted"],
    ]);
    expect(await db.store.readStream(child, { types: ["SessionForked"], toVersion: 4 })).toEqual([]);
    expect(await db.store.readStream(child, { types: ["NoSuchType"] })).toEqual([]);
    await expect(db.store.readStream("s-never-written", { types: ["SessionForked"] })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("rejects a fork past the parent's end or of a missing parent", async () => {
    const parent = await newSession();
    const fork = (atVersion: number, parentId = parent) =>
      db.store.fork({
        parentId,
        atVersion,
        childId: uniqueId(),
        event: { type: "SessionForked", data: { parentId, atVersion, reason: "rerun", title: "c", workflow: "test", state: "open" } },
        metadata: { actor: testActor },
      });
    await expect(fork(2)).rejects.toThrow(/has events 1..1/);
    await expect(fork(1, "nope")).rejects.toSatisfy((e) => isAppError(e, "NOT_FOUND"));
  });

  it("stateAt replays exactly the events up to a position", async () => {
    const id = await newSession();
    for (let i = 1; i <= 5; i++) await db.store.append(id, i, [message(`m${i}`)], { actor: testActor });
    const texts = (s: string[], e: RecordedEvent) => (e.type === "OperatorMessagePosted" ? [...s, (e.data as { text: string }).text] : s);
    expect(await db.store.stateAt(id, 3, texts, [])).toEqual(["m1", "m2"]);
    expect(await db.store.stateAt(id, 6, texts, [])).toEqual(["m1", "m2", "m3", "m4", "m5"]);
  });
});

describe("upcasting", () => {
  it("reads events written under an older schema version through the upcasters", async () => {
    const registry = new EventRegistry({
      Greeted: defineEvent({
        version: 2,
        schema: z.object({ fullName: z.string() }),
        upcasters: { 1: (d) => ({ fullName: (d as { name: string }).name }) },
      }),
    });
    const store = new EventStore(db.pool, { registry });
    const id = uniqueId();
    await store.append(id, "no_stream", [{ type: "Greeted", data: { fullName: "New Style" } }], { actor: testActor });
    // An event as an older release wrote it, straight into the log.
    await db.pool.query("UPDATE streams SET version = 2 WHERE id = $1", [id]);
    await db.pool.query(
      `INSERT INTO events (event_id, stream_id, version, type, summary, data, metadata) VALUES ($1, $2, 2, 'Greeted', 'Greeted', $3, $4)`,
      [
        crypto.randomUUID(),
        id,
        JSON.stringify({ name: "Old Style" }),
        JSON.stringify({ actor: testActor, correlationId: "c", causationId: null, schemaVersion: 1 }),
      ],
    );
    const events = await store.readStream(id);
    expect(events.map((e) => e.data)).toEqual([{ fullName: "New Style" }, { fullName: "Old Style" }]);
    expect(events[0]!.metadata.schemaVersion).toBe(2);
  });
});
