// The REST aliases, called as Next.js calls them (a Request and the route's params):
// status codes, JSON bodies, `{ error: { code, message, fieldErrors? } }`, and the same
// sign-in (cookie or Bearer token) and role rules as the tRPC procedures.
import { beforeAll, describe, expect, it } from "vitest";
import { createModeRestHandlers, createSessionExportHandler, createTaskRestHandlers } from "../../server/api/rest";
import { startConversation } from "../../server/conversations/service";
import type { CurrentUser } from "../../server/auth/request";
import type { EventStore } from "../../server/events/store";
import { followUpTask } from "../../server/tasks/commands";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let rest: ReturnType<typeof createTaskRestHandlers>;
let operator: CurrentUser;
let viewer: CurrentUser;
let operatorToken: string;
let projectId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  rest = createTaskRestHandlers(api.source);
  [operator, viewer] = [await api.user("operator"), await api.user("viewer")];
  operatorToken = (await api.caller(operator).tokens.create({ name: "rest" })).token;
  projectId = await h.project("rest", { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }] });
});

const asOperator = () => ({ authorization: `Bearer ${operatorToken}` });

function post(path: string, body: unknown, headers: Record<string, string>): Request {
  return new Request(`http://cats.test${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : body === undefined ? undefined : JSON.stringify(body),
  });
}
const params = (id: string) => ({ params: Promise.resolve({ id }) });

async function call(
  handler: (req: Request, route: { params: Promise<{ id: string }> }) => Promise<Response>,
  id: string,
  action: string,
  body: unknown,
  headers: Record<string, string> = asOperator(),
) {
  const res = await handler(post(`/api/tasks/${id}/${action}`, body, headers), params(id));
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

async function startOne(prompt = "Fix sum()"): Promise<string> {
  const res = await rest.start(post("/api/tasks", { projectId, prompt, mode: "proposal" }, asOperator()), undefined);
  expect(res.status).toBe(201);
  const body = (await res.json()) as { sessionId: string; version: number };
  expect(body.version).toBeGreaterThan(0);
  return body.sessionId;
}

describe("REST task aliases", () => {
  it("start 201, follow-up 200 { sessionId, version }, rerun 201 { sessionId, parentId }, cancel 200; the token's user is the actor", async () => {
    const id = await startOne();
    const followUp = await call(rest.followUp, id, "followup", { text: "Also negatives" });
    expect(followUp).toMatchObject({ status: 200, body: { sessionId: id, version: expect.any(Number) } });
    const rerun = await call(rest.rerun, id, "rerun", undefined);
    expect(rerun.status).toBe(201);
    expect(rerun.body).toEqual({ sessionId: expect.stringMatching(/^s-/), parentId: id });
    const cancel = await call(rest.cancel, id, "cancel", { reason: "enough" });
    expect(cancel).toMatchObject({ status: 200, body: { sessionId: id } });
    const events = await db.store.readStream(id);
    expect(events.at(-1)?.metadata.actor).toEqual({ kind: "user", id: operator.id });
    expect(events.map((e) => e.type)).toContain("CancelRequested");
  });

  it("sessions: fork 201 at a position, revert 201, resume 200 with what it did, modify of a running session 412; the body cannot name another session", async () => {
    const id = await startOne();
    const other = await startOne("another");
    const fork = await call(rest.fork, id, "fork", { atVersion: 3, note: "from REST", sessionId: other });
    expect(fork).toMatchObject({ status: 201, body: { sessionId: expect.stringMatching(/^s-/), parentId: id, atVersion: 3 } });
    const forked = (await db.store.readStream(fork.body.sessionId as string))[3]!;
    expect(forked).toMatchObject({
      type: "SessionForked",
      data: { parentId: id, note: "from REST" },
      metadata: { actor: { id: operator.id } },
    });
    const revert = await call(rest.revert, id, "revert", { to: "proposal_coder" });
    expect(revert).toMatchObject({ status: 201, body: { parentId: id, to: "proposal_coder" } });
    const resume = await call(rest.resume, id, "resume", {});
    expect(resume).toMatchObject({ status: 200, body: { sessionId: id, status: expect.stringMatching(/^(queued|running)$/) } });
    const modify = await call(rest.modify, id, "modify", { change: "more" });
    expect(modify).toMatchObject({ status: 412, body: { error: { code: "PRECONDITION_FAILED" } } });
    const beyond = await call(rest.fork, id, "fork", { atVersion: 10_000 });
    expect(beyond).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID_INPUT", message: expect.stringContaining("there is no event 10000") } },
    });
  });

  it("accepts the session cookie of an operator", async () => {
    const id = await startOne();
    const res = await call(rest.followUp, id, "followup", { text: "from the browser" }, { cookie: await api.sessionCookie(operator.id) });
    expect(res.status).toBe(200);
  });

  it("CSRF: a cookie-signed POST from another origin (403), or not as JSON (415), is refused and records nothing; same-origin JSON and token calls pass", async () => {
    const id = await startOne();
    const cookie = await api.sessionCookie(operator.id);
    const before = (await db.store.readStream(id)).length;
    const followUpWith = (headers: Record<string, string>, body: unknown = { text: "hello" }) =>
      call(rest.followUp, id, "followup", body, { cookie, ...headers });
    const crossSite = await followUpWith({ origin: "http://cats.test:3001", host: "cats.test" });
    expect(crossSite).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN" } } });
    expect((await followUpWith({ "sec-fetch-site": "same-site" })).status).toBe(403);
    expect((await followUpWith({ "sec-fetch-site": "cross-site" })).status).toBe(403);
    const plain = await followUpWith({ "content-type": "text/plain" }, JSON.stringify({ text: "a form post" }));
    expect(plain).toMatchObject({ status: 415, body: { error: { code: "UNSUPPORTED_MEDIA_TYPE" } } });
    const form = await followUpWith({ "content-type": "application/x-www-form-urlencoded" }, "text=a+form+post");
    expect(form).toMatchObject({ status: 415, body: { error: { code: "UNSUPPORTED_MEDIA_TYPE" } } });
    expect((await db.store.readStream(id)).length).toBe(before);

    const sameSite = await followUpWith({ origin: "http://cats.test", host: "cats.test" });
    expect(sameSite.status).toBe(200);
    const token = await call(rest.followUp, id, "followup", JSON.stringify({ text: "a script" }), {
      ...asOperator(),
      "content-type": "text/plain",
    });
    expect(token.status).toBe(200);
  });

  it("401 without credentials or with a revoked token (with WWW-Authenticate), 403 for a viewer, and nothing recorded", async () => {
    const id = await startOne();
    const before = await db.store.readStream(id);
    const anonymous = await call(rest.followUp, id, "followup", { text: "hi" }, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: { code: "UNAUTHORIZED", message: expect.any(String) } });
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);

    const { token, id: tokenId } = await api.caller(operator).tokens.create({ name: "short-lived" });
    await api.caller(operator).tokens.revoke({ id: tokenId });
    expect((await call(rest.cancel, id, "cancel", {}, { authorization: `Bearer ${token}` })).status).toBe(401);

    const viewerToken = (await api.caller(viewer).tokens.create({ name: "viewer" })).token;
    for (const [handler, action] of [
      [rest.followUp, "followup"],
      [rest.rerun, "rerun"],
      [rest.cancel, "cancel"],
      [rest.fork, "fork"],
      [rest.revert, "revert"],
      [rest.modify, "modify"],
      [rest.resume, "resume"],
    ] as const) {
      const forbidden = await call(handler, id, action, { text: "x" }, { authorization: `Bearer ${viewerToken}` });
      expect(forbidden).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN" } } });
    }
    const viewerStart = await rest.start(
      post("/api/tasks", { projectId, prompt: "x" }, { cookie: await api.sessionCookie(viewer.id) }),
      undefined,
    );
    expect(viewerStart.status).toBe(403);
    expect(await db.store.readStream(id)).toEqual(before);
  });

  it("an action the session no longer admits is 409 CONFLICT (one rule: moved on or finished); a follow-up racing another lands too; NOT_FOUND is 404", async () => {
    const id = await startOne();
    // Another operator's follow-up holds the session (decided, its append under way) when this
    // request arrives: this one waits for it, is decided on the session with it, and lands.
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const slow = Object.create(db.store) as EventStore;
    slow.appendInTx = async (...args) => {
      holding();
      await new Promise((r) => setTimeout(r, 200));
      return db.store.appendInTx(...args);
    };
    const first = followUpTask(
      { store: slow, pool: db.pool },
      { sessionId: id, text: "I was first" },
      { kind: "user", id: "someone-else" },
    );
    await held;
    // Nothing about the first follow-up changes the second: it is decided after it and lands.
    expect((await call(rest.followUp, id, "followup", { text: "me too" })).status).toBe(200);
    await first;
    const texts = (await db.store.readStream(id))
      .filter((e) => e.type === "OperatorMessagePosted")
      .map((e) => (e.data as { text: string }).text);
    expect(texts).toEqual(["I was first", "me too"]);

    expect((await call(rest.followUp, "s-missing", "followup", { text: "hello?" })).status).toBe(404);
    expect((await call(rest.cancel, id, "cancel", {})).status).toBe(200);
    expect(await call(rest.cancel, id, "cancel", {})).toMatchObject({ status: 409, body: { error: { code: "CONFLICT" } } });
    expect(await call(rest.confirm, id, "confirm", {})).toMatchObject({ status: 409, body: { error: { code: "CONFLICT" } } });
  });

  it("400 with field errors for invalid bodies, and for bodies that are not JSON objects", async () => {
    const id = await startOne();
    const empty = await call(rest.followUp, id, "followup", { text: "   " });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ error: { code: "INVALID_INPUT", message: "invalid input", fieldErrors: { text: [expect.any(String)] } } });

    const start = await rest.start(post("/api/tasks", { projectId: "", mode: "Sideways!" }, asOperator()), undefined);
    expect(start.status).toBe(400);
    const startBody = (await start.json()) as { error: { fieldErrors: Record<string, string[]> } };
    expect(Object.keys(startBody.error.fieldErrors).sort()).toEqual(["mode", "projectId", "prompt"]);

    expect(await call(rest.followUp, id, "followup", "{not json")).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID_INPUT", message: expect.stringMatching(/JSON/) } },
    });
    expect(await call(rest.followUp, id, "followup", [1, 2])).toMatchObject({ status: 400 });
    // The path names the session: a body cannot redirect the command elsewhere.
    const other = await startOne("other");
    const before = await db.store.readStream(other);
    expect((await call(rest.followUp, id, "followup", { text: "here", sessionId: other })).body).toMatchObject({ sessionId: id });
    expect(await db.store.readStream(other)).toEqual(before);
  });
});

describe("POST /api/sessions/:id/deliver", () => {
  it("refuses a session that is not approved (412) and a viewer (403), recording nothing", async () => {
    const id = await startOne();
    const viewerToken = (await api.caller(viewer).tokens.create({ name: "deliver" })).token;
    const before = (await db.store.readStream(id)).length;
    const early = await call(rest.deliver, id, "deliver", undefined);
    expect(early).toMatchObject({
      status: 412,
      body: { error: { code: "PRECONDITION_FAILED", message: expect.stringContaining("only an approved session") } },
    });
    const forbidden = await call(rest.deliver, id, "deliver", undefined, { authorization: `Bearer ${viewerToken}` });
    expect(forbidden.status).toBe(403);
    expect((await db.store.readStream(id)).filter((e) => e.type.startsWith("Delivery"))).toEqual([]);
    expect((await db.store.readStream(id)).length).toBeGreaterThanOrEqual(before);
  });
});

describe("the collaboration-mode endpoints (req C7)", () => {
  it("GET /api/modes lists the registry; GET and PUT /api/sessions/:id/mode answer as the seed says; bad input is a 400 naming the field", async () => {
    const modes = createModeRestHandlers(api.source);
    const viewerToken = (await api.caller(viewer).tokens.create({ name: "modes" })).token;
    const asViewer = { authorization: `Bearer ${viewerToken}` };
    const get = (url: string, headers: Record<string, string>) => new Request(`http://cats.test${url}`, { headers });
    const put = (url: string, body: unknown, headers: Record<string, string>) =>
      new Request(`http://cats.test${url}`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });

    const list = await modes.listModes(get("/api/modes", asViewer), undefined);
    expect(list.status).toBe(200);
    expect(((await list.json()) as Array<{ name: string }>).map((m) => m.name)).toEqual([
      "free_discussion",
      "sop",
      "voting",
      "expert_routing",
    ]);
    expect((await modes.listModes(get("/api/modes", {}), undefined)).status).toBe(401);

    const { sessionId } = await startConversation({ store: db.store, pool: db.pool }, { projectId }, { kind: "user", id: operator.id });
    const mode = await modes.getSessionMode(get(`/api/sessions/${sessionId}/mode`, asViewer), params(sessionId));
    expect(mode.status).toBe(200);
    expect(await mode.json()).toEqual({
      mode: "free_discussion",
      description: expect.stringMatching(/^Free discussion/),
      config: { name: "free_discussion", enabled: true, config: { maxCallsPerMessage: 5 } },
      state: { current_step: null, step_history: [], custom_state: {}, last_update_time: expect.any(String) },
    });

    const url = `/api/sessions/${sessionId}/mode`;
    expect((await modes.setSessionMode(put(url, { mode: "voting" }, asViewer), params(sessionId))).status).toBe(403);
    const switched = await modes.setSessionMode(put(url, { mode: "voting", modeConfig: { quorum: 2 } }, asOperator()), params(sessionId));
    expect(switched.status).toBe(200);
    expect(await switched.json()).toEqual({ mode: "voting", description: expect.stringMatching(/^Voting/) });

    const unknown = await modes.setSessionMode(put(url, { mode: "debate" }, asOperator()), params(sessionId));
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      error: { code: "INVALID_INPUT", fieldErrors: { mode: [expect.stringContaining('no mode "debate"')] } },
    });
    const invalid = await modes.setSessionMode(
      put(url, { mode: "voting", modeConfig: { quorum: "two" } }, asOperator()),
      params(sessionId),
    );
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      error: { fieldErrors: { modeConfig: [expect.stringMatching(/^modeConfig\.quorum: /)] } },
    });
    // A task is not a conversation: 404, as for a session that does not exist.
    const task = await startOne();
    expect((await modes.getSessionMode(get(`/api/sessions/${task}/mode`, asViewer), params(task))).status).toBe(404);
    expect((await modes.getSessionMode(get("/api/sessions/nope/mode", asViewer), params("nope"))).status).toBe(404);
    const after = await modes.getSessionMode(get(url, asViewer), params(sessionId));
    expect(await after.json()).toMatchObject({ mode: "voting", config: { config: { quorum: 2 } } });
  });
});

