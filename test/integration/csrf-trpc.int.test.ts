// CSRF on the tRPC endpoint (docs/auth.md, "Cross-site requests"), over real HTTP
// (test/helpers/api-server.ts). Every mutation of the router, read from the router itself so a
// new one is covered here at once, is sent with a signed-in admin's session cookie in each
// shape another site's page can give it: as a form (multipart, urlencoded), as `text/plain`,
// as JSON naming a foreign Origin or a cross-site / same-site Sec-Fetch-Site. Each is refused
// (415 or 403, in tRPC's error shape) before anything is read or recorded: every table keeps
// its rows, the idempotency keys' included. The same calls with an API token, and same-origin
// JSON with the cookie, go through; for a few, their effect is checked.
import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CurrentUser } from "../../server/auth/request";
import type { ApiFixture } from "../helpers/api";
import { startApiServer, type ApiServer } from "../helpers/api-server";
import { commandExamples, createCommandFixture, proceduresOf } from "../helpers/command-examples";
import type { TestDatabase } from "../helpers/db";
import { watchErrorLog } from "../helpers/error-log";
import { sessionsPrompted, type Harness } from "../helpers/tasks";

const errorLog = watchErrorLog();
/** A page on another port of this host: what a SameSite=Lax cookie is still sent from. */
const FOREIGN = "http://127.0.0.1:9999";
const JSON_TYPE = { "content-type": "application/json" };
/** What a refusal by the CSRF rule says (server/api/csrf.ts); no other answer says it. */
const CSRF_REFUSAL = /cross-site request refused|taken only as JSON/;

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let server: ApiServer;
let admin: CurrentUser;
let cookie: string;
let token: string;
let projectId: string;
let examples: Record<string, () => Promise<unknown>>;

beforeAll(async () => {
  ({ db, api, h, admin, cookie, token, projectId } = await createCommandFixture("csrf"));
  examples = commandExamples({ api, admin, projectId, repo: h.repo });
  server = await startApiServer(api.source);
});

afterAll(async () => {
  await server.close();
});

const mutations = () => proceduresOf("mutation");

interface Call {
  headers: Record<string, string>;
  body: BodyInit;
}

/** The input's top-level fields as a form's text fields (what a cross-site form can post). */
const formFields = (input: unknown): [string, string][] =>
  Object.entries((input ?? {}) as Record<string, unknown>).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]);

const json = (input: unknown, headers: Record<string, string> = {}): Call => ({
  headers: { ...JSON_TYPE, ...headers },
  body: JSON.stringify(input ?? {}),
});

interface Shape {
  name: string;
  status: 403 | 415;
  code: "FORBIDDEN" | "UNSUPPORTED_MEDIA_TYPE";
  call(input: unknown): Call;
}

/** Every shape in which another site's page makes a browser post with the cookie (or tries to). */
const CROSS_SITE: Shape[] = [
  {
    name: "multipart/form-data",
    status: 415,
    code: "UNSUPPORTED_MEDIA_TYPE",
    call: (input) => {
      const form = new FormData();
      for (const [k, v] of formFields(input)) form.set(k, v);
      return { headers: {}, body: form }; // fetch sets the type with its boundary
    },
  },
  {
    name: "application/x-www-form-urlencoded",
    status: 415,
    code: "UNSUPPORTED_MEDIA_TYPE",
    call: (input) => ({ headers: {}, body: new URLSearchParams(formFields(input)) }),
  },
  {
    name: "text/plain",
    status: 415,
    code: "UNSUPPORTED_MEDIA_TYPE",
    call: (input) => ({ headers: { "content-type": "text/plain;charset=UTF-8" }, body: JSON.stringify(input ?? {}) }),
  },
  {
    name: "a form as a browser posts it from another site (Origin and Sec-Fetch-Site)",
    status: 403,
    code: "FORBIDDEN",
    call: (input) => ({
      headers: { origin: FOREIGN, "sec-fetch-site": "same-site" },
      body: new URLSearchParams(formFields(input)),
    }),
  },
  { name: "JSON from a foreign Origin", status: 403, code: "FORBIDDEN", call: (input) => json(input, { origin: FOREIGN }) },
  {
    name: "JSON with Sec-Fetch-Site: cross-site",
    status: 403,
    code: "FORBIDDEN",
    call: (input) => json(input, { "sec-fetch-site": "cross-site" }),
  },
  {
    name: "JSON with Sec-Fetch-Site: same-site",
    status: 403,
    code: "FORBIDDEN",
    call: (input) => json(input, { "sec-fetch-site": "same-site" }),
  },
];

