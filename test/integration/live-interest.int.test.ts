// The web process's listener declares what it watches (live_interest), so appends ring only
// for streams someone has open: a subscriber is woken by its stream's NOTIFY, nobody's
// append rings, and the rows go when the views close (docs/architecture.md).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_CHANGES, SessionEventsListener } from "../../server/sessions/view/listener";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let listener: SessionEventsListener;

beforeAll(async () => {
  db = await createTestDatabase();
  listener = new SessionEventsListener(() => new pg.Client({ connectionString: db.url }));
});
afterAll(async () => {
  await listener.close();
});

async function newSession(): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "watched", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

const message = (text: string) => [{ type: "OperatorMessagePosted", data: { text } }];
const rowsOf = async (streamId: string) =>
  (await db.pool.query<{ listener_id: string }>("SELECT listener_id FROM live_interest WHERE stream_id = $1", [streamId])).rows.map(
    (r) => r.listener_id,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe("live interest", () => {
  it("a subscriber's stream is declared, woken by its own appends' NOTIFY, and forgotten when the last view closes", async () => {
    const watched = await newSession();
    const other = await newSession();
    let wakes = 0;
    const unsubscribe = await listener.subscribe(watched, () => wakes++);
    expect(await rowsOf(watched)).toEqual([listener.listenerId]);
    expect(await rowsOf(other)).toEqual([]);
    await sleep(400); // past the one extra wake after subscribing
    const settled = wakes;

    // Nobody watches `other`: its append rings nobody (the next wake is the watched one's).
    await db.store.append(other, "any", message("unwatched"), { actor: testActor });
    await db.store.append(watched, "any", message("watched"), { actor: testActor });
    await until("the watched stream's wake", () => wakes > settled);
    // The refresh is 20 s away: only the NOTIFY can have woken it, and only once.
    await sleep(100);
    expect(wakes).toBe(settled + 1);

    const second = await listener.subscribe(watched, () => {});
    unsubscribe();
    expect(await rowsOf(watched)).toEqual([listener.listenerId]); // another view still open
    second();
    // The delete is sent without waiting for it.
    for (let i = 0; i < 100 && (await rowsOf(watched)).length > 0; i++) await sleep(20);
    expect(await rowsOf(watched)).toEqual([]);
  });

  it("the inbox's key is woken by a change to a sessions row, not by appends that change none", async () => {
    const id = await newSession();
    await sleep(200); // its creation's doorbell (a sessions row inserted) has rung by now
    let wakes = 0;
    const unsubscribe = await listener.subscribe(SESSION_CHANGES, () => wakes++);
    await db.store.append(id, "any", message("no state change"), { actor: testActor });
    await db.store.append(id, "any", [{ type: "SessionStateChanged", data: { from: "open", to: "working", reason: "test" } }], {
      actor: testActor,
    });
    await until("the sessions doorbell", () => wakes > 0);
    await sleep(100);
    expect(wakes).toBe(1);
    unsubscribe();
  });

  it("its declarations commit without waiting for a flush, and are seen by every append once subscribe resolves", async () => {
    let connection: pg.Client | null = null;
    const own = new SessionEventsListener(() => (connection = new pg.Client({ connectionString: db.url })));
    try {
      const id = await newSession();
      let wakes = 0;
      await own.subscribe(id, () => wakes++);
      // Only interest rows are written on this connection (a crash loses them with it).
      expect((await connection!.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]!.synchronous_commit).toBe("off");
      expect(await rowsOf(id)).toEqual([own.listenerId]);
      const rung = await db.pool.query<{ rung: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM live_interest WHERE stream_id = $1 AND expires_at > now()) AS rung",
        [id],
      );
      expect(rung.rows[0]!.rung).toBe(true); // what an append's doorbell asks (server/events/store.ts)
      await db.store.append(id, "any", message("right after subscribing"), { actor: testActor });
      await until("the append's wake", () => wakes > 0);
    } finally {
      await own.close();
    }
  });

  it("closing the listener removes its rows; another process's expired rows are dropped by the next declaration", async () => {
    const other = new SessionEventsListener(() => new pg.Client({ connectionString: db.url }));
    const id = await newSession();
    await other.subscribe(id, () => {});
    expect(await rowsOf(id)).toEqual([other.listenerId]);
    await other.close();
    expect(await rowsOf(id)).toEqual([]);

    await db.pool.query("INSERT INTO live_interest (stream_id, listener_id, expires_at) VALUES ($1, 'gone', now() - interval '2 hours')", [
      id,
    ]);
    const unsubscribe = await listener.subscribe(await newSession(), () => {});
    expect(await rowsOf(id)).toEqual([]);
    unsubscribe();
  });
});
