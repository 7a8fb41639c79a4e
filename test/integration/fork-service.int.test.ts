// The fork service (server/events/forks.ts), with a fold of the test's own: a position must be
// one of the parent's (NOT_FOUND for no parent; INVALID_INPUT naming the positions it has
// otherwise, nothing created); the first hook decides what the child starts from, and a
// refusal there creates nothing; SessionForked, what is recorded first and the continuation
// are folded and appended at the versions they take in the child, in one transaction; the
// parent is unchanged.
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "../../server/errors";
import { eventCatalog } from "../../server/events/catalog";
import { forkStream, type ForkRequest } from "../../server/events/forks";
import { defineEvent, EventRegistry } from "../../server/events/registry";
import { foldStreamAt, LATEST_VERSION } from "../../server/events/fold-read";
import { SNAPSHOT_EVERY, type StreamFold } from "../../server/events/snapshots";
import { EventStore } from "../../server/events/store";
import { createTestDatabase, rejection, testActor, uniqueId, type TestDatabase } from "../helpers/db";

const registry = new EventRegistry({
  SessionForked: eventCatalog.SessionForked,
  Noted: defineEvent({ version: 1, schema: z.object({ n: z.number().int() }) }),
});
/** What the fold saw: each event's version and type. */
const seen: StreamFold<string[]> = { name: "seen", version: 1, initial: [], evolve: (s, e) => [...s, `${e.version}:${e.type}`] };
const noted = (n: number) => ({ type: "Noted", data: { n } });

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = new EventStore(db.pool, { registry });
});

async function parent(events: number): Promise<string> {
  const id = uniqueId("parent");
  await store.append(
    id,
    "no_stream",
    Array.from({ length: events }, (_, i) => noted(i + 1)),
    { actor: testActor },
  );
  return id;
}

function request(parentId: string, atVersion: number, overrides: Partial<ForkRequest<string[], string[]>> = {}) {
  return {
    fold: seen,
    parentId,
    atVersion,
    childId: uniqueId("child"),
    startsFrom: (inherited: string[]) => inherited,
    forked: () => ({ reason: "manual" as const, title: "T (fork)", workflow: "test", state: "open" }),
    continuation: () => [],
    ...overrides,
  };
}

describe("the fork service", () => {
  it("folds SessionForked, what comes first and the continuation at the versions they take in the child, and appends them together", async () => {
    const parentId = await parent(5);
    let continued: { state: string[]; from: string[]; version: number } | undefined;
    const forked = await forkStream(
      store,
      request(parentId, 3, {
        first: (from) => [noted(from.length * 10)],
        continuation: (state, from, at) => {
          continued = { state, from, version: at.version };
          return [noted(99)];
        },
      }),
      { actor: testActor },
    );
    expect(forked).toMatchObject({ parentId, atVersion: 3, version: 6 });
    expect(continued).toEqual({
      from: ["1:Noted", "2:Noted", "3:Noted"],
      state: ["1:Noted", "2:Noted", "3:Noted", "4:SessionForked", "5:Noted"],
      version: 5,
    });
    const child = await store.readStream(forked.sessionId);
    expect(child.map((e) => `${e.version}:${e.type}`)).toEqual(["1:Noted", "2:Noted", "3:Noted", "4:SessionForked", "5:Noted", "6:Noted"]);
    expect(child.slice(3).map((e) => e.data)).toEqual([
      { parentId, atVersion: 3, reason: "manual", title: "T (fork)", workflow: "test", state: "open" },
      { n: 30 },
      { n: 99 },
    ]);
    expect(new Set(child.slice(3).map((e) => e.txId)).size).toBe(1);
    expect(await store.streamVersion(parentId)).toBe(5);
  });

  it("a position the parent does not have is refused with the positions it has, and a missing parent is NOT_FOUND; nothing is created", async () => {
    const parentId = await parent(2);
    for (const at of [0, -1, 1.5, 3]) {
      const req = request(parentId, at);
      expect(await rejection(forkStream(store, req, { actor: testActor }))).toMatchObject({
        code: "INVALID_INPUT",
        message: `session ${parentId} has events 1..2: there is no event ${at} to fork at`,
        // What a form shows beside its field.
        details: { atVersion: at, head: 2, fieldErrors: { atVersion: ["between 1 and 2"] } },
      });
      expect(await store.streamVersion(req.childId)).toBeNull();
    }
    const missing = uniqueId("nobody");
    expect(await rejection(forkStream(store, request(missing, 1), { actor: testActor }))).toMatchObject({
      code: "NOT_FOUND",
      message: `no session ${missing}`,
      details: { sessionId: missing },
    });
  });

  it("the kind's refusal of a position (its first hook) creates nothing", async () => {
    const parentId = await parent(3);
    const req = request(parentId, 2, {
      startsFrom: () => {
        throw new AppError("CONFLICT", "inside a step still running");
      },
    });
    expect((await rejection(forkStream(store, req, { actor: testActor }))).message).toBe("inside a step still running");
    expect(await store.streamVersion(req.childId)).toBeNull();
  });
});

describe("a fork in the middle of a long stream", () => {
  it("starts from the snapshot a read of the head left below it: nothing before it is folded again, and its state is the full fold's", async () => {
    let calls = 0;
    const counted: StreamFold<{ n: number; last: number }> = {
      name: "fork-counted",
      version: 1,
      initial: { n: 0, last: 0 },
      evolve: (s, e) => {
        calls++;
        return e.type === "Noted" ? { n: s.n + 1, last: (e.data as { n: number }).n } : s;
      },
    };
    const id = await parent(2 * SNAPSHOT_EVERY + 500);
    // A person opens the session (its head read), then forks it at its middle.
    expect(await store.stateAt(id, LATEST_VERSION, counted)).toEqual({ n: 2500, last: 2500 });
    const kept = await db.pool.query<{ version: number }>("SELECT version FROM stream_snapshots WHERE stream_id = $1 ORDER BY version", [
      id,
    ]);
    expect(kept.rows.map((r) => r.version)).toEqual([1000, 2000, 2500]);
    calls = 0;
    let inherited: { n: number; last: number } | null = null;
    await forkStream(
      store,
      {
        fold: counted,
        parentId: id,
        atVersion: SNAPSHOT_EVERY,
        childId: uniqueId("child"),
        startsFrom: (s) => (inherited = s),
        forked: () => ({ reason: "manual", title: "T (fork)", workflow: "test", state: "open" }),
        continuation: () => [],
      },
      { actor: testActor },
    );
    // The head read kept 1,000 as well as 2,000 (one snapshot per read would have left only 2,000).
    expect(calls).toBe(1); // SessionForked only, folded onto the snapshot at 1,000
    expect(inherited).toEqual({ n: 1000, last: 1000 });
    expect(inherited).toEqual(await foldStreamAt({ pool: db.pool, registry }, counted, id, SNAPSHOT_EVERY, { snapshots: false }));
  });
});