interface Answer {
  status: number;
  text: string;
  body: {
    result?: { data: unknown };
    error?: { message: string; code: number; data: { code: string; httpStatus: number; path?: string } };
  };
}

/** POST /api/trpc/<path> over HTTP with `call`'s body and headers plus `auth`. */
async function send(path: string, call: Call, auth: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${server.url}/api/trpc/${path}`, { method: "POST", headers: { ...call.headers, ...auth }, body: call.body });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Answer["body"] };
}

/** The same-origin JSON the dashboard's client sends (lib/trpc/client.tsx, as a browser adds Origin and Sec-Fetch-Site). */
const sameOrigin = (input: unknown) =>
  json(input, { "content-type": "application/json; charset=utf-8", origin: server.url, "sec-fetch-site": "same-origin" });

/** Gone through the CSRF rule: whatever the procedure then answered, not a refusal of the rule's, and no failure. */
function expectThrough(answer: Answer, what: string): void {
  expect(answer.status, `${what}: ${answer.text}`).toBeLessThan(500);
  expect(answer.status, `${what}: ${answer.text}`).not.toBe(415);
  expect(answer.body.error?.message ?? "", what).not.toMatch(CSRF_REFUSAL);
}

/** Rows in every table but the migrations' and sign-in attempts': what "nothing recorded" is measured by. */
async function recorded(): Promise<Record<string, number>> {
  const tables = await db.pool.query<{ tablename: string }>(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('_prisma_migrations', 'sign_in_attempts')",
  );
  const counts: Record<string, number> = {};
  for (const { tablename } of tables.rows)
    counts[tablename] = Number((await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${tablename}"`)).rows[0]!.n);
  return counts;
}

describe("every mutation refuses a cross-site call made with the session cookie", () => {
  it("the router has mutations, each with an example input, and the tables counted include events and command keys", async () => {
    expect(mutations().length).toBeGreaterThan(20);
    expect(mutations().filter((path) => !(path in examples))).toEqual([]);
    expect(Object.keys(await recorded())).toEqual(expect.arrayContaining(["events", "command_keys"]));
  });

  it.each(mutations())("%s: 415 for a form or text body, 403 for JSON from another site; nothing recorded", async (path) => {
    const input = await examples[path]!();
    const before = await recorded();
    for (const shape of CROSS_SITE) {
      // An Idempotency-Key too: the refusal comes before the key is claimed.
      const answer = await send(path, shape.call(input), { cookie, "idempotency-key": crypto.randomUUID() });
      expect(answer.status, `${shape.name}: ${answer.text}`).toBe(shape.status);
      expect(answer.body.error, shape.name).toMatchObject({
        message: expect.stringMatching(CSRF_REFUSAL),
        data: { code: shape.code, httpStatus: shape.status, path },
      });
    }
    const after = await recorded();
    expect(after.events).toBe(before.events);
    expect(after).toEqual(before);
  });
});

describe("the same calls go through with an API token, or as same-origin JSON with the cookie", () => {
  it.each(mutations())("%s", async (path) => {
    for (const shape of CROSS_SITE.filter((s) => s.name.startsWith("JSON "))) {
      const answer = await send(path, shape.call(await examples[path]!()), { authorization: `Bearer ${token}` });
      expectThrough(answer, `token, ${shape.name}`);
    }
    expectThrough(await send(path, sameOrigin(await examples[path]!()), { cookie }), "cookie, same-origin JSON");
  });
});

