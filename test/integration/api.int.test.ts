// The tRPC API on a real database: tasks through the procedures (actor recorded),
// timelines (the sessions list is proven in sessions-list.int.test.ts), and over HTTP (fetch adapter)
// the error mapping: AppError codes → tRPC codes and statuses, flattened zod errors,
// internal errors without their details. Plus a scan of every procedure's output for
// password hashes and token hashes.
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc, MAX_BATCH_SIZE, MAX_BODY_BYTES } from "../../server/api/handler";
import { appRouter } from "../../server/api/root";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, callPath, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let viewer: CurrentUser;
let operator: CurrentUser;
let admin: CurrentUser;
let projectId: string;
const agents = { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }], planner: [{ reply: "i" }] };

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  [viewer, operator, admin] = [await api.user("viewer"), await api.user("operator"), await api.user("admin")];
  projectId = await h.project("api", agents);
});

/** A tRPC request through the fetch adapter, as the route serves it. */
async function trpcHttp(path: string, init: { input?: unknown; mutation?: boolean; headers?: Record<string, string> } = {}) {
  const url = new URL(`http://cats.test/api/trpc/${path}`);
  if (!init.mutation && init.input !== undefined) url.searchParams.set("input", JSON.stringify(init.input));
  const req = new Request(url, {
    method: init.mutation ? "POST" : "GET",
    headers: { "content-type": "application/json", ...init.headers },
    ...(init.mutation ? { body: JSON.stringify(init.input ?? {}) } : {}),
  });
  const res = await handleTrpc(req, createContextFactory(api.source));
  return {
    status: res.status,
    body: (await res.json()) as { result?: { data: unknown }; error?: { message: string; code: number; data: Record<string, unknown> } },
  };
}

