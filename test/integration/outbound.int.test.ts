// The server's own outbound calls (docs/configuration.md, "Outbound calls"): a webhook or a
// brain on a loopback address is refused when it is saved and when it is called, unless the
// admin allows its host in access.privateHosts (settings.json, the server's overrides or the
// project's); the runner reads the allowance at each call, so a withdrawn one refuses the next
// delivery; a failed delivery is in the timeline as its class, never in the receiver's words;
// a brain check sends nothing to a host it may not reach. Real receivers on 127.0.0.1, a real
// runner, real PostgreSQL.
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readTimeline } from "../../server/events/timeline";
import { configureProject, registerProject } from "../../server/projects/config-edits";
import { upsertProject } from "../../server/projects/projects";
import { startTask } from "../../server/tasks/commands";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { startBrainStub, type BrainStub } from "../helpers/brains-stub";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { commitFiles, createHarness, ofType, reviewChanges, tempDir, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let api: ApiFixture;
let dataDir: string;
let receiver: http.Server;
let port = 0;
/** Requests the receiver got, and what it answers next: a status and a body. */
const received: string[] = [];
let answer = { status: 200, body: "ok" };
/** A TCP service that is not HTTP (what a port scan would find): it greets and hangs up. */
let notHttp: net.Server;
let notHttpPort = 0;
let stub: BrainStub;

const deps = () => ({ store: db.store, pool: db.pool });
/** settings.json of this file's data directory, as an admin writes it. */
const writeSettings = (settings: Record<string, unknown>) =>
  fs.writeFileSync(path.join(dataDir, "settings.json"), JSON.stringify(settings));

beforeAll(async () => {
  dataDir = tempDir("catcafe-outbound-");
  process.env.CATCAFE_DATA_DIR = dataDir;
  db = await createTestDatabase();
  h = createHarness(db);
  api = createApiFixture(db);
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(req.url!);
      res.writeHead(answer.status, { "content-type": "text/plain" });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  port = (receiver.address() as AddressInfo).port;
  notHttp = net.createServer((socket) => socket.resume().end("SSH-2.0-OpenSSH_9.6 banner of the service\r\n"));
  await new Promise<void>((r) => notHttp.listen(0, "127.0.0.1", r));
  notHttpPort = (notHttp.address() as AddressInfo).port;
  stub = await startBrainStub((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ object: "list", data: [{ id: "stub-model", object: "model" }] }));
  });
  await h.startRunner();
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  await new Promise((r) => notHttp.close(r));
  await stub.close();
  delete process.env.CATCAFE_DATA_DIR;
});

beforeEach(() => {
  writeSettings({});
  received.length = 0;
  answer = { status: 200, body: "ok" };
});

const agents = {
  coder: { kind: "scripted" as const, id: "coder-sim", responses: [{ reply: "Proposal: change sum()." }] },
  reviewer: { kind: "scripted" as const, id: "reviewer-sim", responses: [{ reply: "Looks risky." }, { reply: reviewChanges() }] },
  tester: { kind: "scripted" as const, id: "tester-sim", responses: [{ reply: "Testable." }, { reply: testPlan() }] },
};
const project = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: id,
  repoPath: h.repo,
  allowlist: [["node", "--test", "**"]],
  agents,
  ...extra,
});
const hookUrl = (path = "/hook", at = port) => `http://127.0.0.1:${at}${path}`;

/** What a webhook step's attempt recorded: StepFailed's fields, or StepCompleted's output. */
interface StepAttempt {
  errorClass?: string;
  message?: string;
  retryAt?: string | null;
  output?: unknown;
}

/**
 * Starts a task on `projectId` and waits until its webhook step ends (or has made `attempts`
 * attempts, for one that is retried for minutes); the step's recorded attempts and the session.
 */