describe("what goes through does its work; what is refused does none", () => {
  const events = async () => Number((await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM events")).rows[0]!.n);

  it("tasks.start: refused from a foreign origin (no session), started as same-origin JSON and with a token", async () => {
    const prompt = `csrf start ${crypto.randomUUID()}`;
    const input = { projectId, prompt, mode: "proposal" };
    const before = await events();
    expect((await send("tasks.start", json(input, { origin: FOREIGN }), { cookie })).status).toBe(403);
    expect(await sessionsPrompted(db.pool, prompt)).toEqual([]);
    expect(await events()).toBe(before);

    const started = await send("tasks.start", sameOrigin(input), { cookie });
    expect(started.status, started.text).toBe(200);
    expect(await sessionsPrompted(db.pool, prompt)).toEqual([(started.body.result?.data as { sessionId: string }).sessionId]);
    expect(await events()).toBeGreaterThan(before);

    const byToken = await send("tasks.start", json(input, { origin: FOREIGN, "sec-fetch-site": "cross-site" }), {
      authorization: `Bearer ${token}`,
    });
    expect(byToken.status, byToken.text).toBe(200);
    expect(await sessionsPrompted(db.pool, prompt)).toHaveLength(2);
  });

  it("sessions.resume without input (the latest cancelled session): refused as a form, resumed in the admin's name as same-origin JSON", async () => {
    const { sessionId } = await api.caller(admin).tasks.start({ projectId, prompt: "Fix sum() then stop", mode: "proposal" });
    await api.caller(admin).tasks.cancel({ sessionId });
    const length = (await db.store.readStream(sessionId)).length;
    const forms: Call[] = [
      { headers: {}, body: new FormData() },
      { headers: { "content-type": "text/plain" }, body: "" },
    ];
    for (const shape of forms) {
      const refused = await send("sessions.resume", shape, { cookie });
      expect(refused.status, refused.text).toBe(415);
    }
    expect((await send("sessions.resume", json(undefined, { "sec-fetch-site": "same-site" }), { cookie })).status).toBe(403);
    expect(await db.store.readStream(sessionId)).toHaveLength(length);

    const resumed = await send("sessions.resume", sameOrigin(undefined), { cookie });
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body.result?.data).toMatchObject({ sessionId, status: "resumed" });
    const stream = await db.store.readStream(sessionId);
    expect(stream.length).toBeGreaterThan(length);
    expect(stream.at(-1)?.metadata.actor).toEqual({ kind: "user", id: admin.id });
  });

  it("ops.rebuildProjections: refused as a form with the cookie, run as same-origin JSON, and with a token in any body", async () => {
    expect((await send("ops.rebuildProjections", { headers: {}, body: new FormData() }, { cookie })).status).toBe(415);
    const rebuilt = await send("ops.rebuildProjections", sameOrigin(undefined), { cookie });
    expect(rebuilt.status, rebuilt.text).toBe(200);
    expect(rebuilt.body.result).toBeDefined();
    // A token is judged alone and the cookie never read: the body's type is tRPC's business, not the rule's.
    const byToken = await send("ops.rebuildProjections", { headers: {}, body: new FormData() }, { authorization: `Bearer ${token}` });
    expect(byToken.status, byToken.text).toBe(200);
  });

  it("a cookie and JSON with neither Origin nor Sec-Fetch-Site (a client holding the cookie, as `catcafe login`) goes through", async () => {
    const created = await send("tokens.create", json({ name: `login ${crypto.randomUUID()}` }), { cookie });
    expect(created.status, created.text).toBe(200);
    expect(created.body.result?.data).toMatchObject({ token: expect.stringMatching(/^cc_/) });
  });

  it("an Authorization header other than a bearer token (a proxy's Basic credentials, which a browser sends by itself) is no exemption", async () => {
    const answer = await send("ops.rebuildProjections", { headers: {}, body: new FormData() }, { authorization: "Basic YTpi", cookie });
    expect(answer.status).toBe(415);
  });

  it("the refusals' bodies: tRPC's error shape with the JSON-RPC code, the status and a message naming the rule", async () => {
    const foreign = await send("tasks.start", json({ projectId, prompt: "x" }, { origin: FOREIGN }), { cookie });
    expect(foreign.body).toEqual({
      error: {
        message: expect.stringContaining(`cross-site request refused: Origin ${FOREIGN} is not this site`),
        code: -32003,
        data: { code: "FORBIDDEN", httpStatus: 403, path: "tasks.start", zodError: null },
      },
    });
    const text = await send("tasks.start", { headers: { "content-type": "text/plain" }, body: "{}" }, { cookie });
    expect(text.body).toEqual({
      error: {
        message: expect.stringContaining("send the body as JSON (Content-Type: application/json; got text/plain)"),
        code: -32015,
        data: { code: "UNSUPPORTED_MEDIA_TYPE", httpStatus: 415, path: "tasks.start", zodError: null },
      },
    });
  });

  it("queries (GET) are not judged by the rule: a foreign Origin reads with the cookie as before (it cannot see the answer)", async () => {
    const res = await fetch(`${server.url}/api/trpc/sessions.list`, {
      headers: { cookie, origin: FOREIGN, "sec-fetch-site": "cross-site" },
    });
    expect(res.status).toBe(200);
  });
});

describe("the server log", () => {
  it("logged nothing above as an error", () => {
    expect(errorLog()).toEqual([]);
  });
});