describe("tasks", () => {
  it("an operator starts, follows up and cancels; each event records that user as the actor; a viewer reads the summary", async () => {
    const op = api.caller(operator);
    const { sessionId, version } = await op.tasks.start({ projectId, prompt: "Make sum add", mode: "proposal" });
    expect(version).toBeGreaterThan(0);
    const summary = await api.caller(viewer).tasks.get({ sessionId });
    expect(summary).toEqual({
      sessionId,
      version,
      fsm: "proposal_coder",
      status: "active",
      outcome: null,
      iteration: expect.any(Number),
      workflow: "review_loop",
      mode: "proposal",
      prompt: "Make sum add",
      project: { id: projectId, name: `Project ${projectId}` },
      step: expect.objectContaining({ state: "proposal_coder", role: "coder" }),
    });
    await op.tasks.followUp({ sessionId, text: "Also handle negatives" });
    await op.tasks.cancel({ sessionId, reason: "changed my mind" });
    const events = await db.store.readStream(sessionId);
    expect(new Set(events.map((e) => `${e.metadata.actor.kind}:${e.metadata.actor.id}`))).toEqual(new Set([`user:${operator.id}`]));
    expect(await api.caller(viewer).tasks.get({ sessionId })).toMatchObject({ status: "finished", outcome: "cancelled" });

    const timeline = await api.caller(viewer).sessions.timeline({ sessionId });
    expect(timeline.map((t) => t.type)).toContain("OperatorMessagePosted");
    expect(timeline.every((t) => t.actor === `user:${operator.id}`)).toBe(true);
    const tail = await api.caller(viewer).sessions.timeline({ sessionId, afterVersion: 2, limit: 2 });
    expect(tail.map((t) => t.version)).toEqual([3, 4]);
  });

  it("rerun forks the original with lineage; the original is untouched", async () => {
    const op = api.caller(operator);
    const { sessionId } = await op.tasks.start({ projectId, prompt: "Rerun me", mode: "proposal" });
    const before = await db.store.readStream(sessionId);
    const rerun = await op.tasks.rerun({ sessionId });
    expect(rerun.parentId).toBe(sessionId);
    expect(rerun.sessionId).not.toBe(sessionId);
    expect(await db.store.readStream(sessionId)).toEqual(before);
    const { items } = await api.caller(viewer).sessions.list({ limit: 200 });
    expect(items.find((s) => s.id === rerun.sessionId)).toMatchObject({ parentId: sessionId, createdBy: `user:${operator.id}` });
  });

  it("domain errors keep their meaning: unknown session NOT_FOUND, confirm before the proposal is ready CONFLICT, unknown project NOT_FOUND", async () => {
    const op = api.caller(operator);
    await expect(api.caller(viewer).tasks.get({ sessionId: "s-nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const { sessionId } = await op.tasks.start({ projectId, prompt: "Too early", mode: "proposal" });
    await expect(op.tasks.confirm({ sessionId })).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringMatching(/moved on/) });
    await expect(op.tasks.start({ projectId: "no-such-project", prompt: "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(op.tasks.start({ projectId, prompt: "x", workflow: "nope" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(api.caller(viewer).sessions.timeline({ sessionId: "s-nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("over HTTP (fetch adapter)", () => {
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it("maps CONFLICT to 409, NOT_FOUND to 404, and input errors to 400 with flattened zod field errors", async () => {
    const token = (await api.caller({ ...operator, via: "session" }).tokens.create({ name: "http" })).token;
    const { sessionId } = await api.caller(operator).tasks.start({ projectId, prompt: "http", mode: "proposal" });

    const conflict = await trpcHttp("tasks.confirm", { mutation: true, input: { sessionId }, headers: bearer(token) });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error?.data).toMatchObject({ code: "CONFLICT", httpStatus: 409, zodError: null });

    const missing = await trpcHttp("tasks.get", { input: { sessionId: "s-missing" }, headers: bearer(token) });
    expect(missing.status).toBe(404);

    const invalid = await trpcHttp("tasks.start", {
      mutation: true,
      input: { projectId, prompt: "   ", mode: "Sideways!" },
      headers: bearer(token),
    });
    expect(invalid.status).toBe(400);
    const zodError = invalid.body.error?.data.zodError as { fieldErrors: Record<string, string[]> };
    expect(Object.keys(zodError.fieldErrors).sort()).toEqual(["mode", "prompt"]);
    expect(zodError.fieldErrors.prompt).toEqual(["say what the task is"]);
    // The message reads as the first problems, not as a JSON dump of zod's issues.
    expect(invalid.body.error?.message).toMatch(
      /^invalid input: (prompt: say what the task is; mode: .+|mode: .+; prompt: say what the task is)$/,
    );
  });

  it("caps a batch at MAX_BATCH_SIZE calls and refuses a body over MAX_BODY_BYTES before reading it", async () => {
    const token = (await api.caller({ ...operator, via: "session" }).tokens.create({ name: "caps" })).token;
    const batch = async (n: number) => {
      const paths = Array.from({ length: n }, () => "sessions.list").join(",");
      const res = await handleTrpc(
        new Request(`http://cats.test/api/trpc/${paths}?batch=1`, { headers: bearer(token) }),
        createContextFactory(api.source),
      );
      return res.status;
    };
    expect(await batch(MAX_BATCH_SIZE)).toBe(200);
    expect(await batch(MAX_BATCH_SIZE + 1)).toBe(400);
    const big = "x".repeat(MAX_BODY_BYTES + 1);
    const res = await handleTrpc(
      new Request("http://cats.test/api/trpc/tasks.start", {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json", "content-length": String(big.length) },
        body: big,
      }),
      createContextFactory(api.source),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringMatching(/at most 1048576 are accepted/),
        code: -32013,
        data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, path: "tasks.start", zodError: null },
      },
    });
  });

  it("401 without credentials, 403 for a viewer's mutation, 200 with a session cookie", async () => {
    expect((await trpcHttp("sessions.list")).status).toBe(401);
    const viewerCookie = await api.sessionCookie(viewer.id);
    expect(
      (await trpcHttp("tasks.start", { mutation: true, input: { projectId, prompt: "x" }, headers: { cookie: viewerCookie } })).status,
    ).toBe(403);
    const ok = await trpcHttp("sessions.list", { headers: { cookie: viewerCookie } });
    expect(ok.status).toBe(200);
    expect(ok.body.result?.data).toMatchObject({ items: expect.any(Array) });
  });

  it("hides the details of unexpected errors", async () => {
    const broken = createContextFactory(() => ({
      ...api.source(),
      deps: { ...api.deps, store: { readStream: () => Promise.reject(new Error("relation secret_table does not exist")) } as never },
    }));
    const cookie = await api.sessionCookie(viewer.id);
    const req = new Request(`http://cats.test/api/trpc/tasks.get?input=${encodeURIComponent(JSON.stringify({ sessionId: "s-x" }))}`, {
      headers: { cookie },
    });
    const res = await handleTrpc(req, broken);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("secret_table");
    expect(text).toContain("internal error");
  });
});

describe("no procedure returns a password hash or a token hash", () => {
  /** A valid input for every procedure (a missing entry fails the first test). */
  const validCalls = (s: {
    sessionId: string;
    forgeId: string;
    conversationId: string;
    userId: string;
    tokenId: string;
    invitationId: string;
    invitationToken: string;
  }): Record<string, unknown> => ({
    "auth.me": undefined,
    "tasks.start": { projectId, prompt: "scan", mode: "proposal" },
    "tasks.confirm": { sessionId: s.sessionId },
    "tasks.followUp": { sessionId: s.sessionId, text: "hello" },
    "tasks.cancel": { sessionId: s.sessionId },
    "tasks.rerun": { sessionId: s.sessionId },
    "tasks.get": { sessionId: s.sessionId },
    "tasks.runtimeContext": { sessionId: s.sessionId },
    "sessions.list": {},
    "sessions.counts": {},
    "sessions.timeline": { sessionId: s.sessionId },
    "sessions.feedback": { sessionId: s.sessionId },
    "sessions.state": { sessionId: s.sessionId },
    "sessions.compare": { a: s.sessionId, b: s.forgeId },
    "sessions.fork": { sessionId: s.sessionId, atVersion: 3 },
    "sessions.revert": { sessionId: s.sessionId, to: "proposal_coder" },
    "sessions.modify": { sessionId: s.sessionId, change: "scan" },
    "sessions.resume": { sessionId: s.sessionId },
    "projects.list": undefined,
    "projects.workflows": undefined,
    "runners.list": undefined,
    "runners.live": undefined,
    "tokens.create": { name: "scan" },
    "tokens.list": undefined,
    "tokens.revoke": { id: s.tokenId },
    "users.list": undefined,
    "users.signIns": { limit: 5 },
    "users.create": { email: `scan-${Date.now()}@cats.test`, name: "Scan", password: "correct horse battery" },
    "users.setRole": { userId: s.userId, role: "operator" },
    "users.disable": { userId: s.userId, disabled: false },
    "tokens.listAll": undefined,
    "invitations.create": { role: "viewer" },
    "invitations.list": undefined,
    "invitations.revoke": { id: s.invitationId },
    "invitations.view": { token: s.invitationToken },
    "invitations.accept": {
      token: s.invitationToken,
      name: "Scan",
      email: `scan-i-${Date.now()}@cats.test`,
      password: "correct horse battery",
    },
    "replay.at": { sessionId: s.sessionId },
    "lineage.tree": { sessionId: s.sessionId },
    "settings.projects": undefined,
    "settings.shells": undefined,
    "settings.brains": undefined,
    "settings.checkBrain": { projectId, source: "project", brainId: "no-such-brain" },
    "settings.workflows": undefined,
    "settings.effective": { projectId },
    "settings.history": { projectId },
    "settings.configureProject": { projectId, maxIterations: 3 },
    "settings.configureServer": { maxAttempts: 4 },
    "settings.revert": { scope: "server", version: 1 },
    "settings.roles": { projectId },
    "settings.checkRole": { projectId, role: "planner", agent: { kind: "scripted", id: "p", responses: [{ reply: "x" }] } },
    "settings.testDelivery": { projectId },
    "projects.readiness": { projectId },
    "inbox.list": {},
    "inbox.acknowledge": { sessionId: s.sessionId },
    "inbox.live": {},
    "intake.show": { projectId },
    "intake.setRules": { projectId, rules: { provider: "github", repository: "acme/scan" } },
    "intake.setSecret": { projectId, secret: "scan-secret-0123456789abcdef" },
    "intake.held": {},
    "intake.issueOf": { sessionId: s.sessionId },
    "intake.startHeld": { projectId, deliveryId: "no-such-delivery" },
    "intake.dismissHeld": { projectId, deliveryId: "no-such-delivery" },
    "projects.upsert": { id: "scan", name: "Scan", repoPath: h.repo, allowlist: [], agents: {} },
    "live.session": { sessionId: s.sessionId },
    "live.updates": { sessionId: s.sessionId },
    "live.older": { sessionId: s.sessionId, beforeVersion: 2 },
    "live.output": { sessionId: s.sessionId, blob: "0".repeat(64) },
    "ops.validateConfig": { projectId },
    "ops.detectShells": {},
    "ops.checkBrains": { projectId },
    "ops.go": { projectId, prompt: "scan", agent: "coder" },
    "ops.rebuildProjections": undefined,
    "forge.new": { projectId, idea: "scan" },
    "forge.status": { sessionId: s.forgeId },
    "forge.artifact": { sessionId: s.forgeId, hash: "0".repeat(64) },
    "forge.edit": { sessionId: s.forgeId, path: ".forge/prd.md", content: "x", baseHash: null },
    "forge.feedback": { sessionId: s.forgeId, text: "scan" },
    "forge.pass": { sessionId: s.forgeId },
    "forge.choose": { sessionId: s.forgeId, choice: "retry" },
    "conversations.start": { projectId, mode: "free_discussion" },
    "conversations.post": { sessionId: s.conversationId, text: "hello" },
    "conversations.setMode": { sessionId: s.conversationId, mode: "voting" },
    "conversations.progress": { sessionId: s.conversationId, kind: "decision", detail: "scan" },
    "conversations.list": {},
    "conversations.get": { sessionId: s.conversationId },
    "conversations.agents": { projectId },
    "conversations.mode": { sessionId: s.conversationId },
    "conversations.live": { sessionId: s.conversationId },
    "conversations.terminate": { sessionId: s.conversationId },
    "modes.list": undefined,
    "sessions.deliver": { sessionId: s.sessionId },
    "sessions.deliveries": { sessionId: s.sessionId },
    "sessions.approveDelivery": { sessionId: s.sessionId },
    "sessions.deliveryApprovals": { sessionId: s.sessionId },
    "sessions.cleanUp": { sessionId: s.sessionId },
    "sessions.cleanUpStatus": { sessionId: s.sessionId },
    "sessions.prune": { olderThanDays: 30 },
    "usage.session": { sessionId: s.sessionId },
    "usage.report": { days: 7 },
    "bakeOffView.of": { sessionId: s.sessionId },
    "bakeOffView.comparison": { sessionId: s.sessionId },
    "bakeOffView.updates": { sessionId: s.sessionId },
    "agentRecord.stats": { projectId },
    "bakeOffs.get": { sessionId: s.sessionId },
    "bakeOffs.judge": { sessionId: s.sessionId },
    "bakeOffs.pick": { sessionId: s.sessionId, contenderId: "c1" },
    "bakeOffs.dismiss": { sessionId: s.sessionId },
  });

  it("covers every procedure, and no output (or error) contains a hash", async () => {
    const sessionId = (await api.caller(operator).tasks.start({ projectId, prompt: "scan", mode: "proposal" })).sessionId;
    const forgeId = (await api.caller(operator).forge.new({ projectId, idea: "scan" })).sessionId;
    const token = await api.caller(admin).tokens.create({ name: "to revoke" });
    const conversationId = (await api.caller(operator).conversations.start({ projectId })).sessionId;
    const toRevoke = await api.caller(admin).invitations.create({ role: "viewer" });
    const toAccept = await api.caller(admin).invitations.create({ role: "viewer" });
    const calls = validCalls({
      sessionId,
      forgeId,
      conversationId,
      userId: viewer.id,
      tokenId: token.id,
      invitationId: toRevoke.id,
      invitationToken: toAccept.token,
    });
    expect(Object.keys(calls).sort()).toEqual(Object.keys(appRouter._def.procedures).sort());

    const secrets = (
      await db.pool.query<{ s: string }>(
        "SELECT password_hash AS s FROM users WHERE password_hash IS NOT NULL UNION ALL SELECT token_hash FROM api_tokens UNION ALL SELECT token_hash FROM invitations",
      )
    ).rows.map((r) => r.s);
    expect(secrets.length).toBeGreaterThan(3);
    const outputs: string[] = [];
    const failed: string[] = [];
    for (const [path, input] of Object.entries(calls)) {
      const out = await callPath(api.caller(admin), path, input).catch((err: Error & { code?: string }) => {
        failed.push(`${path}: ${err.code ?? "?"}`);
        return { error: err.message };
      });
      outputs.push(JSON.stringify(out));
    }
    // Every call ran as admin with a valid input: these are the only refusals, each for its own
    // reason (so no output goes unscanned because a call was refused for another one).
    expect(failed.sort()).toEqual([
      "bakeOffView.comparison: NOT_FOUND", // the session is no bake-off
      // Neither is this one a bake-off's parent: its actions are refused, naming why.
      "bakeOffs.dismiss: PRECONDITION_FAILED",
      "bakeOffs.get: PRECONDITION_FAILED",
      "bakeOffs.judge: PRECONDITION_FAILED",
      "bakeOffs.pick: PRECONDITION_FAILED",
      // The pipeline's first draft is still to be written (no runner here): nothing waits for a person.
      "forge.artifact: NOT_FOUND", // no version of any artifact has that hash
      "forge.choose: CONFLICT",
      "forge.edit: CONFLICT",
      "forge.feedback: CONFLICT",
      "forge.pass: CONFLICT",
      "inbox.acknowledge: CONFLICT", // the session needs nobody yet: its roundtable is running
      "intake.dismissHeld: NOT_FOUND", // no delivery of this project was held
      "intake.setSecret: PRECONDITION_FAILED", // a caller without the web process's NEXTAUTH_SECRET cannot seal one
      "intake.startHeld: NOT_FOUND", // no delivery of this project was held
      "live.output: NOT_FOUND", // no output blob of this session has that hash
      "sessions.approveDelivery: PRECONDITION_FAILED", // only an approved session's delivery is approved
      "sessions.cleanUp: PRECONDITION_FAILED", // resumed above: only a finished session's workspace is cleaned up
      "sessions.deliver: PRECONDITION_FAILED", // only an approved session can be delivered
      "settings.checkBrain: NOT_FOUND", // no such brain: checking a real one would call it
      "tasks.confirm: CONFLICT", // the proposal's roundtable has not finished
    ]);
    const all = outputs.join("\n");
    expect(all).not.toMatch(/argon2|passwordHash|password_hash|tokenHash|token_hash/);
    for (const secret of secrets) expect(all).not.toContain(secret);
  });

  it("tasks.runtimeContext shows what a run was started with (its agents by role); operators only", async () => {
    const { sessionId } = await api.caller(operator).tasks.start({ projectId, prompt: "context please", mode: "implementation" });
    const context = await api.caller(operator).tasks.runtimeContext({ sessionId });
    expect(context).toMatchObject({
      sessionId,
      recorded: false,
      // The project record's scripted agents, by role (the harness names them <role>-sim).
      roles: {
        coder: { agentId: "coder-sim", source: "project" },
        reviewer: { agentId: "reviewer-sim", source: "project" },
        tester: { agentId: "tester-sim", source: "project" },
      },
    });
    expect(Object.keys(context?.roles ?? {}).sort()).toEqual(["coder", "reviewer", "tester"]);
    expect(context?.agents.coder).toMatchObject({ agentId: "coder-sim" });
    await expect(api.caller(viewer).tasks.runtimeContext({ sessionId })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(api.caller(operator).tasks.runtimeContext({ sessionId: "s-missing" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