describe("GET /api/sessions/:id/export", () => {
  it("downloads the session as a zip for a viewer; anonymous callers get 401, unknown sessions 404", async () => {
    const id = await startOne("Export me");
    const download = createSessionExportHandler(api.source);
    const get = (headers: Record<string, string>, sid = id) =>
      download(new Request(`http://cats.test/api/sessions/${sid}/export`, { headers }), params(sid));
    const viewerToken = (await api.caller(viewer).tokens.create({ name: "export" })).token;
    const res = await get({ authorization: `Bearer ${viewerToken}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${id}.zip"`);
    const { unzipSync, strFromU8 } = await import("fflate");
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const summary = JSON.parse(strFromU8(files[`${id}/summary.json`]!)) as { sessionId: string; prompt: string };
    expect(summary).toMatchObject({ sessionId: id, prompt: "Export me" });
    expect(Object.keys(files)).toEqual(expect.arrayContaining([`${id}/task-events.jsonl`, `${id}/task-timeline.json`]));
    expect((await get({})).status).toBe(401);
    expect((await get({ authorization: `Bearer ${viewerToken}` }, "s-does-not-exist")).status).toBe(404);

    // What runs the work (the repository's path, the allowlist, agent configurations) is for
    // operators: the viewer's zip has none of it, the operator's has it.
    const everything = async (r: Response) =>
      Object.values(unzipSync(new Uint8Array(await r.arrayBuffer())))
        .map((f) => strFromU8(f))
        .join("\n");
    const asViewer = await everything(await get({ authorization: `Bearer ${viewerToken}` }));
    const asOp = await everything(await get(asOperator()));
    expect(asOp).toContain(h.repo);
    expect(asViewer).not.toContain(h.repo);
    expect(asViewer).not.toContain('"--test","**"');
  });
});

describe("runners for viewers", () => {
  it("a viewer sees each host as a pseudonym and no pid or shells; an operator sees them", async () => {
    await db.pool.query(
      `INSERT INTO runners (id, host, pid, version, heartbeat_at, shells) VALUES ('r-viewed', 'build-box-7', 4242, '0.0.0', now(), '[{"path":"/opt/cli/claude"}]')`,
    );
    const seenBy = async (user: CurrentUser) => (await api.caller(user).runners.list()).find((r) => r.id === "r-viewed")!;
    expect(await seenBy(operator)).toMatchObject({ host: "build-box-7", pid: 4242, shells: [{ path: "/opt/cli/claude" }] });
    const viewed = await seenBy(viewer);
    expect(viewed).toMatchObject({ host: expect.stringMatching(/^host-[0-9a-f]{8}$/), pid: null, shells: null });
    expect(JSON.stringify(await api.caller(viewer).runners.live())).not.toContain("build-box-7");
  });
});
