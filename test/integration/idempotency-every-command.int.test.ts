// Every command is safe to repeat (docs/api.md, "Repeating a command"), proved procedure by
// procedure: the mutations are read from the router itself, so a new one fails here until it is
// given an example input below. For each, over HTTP as a client sends it:
// - the same command twice at once with one key: carried out once (exactly one answer is not a
//   replay), the same status and body twice (but for a token shown once, which a replay holds
//   as SHOWN_ONCE), and sending it a third time records nothing more (events and rows counted
//   across the database);
// - the same key with another body: 422 naming the key, nothing recorded;
// - another key: carried out again (no replay), as the domain decides a second time.
// The REST routes that change something are enumerated from their handler factories alike.
// Most examples change something (a session started, forked, cancelled; a user, token or
// setting written); a few are sent where the domain refuses them (Forge's person actions on a
// session no stage waits on, a confirm, a delivery of an unfinished session), which is a
// command too: its refusal is answered once and the same again.
import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { keptBody } from "../../server/api/idempotency";
import { createModeRestHandlers, createTaskRestHandlers } from "../../server/api/rest";
import type { CurrentUser } from "../../server/auth/request";
import type { ApiFixture } from "../helpers/api";
import { commandExamples, createCommandFixture, proceduresOf } from "../helpers/command-examples";
import { watchErrorLog } from "../helpers/error-log";
import type { TestDatabase } from "../helpers/db";
import type { Harness } from "../helpers/tasks";

const errorLog = watchErrorLog();
let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let admin: CurrentUser;
let cookie: string;
let token: string;
let projectId: string;

beforeAll(async () => {
  ({ db, api, h, admin, cookie, token, projectId } = await createCommandFixture("every"));
});

let examples: Record<string, () => Promise<unknown>>;
beforeAll(() => {
  examples = commandExamples({ api, admin, projectId, repo: h.repo });
});
const mutations = () => proceduresOf("mutation");
const startTask = async () => (await api.caller(admin).tasks.start({ projectId, prompt: "Fix sum()", mode: "proposal" })).sessionId;
const finishedTask = async () => {
  const sessionId = await startTask();
  await api.caller(admin).tasks.cancel({ sessionId });
  return sessionId;
};
const startConversation = async () => (await api.caller(admin).conversations.start({ projectId, title: "talk" })).sessionId;

/** A mutation over HTTP as the signed-in admin's browser sends it, with `key`. */
async function send(path: string, input: unknown, key: string) {
  const res = await handleTrpc(
    new Request(`http://cats.test/api/trpc/${path}`, {
      method: "POST",
      headers: { cookie, origin: "http://cats.test", "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(input ?? {}),
    }),
    createContextFactory(api.source),
  );
  return { status: res.status, body: await res.text(), replayed: res.headers.get("idempotent-replayed") === "true" };
}

/** An answer as a replay gives it: a token it shows once is not given again (docs/api.md, "Repeating a command"). */
const asReplayed = (answer: { status: number; body: string; replayed: boolean }) => ({
  ...answer,
  body: keptBody(Buffer.from(answer.body)).toString("utf8"),
});

/** Rows in every table but the keys' own, and events: what "nothing more recorded" is measured by. */
async function recorded(): Promise<Record<string, number>> {
  const tables = await db.pool.query<{ tablename: string }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('command_keys', '_prisma_migrations', 'sign_in_attempts')",
  );
  const counts: Record<string, number> = {};
  for (const { tablename } of tables.rows)
    counts[tablename] = Number((await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${tablename}"`)).rows[0]!.n);
  return counts;
}

describe("every mutation is safe to repeat with one key", () => {
  it("every mutation of the router has an example here", () => {
    expect(mutations().filter((path) => !(path in examples))).toEqual([]);
  });

  it.each(mutations())(
    "%s: one key twice at once is carried out once and answered the same; another body is a 422; another key runs again",
    async (path) => {
      const example = examples[path];
      if (!example) throw new Error(`no example input for ${path}: add one to this test`);
      const input = await example();
      const key = crypto.randomUUID();
      const pair = await Promise.all([send(path, input, key), send(path, input, key)]);
      expect(pair[0].status, pair[0].body).toBeLessThan(500);
      expect(asReplayed(pair[1])).toMatchObject({ status: pair[0].status, body: asReplayed(pair[0]).body });
      expect(pair.filter((a) => !a.replayed)).toHaveLength(1);
      const replay = pair.find((a) => a.replayed)!;
      expect(replay.body).toBe(asReplayed(replay).body); // a replay never shows a token again

      const before = await recorded();
      expect(await send(path, input, key)).toEqual({ ...asReplayed(pair[0]), replayed: true });
      const other = await send(path, { ...(input as object), otherwise: true }, key);
      expect(other.status).toBe(422);
      expect(other.body).toContain(key);
      expect(await recorded()).toEqual(before);

      expect((await send(path, input, crypto.randomUUID())).replayed).toBe(false);
    },
  );
});

describe("every REST route that changes something is safe to repeat with one key", () => {
  const routes = () => {
    const tasks = createTaskRestHandlers(api.source);
    const modes = createModeRestHandlers(api.source);
    return { ...tasks, setSessionMode: modes.setSessionMode };
  };
  const bodies: Record<string, (id: string) => unknown> = {
    start: () => ({ projectId, prompt: `rest ${crypto.randomUUID()}`, mode: "proposal" }),
    followUp: () => ({ text: "and the docs" }),
    rerun: () => ({}),
    confirm: () => ({}),
    cancel: () => ({}),
    fork: () => ({ atVersion: 2 }),
    revert: () => ({ to: "proposal_coder" }),
    modify: () => ({ change: "also the docs" }),
    deliver: () => ({}),
    bakeOffJudge: () => ({}),
    bakeOffPick: () => ({ contenderId: "c1" }),
    bakeOffDismiss: () => ({}),
    resume: () => ({}),
    setSessionMode: () => ({ mode: "voting" }),
  };

  it("every route has a body here", () => {
    expect(Object.keys(routes()).filter((name) => !(name in bodies))).toEqual([]);
  });

  it.each(Object.keys(bodies))("%s: one key twice at once is one answer, carried out once", async (name) => {
    const handler = routes()[name as keyof ReturnType<typeof routes>] as (req: Request, route: unknown) => Promise<Response>;
    const id = name === "setSessionMode" ? await startConversation() : name === "modify" ? await finishedTask() : await startTask();
    const body = JSON.stringify(bodies[name]!(id));
    const key = crypto.randomUUID();
    const post = async () => {
      const res = await handler(
        new Request(`http://cats.test/api/x/${id}`, {
          method: name === "setSessionMode" ? "PUT" : "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
          body,
        }),
        { params: Promise.resolve({ id }) },
      );
      return { status: res.status, body: await res.text(), replayed: res.headers.get("idempotent-replayed") === "true" };
    };
    const pair = await Promise.all([post(), post()]);
    expect(pair[0].status, pair[0].body).toBeLessThan(500);
    expect(pair[1]).toMatchObject({ status: pair[0].status, body: pair[0].body });
    expect(pair.filter((a) => !a.replayed)).toHaveLength(1);
  });
});

describe("the server log", () => {
  it("logged nothing above as an error: no conflict and no refusal was taken for an internal error", () => {
    expect(errorLog()).toEqual([]);
  });
});
