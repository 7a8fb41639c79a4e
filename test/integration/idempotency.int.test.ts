// Repeating a command (server/api/idempotency.ts): one effect and one answer per
// `Idempotency-Key`, over tRPC and REST, whether the repeat comes after the first request or
// while it is carried out; the same key with another request refused (422); the key's row
// noting what the command recorded, in the transaction of its events; a key let go when the
// server failed before doing anything, taken over when its holder is gone with nothing
// recorded, and forgotten after its lifetime.
import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { ABANDONED_AFTER_MS, idempotent, IN_FLIGHT_WAIT_MS, KEY_LIFETIME_HOURS } from "../../server/api/idempotency";
import { createTaskRestHandlers } from "../../server/api/rest";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, rejection, type TestDatabase } from "../helpers/db";
import { createHarness, sessionsPrompted } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let operator: CurrentUser;
let token: string;
let projectId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  operator = await api.user("operator");
  token = (await api.caller(operator).tokens.create({ name: "keys" })).token;
  projectId = await createHarness(db).project("keys", { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }] });
});

const newKey = () => crypto.randomUUID();

/** A tRPC mutation over HTTP with the operator's token and `key`: status, body text, whether it was a replay. */
async function trpc(path: string, input: unknown, key: string | null) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  if (key !== null) headers["idempotency-key"] = key;
  const res = await handleTrpc(
    new Request(`http://cats.test/api/trpc/${path}`, { method: "POST", headers, body: JSON.stringify(input) }),
    createContextFactory(api.source),
  );
  return { status: res.status, body: await res.text(), replayed: res.headers.get("idempotent-replayed") === "true" };
}

const keyRow = async (key: string) =>
  (
    await db.pool.query<{ effects: Array<{ streamId: string; version: number }>; status: number | null }>(
      "SELECT effects, status FROM command_keys WHERE user_id = $1 AND key = $2",
      [operator.id, key],
    )
  ).rows[0];

describe("the same key twice", () => {
  it("tasks.start sent twice at once with one key: one session, the same answer twice (the repeat marked as a replay)", async () => {
    const key = newKey();
    const prompt = `start once ${key}`;
    const input = { projectId, prompt, mode: "proposal" };
    const [a, b] = await Promise.all([trpc("tasks.start", input, key), trpc("tasks.start", input, key)]);
    expect(a.status).toBe(200);
    expect(b).toMatchObject({ status: a.status, body: a.body });
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    const sessions = await sessionsPrompted(db.pool, prompt);
    expect(sessions).toHaveLength(1);
    expect(JSON.parse(a.body)).toMatchObject({ result: { data: { sessionId: sessions[0] } } });

    // Later again: the kept answer, nothing new.
    expect(await trpc("tasks.start", input, key)).toEqual({ ...a, replayed: true });
    expect(await sessionsPrompted(db.pool, prompt)).toHaveLength(1);
    // The key's row notes what the command recorded: the new session at its version.
    const { version } = JSON.parse(a.body).result.data as { version: number };
    expect(await keyRow(key)).toEqual({ effects: [{ streamId: sessions[0], version }], status: 200 });
  });

  it("the same key with another request is a 422 naming the key; nothing is done", async () => {
    const key = newKey();
    const first = await trpc("tasks.start", { projectId, prompt: `one ${key}`, mode: "proposal" }, key);
    expect(first.status).toBe(200);
    for (const [path, input] of [
      ["tasks.start", { projectId, prompt: `another ${key}`, mode: "proposal" }],
      ["tasks.cancel", { sessionId: JSON.parse(first.body).result.data.sessionId }],
    ] as const) {
      const again = await trpc(path, input, key);
      expect(again.status).toBe(422);
      expect(JSON.parse(again.body)).toMatchObject({
        error: { message: expect.stringContaining(key), data: { code: "UNPROCESSABLE_CONTENT" } },
      });
    }
    expect(await sessionsPrompted(db.pool, `another ${key}`)).toEqual([]);
  });

  it("two keys are two commands: the domain decides the second (a second cancel is a 409)", async () => {
    const started = JSON.parse((await trpc("tasks.start", { projectId, prompt: "two keys", mode: "proposal" }, newKey())).body);
    const sessionId = started.result.data.sessionId as string;
    const key = newKey();
    const [one, same] = await Promise.all([trpc("tasks.cancel", { sessionId }, key), trpc("tasks.cancel", { sessionId }, key)]);
    expect([one.status, same.status, same.body]).toEqual([200, 200, one.body]);
    const other = await trpc("tasks.cancel", { sessionId }, newKey());
    expect(other.status).toBe(409);
    const cancels = (await db.store.readStream(sessionId)).filter((e) => e.type === "CancelRequested");
    expect(cancels).toHaveLength(1);
  });

  it("over REST alike: the same start twice with one key is one session and one answer (201 both times)", async () => {
    const rest = createTaskRestHandlers(api.source);
    const key = newKey();
    const prompt = `rest once ${key}`;
    const post = () =>
      rest.start(
        new Request("http://cats.test/api/tasks", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify({ projectId, prompt, mode: "proposal" }),
        }),
        undefined,
      );
    const answers = await Promise.all([post(), post()]);
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(answers.map((r) => r.status)).toEqual([201, 201]);
    expect(bodies[1]).toBe(bodies[0]);
    expect(await sessionsPrompted(db.pool, prompt)).toHaveLength(1);
  });

  it("a key that is not 1–200 printable ASCII characters is a 400", async () => {
    for (const key of ["", "has space", "x".repeat(201)]) {
      const answer = await trpc("tasks.start", { projectId, prompt: "bad key", mode: "proposal" }, key);
      expect([key, answer.status]).toEqual([key, 400]);
    }
  });
});

