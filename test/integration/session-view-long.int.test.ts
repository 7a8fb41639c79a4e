// A long session's page reads neither its whole stream nor folds every event (docs/scaling.md,
// "Long sessions"): the status comes from the progress fold's nearest snapshot (kept small: no
// conversation thread) and the events after it, the entries from the stream's tail. What the page shows is the same as what the
// whole history read and folded gives: the status, the latest page of entries and how many
// events come before it, for a session and for a fork of it (its reason included); the live
// updates' first batch sends what the client lacks, nothing more.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { longTaskSession } from "../../bench/lib/task-fixtures";
import { foldStream, LATEST_VERSION } from "../../server/events/fold-read";
import { snapshotKey } from "../../server/events/snapshots";
import type { EventStore } from "../../server/events/store";
import { toSessionEntry } from "../../server/sessions/view/entries";
import { followSession, type LiveBatch } from "../../server/sessions/view/follow";
import { sessionEventsListener } from "../../server/sessions/view/listener";
import { loadOlderEntries, loadSessionView, type SessionViewDeps } from "../../server/sessions/view/load";
import { lastPage, PAGE_ENTRY_LIMIT } from "../../server/sessions/view/pages";
import { foldProgress, progressFold, statusOf } from "../../server/sessions/view/progress";
import { createApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let deps: SessionViewDeps;
let sessionId: string;
const LENGTH = 2600;

beforeAll(async () => {
  db = await createTestDatabase();
  deps = createApiFixture(db).deps;
  sessionId = await longTaskSession(db.store, testActor, LENGTH);
}, 120_000);

afterAll(async () => {
  await sessionEventsListener(db.pool).close();
});

/** The reference: every event read whole and folded, the last page cut from all of them. */
async function fromTheWholeHistory(id: string, limit: number) {
  const events = await db.store.readStream(id);
  const session = await deps.prisma.session.findUniqueOrThrow({ where: { id }, select: { state: true } });
  const status = statusOf(foldProgress(events), session.state);
  const page = lastPage(events, limit, status.status === "active" ? (status.step?.id ?? null) : null);
  const summarize = (type: string, data: unknown) => db.store.registry.summarize(type, data);
  return {
    status,
    versions: page.shown.map((e) => e.version),
    entries: page.shown.map((e) => toSessionEntry(e, summarize)),
    omitted: page.earlier,
  };
}

/** The store, with every readStream range it is asked for recorded. */
function recordingStore(ranges: Array<[number, number]>): EventStore {
  return new Proxy(db.store, {
    get(target, prop, receiver) {
      if (prop !== "readStream") return Reflect.get(target, prop, receiver) as unknown;
      return (id: string, options: { fromVersion?: number; toVersion?: number } = {}) => {
        ranges.push([options.fromVersion ?? 1, options.toVersion ?? LATEST_VERSION]);
        return target.readStream(id, options);
      };
    },
  });
}

async function progressSnapshots(id: string): Promise<number[]> {
  const r = await db.pool.query<{ version: number }>(
    "SELECT version FROM stream_snapshots WHERE stream_id = $1 AND fold = $2 ORDER BY version",
    [id, snapshotKey(progressFold, db.store.registry)],
  );
  return r.rows.map((row) => row.version);
}

describe("the first view of a long session", () => {
  it("is what the whole history gives, without a snapshot and from one, for the first page's limits", async () => {
    await db.pool.query("DELETE FROM stream_snapshots WHERE stream_id = $1", [sessionId]);
    for (const limit of [PAGE_ENTRY_LIMIT, 1000]) {
      const reference = await fromTheWholeHistory(sessionId, limit);
      for (const round of ["first", "again"]) {
        const view = await loadSessionView(deps, sessionId, { limit });
        expect(view.status, `${round}, limit ${limit}`).toEqual(reference.status);
        expect(view.entries.map((e) => e.version)).toEqual(reference.versions);
        expect(view.entries).toEqual(reference.entries);
        expect(view.omitted).toBe(reference.omitted);
      }
    }
    // Every snapshot version the first read folded past, and the head's state (server/events/fold-read.ts).
    expect(await progressSnapshots(sessionId)).toEqual([1000, 2000, 2600]);
    // The conversation thread stays out of it (the view never shows it): a snapshot of a few KB,
    // not one that grows with every message.
    const size = await db.pool.query<{ bytes: number }>(
      "SELECT max(length(state::text)) AS bytes FROM stream_snapshots WHERE stream_id = $1 AND fold = $2",
      [sessionId, snapshotKey(progressFold, db.store.registry)],
    );
    expect(size.rows[0]!.bytes).toBeLessThan(10_000);
    // The snapshot is what folding every event up to it gives.
    const atSnapshot = await foldStream({ pool: db.pool, registry: db.store.registry }, progressFold, sessionId, 2000, {
      snapshots: false,
    });
    expect(atSnapshot.state).toEqual(foldProgress(await db.store.readStream(sessionId, { toVersion: 2000 })));
  });

  it("reads only the stream's tail, never from its first event", async () => {
    const ranges: Array<[number, number]> = [];
    const view = await loadSessionView({ ...deps, store: recordingStore(ranges) }, sessionId, { limit: PAGE_ENTRY_LIMIT });
    expect(view.status.version).toBe(LENGTH);
    expect(ranges.length).toBeGreaterThan(0);
    for (const [from, to] of ranges) {
      expect(from).toBeGreaterThan(LENGTH - 4 * PAGE_ENTRY_LIMIT);
      expect(to).toBeLessThanOrEqual(LENGTH);
    }
  });

  it("pages back to the first event through Load older, each event once", async () => {
    const view = await loadSessionView(deps, sessionId, { limit: PAGE_ENTRY_LIMIT });
    const seen = view.entries.map((e) => e.version);
    let before = seen[0]!;
    for (let omitted = view.omitted; omitted > 0;) {
      const page = await loadOlderEntries(deps, sessionId, before, 500);
      seen.unshift(...page.entries.map((e) => e.version));
      omitted = page.omitted;
      before = page.entries[0]!.version;
    }
    const all = await db.store.readStream(sessionId);
    // Finished steps' streamed chunks are left out; every other event is shown once, in order.
    expect(seen).toEqual(all.filter((e) => e.type !== "AgentOutputStreamed").map((e) => e.version));
  });

  it("of a fork is its own: the inherited history and its own events, and why it was made", async () => {
    const childId = uniqueId("s-fork");
    await db.store.fork({
      parentId: sessionId,
      atVersion: 1500,
      childId,
      event: {
        type: "SessionForked",
        data: {
          parentId: sessionId,
          atVersion: 1500,
          reason: "revert",
          title: "Back to round 150",
          workflow: "review_loop",
          state: "building",
        },
      },
      metadata: { actor: testActor },
    });
    for (const round of ["first", "again"]) {
      const view = await loadSessionView(deps, childId, { limit: PAGE_ENTRY_LIMIT });
      const reference = await fromTheWholeHistory(childId, PAGE_ENTRY_LIMIT);
      expect(view.status, round).toEqual(reference.status);
      expect(view.entries).toEqual(reference.entries);
      expect(view.omitted).toBe(reference.omitted);
      expect(view.status.version).toBe(1501);
      expect(view.header.parent).toMatchObject({ id: sessionId, atVersion: 1500, reason: "revert" });
    }
  });
});

describe("the live updates' first batch", () => {
  async function firstBatch(afterVersion: number): Promise<LiveBatch> {
    const controller = new AbortController();
    const iterator = followSession(deps, sessionEventsListener(db.pool), sessionId, afterVersion, controller.signal);
    const first = await iterator.next();
    controller.abort();
    await iterator.return(undefined);
    return first.value as LiveBatch;
  }

  it("sends the events after the client's version with the status of the whole history", async () => {
    const { status } = await fromTheWholeHistory(sessionId, PAGE_ENTRY_LIMIT);
    const caughtUp = await firstBatch(LENGTH);
    expect(caughtUp).toMatchObject({ version: LENGTH, entries: [] });
    expect(caughtUp.status).toEqual(status);
    const behind = await firstBatch(LENGTH - 25);
    expect(behind.entries.map((e) => e.version)).toEqual(Array.from({ length: 25 }, (_, i) => LENGTH - 24 + i));
    expect(behind.status).toEqual(status);
  });
});