async function deliveryOf(projectId: string, options: { attempts?: number } = {}) {
  const { sessionId } = await startTask(deps(), { projectId, prompt: "Make sum() add", mode: "proposal" }, testActor);
  await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
  const deadline = Date.now() + 20_000;
  for (;;) {
    const events = await db.store.readStream(sessionId);
    const hook = ofType<{ stepId: string; kind: string }>(events, "StepScheduled").find((s) => s.kind === "webhook");
    const attempts = hook
      ? events.filter((e) => (e.data as { stepId?: string }).stepId === hook.stepId && ["StepCompleted", "StepFailed"].includes(e.type))
      : [];
    const last = attempts.at(-1);
    const ended = last && (last.type === "StepCompleted" || (last.data as { retryAt: string | null }).retryAt === null);
    const done = ended || (options.attempts !== undefined && attempts.length >= options.attempts);
    if (done) return { sessionId, events, attempts: attempts.map((e) => ({ type: e.type, ...(e.data as StepAttempt) })) };
    if (Date.now() > deadline) throw new Error(`the webhook step did not end: ${JSON.stringify(attempts)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a webhook on a loopback address", () => {
  it("is refused when saved without the admin's allowance, naming access.privateHosts; saved with it, and delivered", async () => {
    const without = await rejection(registerProject(deps(), project("hook-a", { webhook: { url: hookUrl(), format: "json" } }), testActor));
    expect(without.code).toBe("INVALID_INPUT");
    expect(without.details).toEqual({
      fieldErrors: {
        webhook: [
          "webhook.url: 127.0.0.1 is on a loopback, link-local or private address (127.0.0.1); an admin can allow it in the settings (access.privateHosts)",
        ],
      },
    });
    // The dashboard's form: the same refusal, beside the webhook field.
    await registerProject(deps(), project("hook-a"), testActor);
    const formRefusal = await rejection(configureProject(deps(), { projectId: "hook-a", webhookUrl: hookUrl() }, testActor));
    expect(Object.keys(formRefusal.details!.fieldErrors as object)).toEqual(["webhookUrl"]);
    expect(formRefusal.message).toContain("access.privateHosts");
    // A rule for another port of the host is no allowance for this one.
    const otherPort = { settings: { access: { privateHosts: [`127.0.0.1:${port + 1}`] } } };
    await rejection(registerProject(deps(), project("hook-a", { ...otherPort, webhook: { url: hookUrl(), format: "json" } }), testActor));
    expect(received).toEqual([]);

    // The project's own allowance, naming the host and its port.
    const allowed = { settings: { access: { privateHosts: [`127.0.0.1:${port}`] } }, webhook: { url: hookUrl(), format: "json" } };
    await registerProject(deps(), project("hook-a", allowed), testActor);
    const { attempts } = await deliveryOf("hook-a");
    expect(attempts).toEqual([expect.objectContaining({ type: "StepCompleted", output: { delivered: true, status: 200 } })]);
    expect(received).toEqual(["/hook"]);
  });

  it("settings.json's allowance counts for every project, in the form too", async () => {
    writeSettings({ access: { privateHosts: ["127.0.0.1"] } });
    await registerProject(deps(), project("hook-b"), testActor);
    await configureProject(deps(), { projectId: "hook-b", webhookUrl: hookUrl("/from-the-form") }, testActor);
    expect((await deliveryOf("hook-b")).attempts.map((a) => a.type)).toEqual(["StepCompleted"]);
    expect(received).toEqual(["/from-the-form"]);
  });

  it("withdrawn after it was saved: the next delivery is refused, recorded as refused, and nothing is sent", async () => {
    writeSettings({ access: { privateHosts: ["127.0.0.1"] } });
    await registerProject(deps(), project("hook-c", { webhook: { url: hookUrl("/T0KEN-in-the-path"), format: "json" } }), testActor);
    writeSettings({});
    const { sessionId, attempts } = await deliveryOf("hook-c");
    const refused =
      "webhook not delivered: refused: its host is on a loopback, link-local or private address; an admin can allow it in access.privateHosts";
    // Not retried: only the admin can change the answer.
    expect(attempts).toEqual([expect.objectContaining({ type: "StepFailed", errorClass: "tool_error", message: refused, retryAt: null })]);
    expect(received).toEqual([]);
    const timeline = (await readTimeline(db.pool, sessionId)).map((e) => e.summary);
    expect(timeline).toContain(`Step failed (attempt 1): tool_error: ${refused}`);
    // Neither the URL's token nor the address it resolves to is in the session.
    const recorded = JSON.stringify(await db.store.readStream(sessionId));
    expect(recorded).not.toContain("T0KEN");
    expect(recorded).not.toContain(`127.0.0.1:${port}`);
  });

  it("a record saved before the rule (written directly) is refused at delivery just the same", async () => {
    await upsertProject(db.pool, project("hook-d", { webhook: { url: hookUrl(), format: "json" } }));
    const { attempts } = await deliveryOf("hook-d");
    expect(attempts).toEqual([
      expect.objectContaining({ type: "StepFailed", message: expect.stringMatching(/^webhook not delivered: refused: /) }),
    ]);
    expect(received).toEqual([]);
  });
});

describe("what a failed delivery records", () => {
  const allowAll = { settings: { access: { privateHosts: ["127.0.0.1"] } } };

  it("a receiver answering 401: http_error with the status, not retried, and not a word of its body", async () => {
    answer = { status: 401, body: "Unauthorized: signing secret mismatch for tenant acme-internal" };
    await registerProject(deps(), project("hook-401", { ...allowAll, webhook: { url: hookUrl(), format: "json" } }), testActor);
    const { sessionId, attempts } = await deliveryOf("hook-401");
    const message = "webhook not delivered: http_error 401 (not retried: the receiver refuses this request)";
    expect(attempts).toEqual([expect.objectContaining({ type: "StepFailed", errorClass: "tool_error", message, retryAt: null })]);
    expect(received).toEqual(["/hook"]);
    expect((await readTimeline(db.pool, sessionId)).map((e) => e.summary)).toContain(`Step failed (attempt 1): tool_error: ${message}`);
    const recorded = JSON.stringify(await db.store.readStream(sessionId));
    for (const words of ["Unauthorized", "signing secret", "acme-internal"]) expect(recorded).not.toContain(words);
  });

  it("a port that is not a web server, or that nothing listens on: unreachable, retried, with none of what answered", async () => {
    await registerProject(
      deps(),
      project("hook-ssh", { ...allowAll, webhook: { url: hookUrl("/", notHttpPort), format: "json" } }),
      testActor,
    );
    const ssh = await deliveryOf("hook-ssh", { attempts: 2 });
    for (const a of ssh.attempts)
      expect(a).toMatchObject({
        type: "StepFailed",
        errorClass: "provider_network_error",
        message: "webhook not delivered: unreachable",
        retryAt: expect.any(String),
      });
    const recorded = JSON.stringify(ssh.events);
    for (const words of ["SSH", "banner", "Parse Error", "HPE_", "hang up", "other side", "ECONN"]) expect(recorded).not.toContain(words);

    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await registerProject(
      deps(),
      project("hook-closed", { ...allowAll, webhook: { url: hookUrl("/", closedPort), format: "json" } }),
      testActor,
    );
    const refused = await deliveryOf("hook-closed", { attempts: 2 });
    expect(new Set(refused.attempts.map((a) => a.message))).toEqual(new Set(["webhook not delivered: unreachable"]));
    expect(JSON.stringify(refused.events)).not.toContain("ECONNREFUSED");
  }, 60_000);
});

describe("brains on a loopback address", () => {
  const repoBrainProject = "brains-repo";
  let repo: string;

  beforeAll(async () => {
    // A repository that defines its own brain, at the stub: anyone who can commit chose that URL.
    repo = tempDir("catcafe-outbound-repo-");
    commitFiles(repo, {
      ".catcafe/version.json": JSON.stringify({ configVersion: "1.0" }),
      ".catcafe/brains.json": JSON.stringify({
        brains: { "repo-brain": { provider: "openai", model: "stub-model", baseUrl: `${stub.url}/v1` } },
      }),
    });
    await upsertProject(db.pool, { ...project(repoBrainProject), repoPath: repo });
  });

  it("an operator's check of a repository's brain sends nothing without the allowance, and says which setting allows it; with it the check runs", async () => {
    const operator = api.caller(await api.user("operator"));
    const admin = api.caller(await api.user("admin"));
    const target = { projectId: repoBrainProject, source: "config" as const, brainId: "repo-brain" };
    const refused = await operator.settings.checkBrain(target);
    expect(refused).toMatchObject({ ok: false, connectivity: "refused", latencyMs: null });
    expect(refused.message).toContain("access.privateHosts");
    const [item] = await admin.ops.checkBrains({ projectId: repoBrainProject, brains: ["repo-brain"] });
    expect(item).toMatchObject({ ok: false, result: { connectivity: "refused" } });
    expect(item!.message).toContain("access.privateHosts");
    expect(stub.requests).toEqual([]);

    // The admin allows the stub's host in the project's settings: the check reaches it.
    const allowance = { access: { privateHosts: [new URL(stub.url).host] } };
    await registerProject(deps(), { ...project(repoBrainProject), repoPath: repo, settings: allowance }, testActor);
    const checked = await operator.settings.checkBrain(target);
    expect(checked).toMatchObject({ ok: true, connectivity: "ok", modelExists: true });
    expect(stub.requests.map((r) => r.url)).toEqual(["/v1/models"]);
  });

  it("a task's brain is refused at its call without the allowance (nothing sent); with settings.json's, the next task's call goes through", async () => {
    const brain = { kind: "openai" as const, id: "stub-coder", baseUrl: stub.url, model: "stub-model", rateLimit: { minIntervalMs: 0 } };
    // Saved before the rule (directly): the runner judges it at the call.
    await upsertProject(db.pool, project("brain-run", { agents: { ...agents, coder: brain } }));
    const before = stub.requests.length;
    const { sessionId } = await startTask(deps(), { projectId: "brain-run", prompt: "Discuss sum()", mode: "proposal" }, testActor);
    await h.waitFor(sessionId, "the session to fail", (s) => s.status === "finished");
    const failed = ofType<{ errorClass: string; message: string; retryAt: string | null }>(
      await db.store.readStream(sessionId),
      "StepFailed",
    );
    expect(failed).toEqual([
      expect.objectContaining({
        errorClass: "tool_error",
        retryAt: null,
        message: `brain stub-coder refused: ${stub.url} is on a loopback, link-local or private address; an admin can allow its host in access.privateHosts`,
      }),
    ]);
    expect(stub.requests.length).toBe(before);

    writeSettings({ access: { privateHosts: ["127.0.0.1"] } });
    const next = await startTask(deps(), { projectId: "brain-run", prompt: "Discuss sum() again", mode: "proposal" }, testActor);
    await h.waitFor(next.sessionId, "the brain's call", () => stub.requests.length > before, 20_000);
    expect(stub.requests.at(-1)!.method).toBe("POST");
  });
});