describe("a key's lifecycle (idempotent() with a command of the test's own)", () => {
  const request = (key: string, body = "{}") =>
    new Request("http://cats.test/api/thing", { method: "POST", headers: { "idempotency-key": key }, body });
  const ok = (text: string, status = 200) => Promise.resolve(new Response(text, { status, headers: { "content-type": "text/plain" } }));

  it("a repeat while the first is carried out waits for it and answers the same", async () => {
    const key = newKey();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let runs = 0;
    const slow = async () => {
      runs++;
      await held;
      return ok("done slowly", 201);
    };
    const first = idempotent(db.pool, request(key), operator.id, slow);
    await new Promise((r) => setTimeout(r, 100));
    const repeat = idempotent(db.pool, request(key), operator.id, slow);
    await new Promise((r) => setTimeout(r, 100));
    release();
    const answers = await Promise.all([first, repeat]);
    expect(await Promise.all(answers.map(async (r) => [r.status, await r.text()]))).toEqual([
      [201, "done slowly"],
      [201, "done slowly"],
    ]);
    expect(runs).toBe(1);
  });

  it(`a repeat that waits past ${IN_FLIGHT_WAIT_MS} ms for the first is a 409 saying when to try again`, async () => {
    const key = newKey();
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const first = idempotent(db.pool, request(key), operator.id, () => {
      started();
      return new Promise<Response>((r) => (release = () => void r(ok("late"))));
    });
    // The repeat comes once the first holds the key (its command is running), not before.
    await running;
    const refused = await rejection(idempotent(db.pool, request(key), operator.id, () => ok("never")));
    expect(refused).toMatchObject({ code: "CONFLICT", details: { retryAfter: expect.any(Number) } });
    release();
    expect(await (await first).text()).toBe("late");
  }, 30_000);

  it("an answer that says the server failed (5xx) lets the key go: the retry carries the command out", async () => {
    const key = newKey();
    expect((await idempotent(db.pool, request(key), operator.id, () => ok("down", 503))).status).toBe(503);
    // Let go in the background; a retry right away waits for it like for any holder.
    const retried = await idempotent(db.pool, request(key), operator.id, () => ok("done"));
    expect([retried.status, await retried.text()]).toEqual([200, "done"]);
    // A thrown error lets it go as well.
    const other = newKey();
    await expect(idempotent(db.pool, request(other), operator.id, () => Promise.reject(new Error("bug")))).rejects.toThrow("bug");
    await expect.poll(() => keyRow(other)).toBeUndefined();
  });

  it("a failed request's key is let go again and again while the database refuses, until it answers", async () => {
    const key = newKey();
    let refusals = 2;
    // The pool as a busy one: its first two deletes of the key fail as a pool wait does.
    const busy = new Proxy(db.pool, {
      get(target, prop, receiver) {
        if (prop !== "query") return Reflect.get(target, prop, receiver) as unknown;
        return (text: unknown, values?: unknown[]) => {
          if (typeof text === "string" && text.startsWith("DELETE FROM command_keys WHERE user_id") && refusals-- > 0)
            return Promise.reject(new Error("timeout exceeded when trying to connect"));
          return target.query(text as string, values);
        };
      },
    });
    expect((await idempotent(busy, request(key), operator.id, () => ok("down", 503))).status).toBe(503);
    await expect.poll(() => keyRow(key), { timeout: 5_000 }).toBeUndefined();
    expect(refusals).toBe(-1);
  });

  it("the answer to a failed request does not wait for its key to be let go; a retry meanwhile waits for the release, then carries the command out", async () => {
    const key = newKey();
    // The release meets a lock on the key's row, held until the retry is under way.
    const blocker = await db.pool.connect();
    try {
      const answer = idempotent(db.pool, request(key), operator.id, async () => {
        await blocker.query("BEGIN");
        await blocker.query("SELECT 1 FROM command_keys WHERE key = $1 FOR UPDATE", [key]);
        return ok("down", 503);
      });
      expect((await answer).status).toBe(503);
      const retried = idempotent(db.pool, request(key), operator.id, () => ok("done"));
      await new Promise((r) => setTimeout(r, 300));
      await blocker.query("COMMIT");
      const done = await retried;
      expect([done.status, await done.text()]).toEqual([200, "done"]);
    } finally {
      blocker.release();
    }
  });

  it(`a holder gone for ${ABANDONED_AFTER_MS / 1000} s with nothing recorded is replaced; with something recorded, the repeat is told what`, async () => {
    const idle = newKey();
    await db.pool.query(
      `INSERT INTO command_keys (user_id, key, command, request_hash, claimed_at)
       VALUES ($1, $2, 'POST /api/thing', encode(sha256(convert_to('POST /api/thing' || chr(10) || '{}', 'UTF8')), 'hex'), now() - interval '2 minutes')`,
      [operator.id, idle],
    );
    const taken = await idempotent(db.pool, request(idle), operator.id, () => ok("taken over"));
    expect(await taken.text()).toBe("taken over");

    const recorded = newKey();
    await db.pool.query(
      `INSERT INTO command_keys (user_id, key, command, request_hash, claimed_at, effects)
       VALUES ($1, $2, 'POST /api/thing', encode(sha256(convert_to('POST /api/thing' || chr(10) || '{}', 'UTF8')), 'hex'),
               now() - interval '2 minutes', '[{"streamId":"s-1","version":4}]')`,
      [operator.id, recorded],
    );
    const told = await rejection(idempotent(db.pool, request(recorded), operator.id, () => ok("twice?")));
    expect(told).toMatchObject({ code: "CONFLICT", details: { current: { version: 4, effects: [{ streamId: "s-1", version: 4 }] } } });
  });

  it(`a key is forgotten after ${KEY_LIFETIME_HOURS} hours: the same key then carries a command out again`, async () => {
    const key = newKey();
    expect(await (await idempotent(db.pool, request(key), operator.id, () => ok("first"))).text()).toBe("first");
    expect(await (await idempotent(db.pool, request(key), operator.id, () => ok("second"))).text()).toBe("first");
    await db.pool.query("UPDATE command_keys SET created_at = now() - interval '25 hours' WHERE key = $1", [key]);
    expect(await (await idempotent(db.pool, request(key), operator.id, () => ok("third"))).text()).toBe("third");
  });

  it("keys are each user's own: another user's same key is another command", async () => {
    const key = newKey();
    const other = await api.user("operator");
    expect(await (await idempotent(db.pool, request(key), operator.id, () => ok("mine"))).text()).toBe("mine");
    expect(await (await idempotent(db.pool, request(key), other.id, () => ok("theirs"))).text()).toBe("theirs");
  });
});
