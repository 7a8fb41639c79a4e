// A live session view's set-up runs its parts at once (the interest row, the status fold, the
// session's state, the credentials; docs/scaling.md, "First output and live paint"), and still
// misses nothing: events committed after its first read but before its interest row was
// committed ring nobody, and come with the read made once the row is in place; a burst that
// starts as a page connects arrives whole, each event once, in order; credentials refused
// during the set-up send nothing and leave no subscription behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../server/db/pool";
import { followSession, type LiveBatch } from "../../server/sessions/view/follow";
import { sessionEventsListener, type SessionEventsListener } from "../../server/sessions/view/listener";
import type { SessionViewDeps } from "../../server/sessions/view/load";
import { createApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let deps: SessionViewDeps;

beforeAll(async () => {
  db = await createTestDatabase();
  deps = createApiFixture(db).deps;
});

afterAll(async () => {
  await sessionEventsListener(db.pool).close();
});

async function newSession(): Promise<{ id: string; version: number }> {
  const id = uniqueId();
  const { version } = await db.store.append(
    id,
    "no_stream",
    [
      { type: "SessionCreated", data: { title: "followed", workflow: "test", state: "open" } },
      { type: "OperatorMessagePosted", data: { text: "before the page" } },
    ],
    { actor: testActor },
  );
  return { id, version };
}

/** Appends `n` messages, each in its own transaction, back to back (as a roundtable writes them); their versions. */
async function burst(id: string, n: number, label: string): Promise<number[]> {
  const versions: number[] = [];
  for (let i = 0; i < n; i++) {
    const { version } = await db.store.append(id, "any", [{ type: "OperatorMessagePosted", data: { text: `${label} ${i}` } }], {
      actor: testActor,
    });
    versions.push(version);
  }
  return versions;
}

/** The pool, telling when a fold's read of a stream's events has returned. */
function poolTellingFoldReads(onFoldRead: () => void): Db {
  return new Proxy(db.pool, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: unknown[]) => {
        const result = (await (target.query as (...a: unknown[]) => Promise<unknown>)(...args)) as unknown;
        if ((args[0] as { name?: string } | undefined)?.name === "catcafe_read_fold_events") onFoldRead();
        return result;
      };
    },
  });
}

/** The versions of the entries that came, `seen` first, reading batches until every one of `versions` has (or the time is up). */
async function entriesUntil(
  iterator: AsyncGenerator<LiveBatch>,
  versions: number[],
  seen: number[] = [],
  timeoutMs = 10_000,
): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  while (!versions.every((v) => seen.includes(v)) && Date.now() < deadline) {
    const next = await Promise.race([iterator.next(), new Promise<null>((r) => setTimeout(() => r(null), deadline - Date.now()))]);
    if (!next || next.done) break;
    seen.push(...next.value.entries.map((e) => e.version));
  }
  return seen;
}

describe("a live view's set-up", () => {
  it("delivers the events committed after its first read and before its interest row, with no wake from the listener", async () => {
    const { id, version } = await newSession();
    let foldRead: () => void = () => {};
    const folded = new Promise<void>((resolve) => (foldRead = resolve));
    const listener = sessionEventsListener(db.pool);
    let appended: number[] = [];
    // The interest row is written only after the fold has read and the burst is committed (so
    // the burst rang nobody), and the listener's wakes are not passed on: only the view's own
    // read once the row is in place can bring the burst.
    const slowListener = {
      subscribe: async (streamId: string) => {
        await folded;
        appended = await burst(streamId, 5, "during the set-up");
        return listener.subscribe(streamId, () => {});
      },
    } as unknown as SessionEventsListener;
    const controller = new AbortController();
    const iterator = followSession({ ...deps, pool: poolTellingFoldReads(foldRead) }, slowListener, id, version, controller.signal);
    const first = await iterator.next();
    expect(first.value).toMatchObject({ version, entries: [] });
    expect(appended).toHaveLength(5);
    const seen = await entriesUntil(iterator, appended);
    controller.abort();
    await iterator.return(undefined);
    expect(seen).toEqual(appended);
  });

  it("delivers an append that was under way when its interest row was committed, with no wake from the listener", async () => {
    const { id, version } = await newSession();
    const listener = sessionEventsListener(db.pool);
    const quietListener = {
      subscribe: (streamId: string) => listener.subscribe(streamId, () => {}),
    } as unknown as SessionEventsListener;
    // An append whose statement ran before anyone watched the stream (it rang nobody), committed
    // only after the view's set-up and its first extra read are done.
    const tx = await db.pool.connect();
    try {
      await tx.query("BEGIN");
      const { version: pending } = await db.store.appendInTx(
        tx,
        id,
        "any",
        [{ type: "OperatorMessagePosted", data: { text: "under way" } }],
        {
          actor: testActor,
        },
      );
      const controller = new AbortController();
      const iterator = followSession(deps, quietListener, id, version, controller.signal);
      expect((await iterator.next()).value).toMatchObject({ version, entries: [] });
      await new Promise((r) => setTimeout(r, 300));
      await tx.query("COMMIT");
      const seen = await entriesUntil(iterator, [pending]);
      controller.abort();
      await iterator.return(undefined);
      expect(seen).toEqual([pending]);
    } finally {
      await tx.query("ROLLBACK").catch(() => {}); // nothing left open when an expectation failed
      tx.release();
    }
  });

  it("delivers a burst that starts as the view connects whole, each event once, in order, with the status at its end", async () => {
    const { id, version } = await newSession();
    const controller = new AbortController();
    const iterator = followSession(deps, sessionEventsListener(db.pool), id, version, controller.signal);
    const batches: LiveBatch[] = [];
    const [during] = await Promise.all([burst(id, 5, "as it connects"), iterator.next().then((r) => batches.push(r.value as LiveBatch))]);
    const after = await burst(id, 3, "afterwards");
    const seen = await entriesUntil(
      iterator,
      [...during, ...after],
      batches[0]!.entries.map((e) => e.version),
    );
    controller.abort();
    await iterator.return(undefined);
    expect(seen).toEqual([...during, ...after]);
    expect(seen).toEqual(Array.from({ length: 8 }, (_, i) => version + 1 + i));
  });

  it("sends nothing when the credentials are refused during the set-up, and leaves no subscription behind", async () => {
    const { id, version } = await newSession();
    const listener = sessionEventsListener(db.pool);
    const iterator = followSession(deps, listener, id, version, undefined, {
      admit: () => Promise.reject(new Error("the credentials of this stream are no longer valid")),
    });
    await expect(iterator.next()).rejects.toThrow("no longer valid");
    expect(listener.watchedStreams).not.toContain(id);
  });
});
