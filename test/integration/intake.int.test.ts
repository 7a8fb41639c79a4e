// Intake from the issue trackers (docs/intake.md), through the receivers' handler with deliveries
// signed as GitHub and GitLab sign them, payloads from @octokit/webhooks-examples (GitHub) and
// shaped as GitLab's documented hooks, the tracker APIs as local stand-ins, and a real runner:
// a labelled issue starts a task waiting for a confirm with the issue's text and
// TaskStartedFromIssue; autoConfirm confirms it as system:intake; a comment command needs write
// access (else held in the inbox, started or dismissed there by a person); bad and missing
// signatures, unknown repositories, replays and oversized bodies are refused with nothing
// recorded; the webhook secret never reaches an event, an export or a log line; viewers cannot
// set rules or secrets.
import crypto from "node:crypto";
import examples from "@octokit/webhooks-examples";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createCaller } from "../../server/api/root";
import { ZIntakeSettings } from "../../server/config/schemas";
import { exportSession } from "../../server/export";
import { dismissHeld, HELD_SQL, listHeld, startHeld } from "../../server/intake/inbox";
import { receiveDelivery, type ReceiverDeps } from "../../server/intake/receive";
import { setWebhookSecret } from "../../server/intake/secret";
import { forkSession } from "../../server/tasks/fork";
import { logger } from "../../server/log";
import { createApiFixture, TEST_SECRET } from "../helpers/api";
import { startBrainStub, type BrainStub, type StubRequest } from "../helpers/brains-stub";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let github: BrainStub;
let gitlab: BrainStub;
const TOKEN_ENV = "CATCAFE_TEST_INTAKE_TOKEN";
const logged: string[] = [];
let logLevel = "info";

beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
  github = await startBrainStub();
  gitlab = await startBrainStub();
  // Every line the server logs, as written (after its own redaction), children's too: they share the stream.
  const stream = (logger as unknown as Record<symbol, { write: (line: string) => unknown }>)[pino.symbols.streamSym]!;
  // At info, as a server logs (the tests' own level is quieter), kept here rather than printed.
  logLevel = logger.level;
  logger.level = "info";
  vi.spyOn(stream, "write").mockImplementation((line: string) => {
    logged.push(line);
    return true;
  });
});
afterAll(async () => {
  vi.restoreAllMocks();
  logger.level = logLevel;
  await github?.close();
  await gitlab?.close();
});

const api = () => createApiFixture(db);
const deps = (): ReceiverDeps => ({
  store: db.store,
  pool: db.pool,
  key: TEST_SECRET,
  env: { [TOKEN_ENV]: "ghp_intakeTokenValue0123456789abcdefAB" },
});
const agents = {
  coder: [{ reply: "Proposal: change sum()." }],
  reviewer: [{ reply: "Looks fine." }],
  tester: [{ reply: "Testable." }],
};

type Rules = Record<string, unknown>;
async function intakeProject(provider: "github" | "gitlab", rules: Rules = {}, sameRepositoryAs?: string) {
  const id = uniqueId("intake");
  const repository = sameRepositoryAs ?? (provider === "github" ? `acme/${id}` : `group/${id}`);
  await h.project(id, agents, {
    settings: {
      access: { privateHosts: ["127.0.0.1"] },
      delivery: { tokenEnv: TOKEN_ENV },
      intake: {
        provider,
        repository,
        apiBaseUrl: provider === "github" ? github.url : `${gitlab.url}/api/v4`,
        botUser: "catcafe-bot",
        triggers: { label: {}, comment: {}, assignment: {} },
        ...rules,
      },
    },
  });
  const secret = `whsec-${crypto.randomBytes(16).toString("hex")}`;
  await setWebhookSecret({ store: db.store, pool: db.pool, key: TEST_SECRET }, { projectId: id, secret }, testActor);
  return { id, repository, secret };
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
/** The fields of the published examples a test changes (the rest is sent as published). */
interface ExamplePayload {
  repository: { full_name: string };
  sender: { login: string };
  label: { name: string };
  issue: { number: number; title: string; body: string | null; html_url: string };
  comment: { body: string; user: { login: string } };
}
const githubExample = (event: string, test: (e: Record<string, unknown>) => boolean) =>
  clone(examples.find((e) => e.name === event)!.examples.find((e) => test(e as Record<string, unknown>))) as unknown as ExamplePayload;

function labeled(repository: string, number: number, body: string, label = "catcafe") {
  const p = githubExample("issues", (e) => e.action === "labeled");
  p.repository.full_name = repository;
  p.label.name = label;
  p.issue.number = number;
  p.issue.title = `Fix sum() for issue ${number}`;
  p.issue.body = body;
  p.issue.html_url = `https://github.com/${repository}/issues/${number}`;
  return p;
}

function commented(repository: string, number: number, comment: string, author: string) {
  const p = githubExample("issue_comment", (e) => e.action === "created" && !(e.issue as { pull_request?: unknown }).pull_request);
  p.repository.full_name = repository;
  p.issue.number = number;
  p.issue.title = `Comment issue ${number}`;
  p.issue.body = "The total is off by one.";
  p.issue.html_url = `https://github.com/${repository}/issues/${number}`;
  p.comment.body = comment;
  p.comment.user.login = author;
  p.sender.login = author;
  return p;
}

const sign = (secret: string, body: string) => `sha256=${crypto.createHmac("sha256", secret).update(body).digest("hex")}`;

async function toGithub(event: string, payload: unknown, secret: string | null, deliveryId = crypto.randomUUID(), raw?: string) {
  const body = raw ?? JSON.stringify(payload);
  const headers: Record<string, string> = { "content-type": "application/json", "x-github-event": event, "x-github-delivery": deliveryId };
  if (secret !== null) headers["x-hub-signature-256"] = sign(secret, body);
  const res = await receiveDelivery(
    deps(),
    "github",
    new Request("http://catcafe.test/api/hooks/github", { method: "POST", headers, body }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, deliveryId };
}

/**
 * As GitLab 17.4 on sends it: `Idempotency-Key` names the delivery (a resend keeps it) beside the
 * event's `X-Gitlab-Event-UUID` (a resend has a new one). A null leaves the header out, as older
 * GitLabs do.
 */
async function toGitlab(
  event: string,
  payload: unknown,
  token: string | null,
  deliveryId: string | null = crypto.randomUUID(),
  eventUuid: string | null = crypto.randomUUID(),
) {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-gitlab-event": event,
    ...(deliveryId !== null ? { "idempotency-key": deliveryId } : {}),
    ...(eventUuid !== null ? { "x-gitlab-event-uuid": eventUuid } : {}),
  };
  if (token !== null) headers["x-gitlab-token"] = token;
  const res = await receiveDelivery(
    deps(),
    "gitlab",
    new Request("http://catcafe.test/api/hooks/gitlab", { method: "POST", headers, body }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, deliveryId };
}

/** What a refusal must leave as it was: every event and every delivery row. */
async function recorded() {
  // The sessions other tests started go on in the runner meanwhile: their step events are not counted.
  const e = await db.pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM events WHERE type IN ('SessionCreated', 'TaskStartedFromIssue', 'IntakeHeld', 'IntakeResolved', 'IntakeSecretSet', 'IntakeAutoConfirm')",
  );
  const d = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM intake_deliveries");
  const s = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM sessions");
  return { events: Number(e.rows[0]!.n), deliveries: Number(d.rows[0]!.n), sessions: Number(s.rows[0]!.n) };
}

async function issueEvents(sessionId: string) {
  return (await db.store.readStream(sessionId)).filter((e) => e.type === "TaskStartedFromIssue");
}

const waiting = (id: string) => h.waitFor(id, "waiting for a confirm", (s) => s.fsm === "awaiting_operator_confirm");

describe("GitHub deliveries", () => {
  it("a labelled issue starts a task waiting for a confirm, with the issue's text and TaskStartedFromIssue; a replay and a second label record nothing more", async () => {
    const { id, repository, secret } = await intakeProject("github");
    const leaked = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
    const payload = labeled(repository, 7, `sum(2, 2) returns 5.\nIt should return 4.\nMy token: ${leaked}`);
    const first = await toGithub("issues", payload, secret);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ trigger: "label" });
    const sessionId = String(first.body.started);
    await waiting(sessionId);
    const row = await db.pool.query<{ prompt: string; title: string; project_id: string; created_by: string }>(
      "SELECT prompt, title, project_id, created_by FROM sessions WHERE id = $1",
      [sessionId],
    );
    expect(row.rows[0]).toMatchObject({ project_id: id, title: "#7 Fix sum() for issue 7", created_by: "system" });
    expect(row.rows[0]!.prompt).toContain("sum(2, 2) returns 5.\nIt should return 4.");
    expect(row.rows[0]!.prompt).toContain(`https://github.com/${repository}/issues/7`);
    // A secret pasted into the issue is redacted from the prompt (server/redact.ts, server/config/secrets.ts).
    expect(row.rows[0]!.prompt).toContain("My token: [redacted]");
    expect(row.rows[0]!.prompt).not.toContain(leaked);
    const started = await issueEvents(sessionId);
    expect(started.map((e) => e.data)).toEqual([
      {
        provider: "github",
        repository,
        issueNumber: 7,
        issueUrl: `https://github.com/${repository}/issues/7`,
        title: "Fix sum() for issue 7",
        trigger: "label",
        deliveryId: first.deliveryId,
        sender: payload.sender.login,
      },
    ]);
    expect(started[0]!.metadata.actor).toEqual({ kind: "system", id: "intake" });

    // The same delivery again: answered, nothing more recorded.
    const before = await recorded();
    const replay = await toGithub("issues", payload, secret, first.deliveryId);
    expect(replay).toMatchObject({ status: 200, body: { ignored: "replayed" } });
    expect(await recorded()).toEqual(before);

    // Another label event on the same issue while its session is open: no second task.
    const again = await toGithub("issues", payload, secret);
    expect(again.body).toEqual({ ignored: "open_session", sessionId });
    const after = await recorded();
    expect(after).toEqual({ ...before, deliveries: before.deliveries + 1 });
  });

  it("deliveries that arrive at once start one task: two label events on one issue, and one delivery id sent twice", async () => {
    const { repository, secret } = await intakeProject("github");
    const payload = labeled(repository, 61, "Race me.");
    const answers = await Promise.all([toGithub("issues", payload, secret), toGithub("issues", payload, secret)]);
    const started = answers.filter((a) => a.body.started);
    expect(started).toHaveLength(1);
    expect(answers.find((a) => !a.body.started)!.body).toEqual({ ignored: "open_session", sessionId: started[0]!.body.started });

    const twice = labeled(repository, 62, "Same delivery twice.");
    const id = crypto.randomUUID();
    const same = await Promise.all([toGithub("issues", twice, secret, id), toGithub("issues", twice, secret, id)]);
    expect(same.map((a) => Object.keys(a.body)[0]).sort()).toEqual(["ignored", "started"]);
    expect(same.find((a) => !a.body.started)!.body).toEqual({ ignored: "replayed" });
    const rows = await db.pool.query("SELECT 1 FROM events WHERE type = 'TaskStartedFromIssue' AND data->>'deliveryId' = $1", [id]);
    expect(rows.rowCount).toBe(1);
  });

  it("with autoConfirm the task is confirmed by system:intake once its proposal is ready", async () => {
    const { repository, secret } = await intakeProject("github", { triggers: { label: { autoConfirm: true } } });
    const res = await toGithub("issues", labeled(repository, 3, "Please fix."), secret);
    const sessionId = String(res.body.started);
    const confirmedEvents = async () => (await db.store.readStream(sessionId)).filter((e) => e.type === "OperatorConfirmed");
    for (let i = 0; i < 300 && !(await confirmedEvents()).length; i++) await new Promise((r) => setTimeout(r, 100));
    const confirmed = await confirmedEvents();
    expect(confirmed.map((e) => e.metadata.actor)).toEqual([{ kind: "system", id: "intake" }]);

    // A fork made before the proposal (a person's) runs its roundtable again and waits for a
    // person's confirm: the intake's confirm was the original's, once.
    const auto = (await db.store.readStream(sessionId)).find((e) => e.type === "IntakeAutoConfirm")!;
    const fork = await forkSession({ store: db.store, pool: db.pool }, { sessionId, atVersion: auto.version }, testActor);
    await waiting(fork.sessionId);
    expect((await db.store.readStream(fork.sessionId)).filter((e) => e.type === "OperatorConfirmed")).toEqual([]);
  });

  it("a label rule with workflow bake_off starts a bake-off of its contenders, waiting for the person's confirm; such a rule names its contenders and takes no autoConfirm", async () => {
    const bakeOff = { contenders: [{ coder: "coder-sim" }, { coder: "reviewer-sim", label: "second opinion" }] };
    const { repository, secret } = await intakeProject("github", { triggers: { label: { workflow: "bake_off", bakeOff } } });
    const res = await toGithub("issues", labeled(repository, 11, "sum() is off by one."), secret);
    expect(res.body).toMatchObject({ trigger: "label" });
    const sessionId = String(res.body.started);
    await waiting(sessionId);
    const events = await db.store.readStream(sessionId);
    const started = events.find((e) => e.type === "TaskStarted")!.data as {
      workflow: string;
      mode: string;
      bakeOff: { contenders: Array<{ id: string; coder: string; label: string }> };
    };
    expect([started.workflow, started.mode]).toEqual(["review_loop", "proposal"]);
    expect(started.bakeOff.contenders.map((c) => [c.id, c.coder, c.label])).toEqual([
      ["c1", "coder-sim", "coder-sim"],
      ["c2", "reviewer-sim", "second opinion"],
    ]);
    // Waiting for the confirm: nothing forked, nothing confirmed.
    expect(events.filter((e) => e.type === "BakeOffForked" || e.type === "OperatorConfirmed")).toEqual([]);

    const rules = (trigger: Record<string, unknown>) =>
      ZIntakeSettings.safeParse({ provider: "github", repository: "acme/x", triggers: { label: trigger } });
    const problems = (trigger: Record<string, unknown>) => rules(trigger).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    expect(problems({ workflow: "bake_off" })).toEqual([
      "triggers.label.bakeOff: a bake_off trigger names its contenders (bakeOff.contenders, 2 to 6)",
    ]);
    expect(problems({ workflow: "bake_off", bakeOff, autoConfirm: true })).toEqual([
      "triggers.label.autoConfirm: a bake-off waits for a person's confirm (it forks the contenders): no autoConfirm",
    ]);
    expect(problems({ workflow: "review_loop", bakeOff })).toEqual([
      "triggers.label.bakeOff: contenders are for a bake_off trigger (workflow: bake_off)",
    ]);
    expect(problems({ workflow: "bake_off", bakeOff: { contenders: [{ coder: "coder-sim" }] } })).toEqual([
      "triggers.label.bakeOff.contenders: a bake-off has 2 to 6 contenders",
    ]);
  });

  it("a comment command from a writer starts a task with its instructions; from a reader it is held in the inbox, and a person starts or dismisses it there", async () => {
    const { id, repository, secret } = await intakeProject("github");
    const permissions: Record<string, string> = { "write-cat": "write", "read-cat": "read", "other-cat": "read" };
    github.handle((req: StubRequest, res) => {
      const m = /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/.exec(req.url);
      if (!m || `${m[1]}/${m[2]}` !== repository) return res.writeHead(404).end("{}");
      expect(req.headers.authorization).toBe("token ghp_intakeTokenValue0123456789abcdefAB");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ permission: permissions[m[3]!], role_name: permissions[m[3]!], user: { login: m[3] } }));
    });
    const ok = await toGithub("issue_comment", commented(repository, 11, "/catcafe make it add, with a test", "write-cat"), secret);
    const sessionId = String(ok.body.started);
    expect(ok.body.trigger).toBe("comment");
    const prompt = (await db.pool.query<{ prompt: string }>("SELECT prompt FROM sessions WHERE id = $1", [sessionId])).rows[0]!.prompt;
    expect(prompt).toContain("The total is off by one.");
    expect(prompt).toContain("Instructions from the comment: make it add, with a test");
    expect((await issueEvents(sessionId))[0]!.data).toMatchObject({ trigger: "comment", sender: "write-cat", issueNumber: 11 });

    // A reader: no session, no TaskStartedFromIssue; held with its reason.
    const before = await recorded();
    const refused = await toGithub("issue_comment", commented(repository, 12, "/catcafe do it", "read-cat"), secret);
    expect(refused.body).toEqual({ held: refused.deliveryId, reason: "no_permission" });
    const after = await recorded();
    expect(after).toEqual({ events: before.events + 1, deliveries: before.deliveries + 1, sessions: before.sessions });
    const held = await listHeld(db.pool, { projectId: id });
    expect(held).toEqual([
      expect.objectContaining({
        deliveryId: refused.deliveryId,
        reason: "no_permission",
        detail: "read-cat has read access, not write",
        issueUrl: `https://github.com/${repository}/issues/12`,
        issueNumber: 12,
      }),
    ]);

    // A person starts it from the inbox: a task, with TaskStartedFromIssue; it leaves the inbox; a second start is refused.
    const alice = { kind: "user" as const, id: "alice" };
    const fromInbox = await startHeld({ store: db.store, pool: db.pool }, { projectId: id, deliveryId: refused.deliveryId }, alice);
    expect((await issueEvents(fromInbox.sessionId)).map((e) => [e.data, e.metadata.actor])).toEqual([
      [expect.objectContaining({ trigger: "comment", sender: "read-cat", deliveryId: refused.deliveryId }), alice],
    ]);
    expect(await listHeld(db.pool, { projectId: id })).toEqual([]);
    await expect(startHeld({ store: db.store, pool: db.pool }, { projectId: id, deliveryId: refused.deliveryId }, alice)).rejects.toThrow(
      /was started already/,
    );

    // Another held one is dismissed: recorded, gone from the inbox.
    const other = await toGithub("issue_comment", commented(repository, 13, "/catcafe please", "other-cat"), secret);
    await dismissHeld({ store: db.store, pool: db.pool }, { projectId: id, deliveryId: other.deliveryId }, alice);
    expect(await listHeld(db.pool, { projectId: id })).toEqual([]);
    const resolved = await db.pool.query<{ data: { resolution: string } }>(
      "SELECT data FROM events WHERE stream_id = $1 AND type = 'IntakeResolved' ORDER BY position",
      [`intake-${id}`],
    );
    expect(resolved.rows.map((r) => r.data.resolution)).toEqual(["started", "dismissed"]);
  });

  it("every project's held list reads the held events' own index, not the log by position, however long the log is", async () => {
    const { id, repository, secret } = await intakeProject("github", { maxPerHour: 1 });
    expect((await toGithub("issues", labeled(repository, 61, "first"), secret)).body).toMatchObject({ trigger: "label" });
    const held = await toGithub("issues", labeled(repository, 62, "second"), secret);
    expect(held.body).toEqual({ held: held.deliveryId, reason: "rate_limited" });
    // A log of other events after it, as the sessions of a busy server write them.
    const crowd = `crowd-${uniqueId("log")}`;
    for (let i = 0; i < 20; i++)
      await db.store.append(
        crowd,
        i * 100,
        Array.from({ length: 100 }, () => ({ type: "OperatorMessagePosted", data: { text: "x" } })),
        { actor: testActor },
      );
    await db.pool.query("ANALYZE events");
    const { rows } = await db.pool.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${HELD_SQL}`, [null]);
    const plan = JSON.stringify(rows[0]!["QUERY PLAN"]);
    expect(plan).toContain("events_intake_held_idx");
    expect(plan).not.toContain("events_pkey");
    expect((await listHeld(db.pool)).filter((x) => x.projectId === id).map((x) => x.deliveryId)).toEqual([held.deliveryId]);
  });

  it("an assignment to the bot user starts a task; past maxPerHour, or on a project that cannot start one, the delivery is held with its reason", async () => {
    const { id, repository, secret } = await intakeProject("github", { maxPerHour: 1 });
    const assigned = githubExample("issues", (e) => e.action === "assigned") as ExamplePayload & { assignee: { login: string } };
    assigned.repository.full_name = repository;
    assigned.issue.number = 51;
    assigned.issue.html_url = `https://github.com/${repository}/issues/51`;
    assigned.assignee.login = "someone-else";
    expect((await toGithub("issues", assigned, secret)).body).toEqual({ ignored: "no_rule" });
    assigned.assignee.login = "catcafe-bot";
    const first = await toGithub("issues", assigned, secret);
    expect(first.body).toMatchObject({ trigger: "assignment" });
    expect((await issueEvents(String(first.body.started)))[0]!.data).toMatchObject({ trigger: "assignment", issueNumber: 51 });
    // The hour's one task is spent: the next issue is held, no session.
    const before = await recorded();
    const second = await toGithub("issues", labeled(repository, 52, "more"), secret);
    expect(second.body).toEqual({ held: second.deliveryId, reason: "rate_limited" });
    expect((await recorded()).sessions).toBe(before.sessions);
    expect((await listHeld(db.pool, { projectId: id })).map((x) => x.detail)).toEqual([
      "1 tasks started from issues in the last hour (maxPerHour 1)",
    ]);

    // A project whose roles no agent plays cannot start a task: held as not ready, with the reason.
    const bare = uniqueId("intake-bare");
    await h.project(bare, {}, { settings: { intake: { provider: "github", repository: `acme/${bare}`, triggers: { label: {} } } } });
    const bareSecret = `whsec-${crypto.randomBytes(16).toString("hex")}`;
    await setWebhookSecret({ store: db.store, pool: db.pool, key: TEST_SECRET }, { projectId: bare, secret: bareSecret }, testActor);
    const notReady = await toGithub("issues", labeled(`acme/${bare}`, 1, "x"), bareSecret);
    expect(notReady.body).toEqual({ held: notReady.deliveryId, reason: "not_ready" });
    expect((await listHeld(db.pool, { projectId: bare }))[0]!.detail).toMatch(/coder/);
  });

  it("refuses a bad signature, a missing one, an unknown repository and a 5 MB body with nothing recorded; cuts a long issue body with a visible marker", async () => {
    const { repository, secret } = await intakeProject("github");
    const payload = labeled(repository, 21, "short");
    const before = await recorded();
    expect(await toGithub("issues", payload, "not-the-secret-at-all")).toMatchObject({ status: 401 });
    expect(await toGithub("issues", payload, null)).toMatchObject({ status: 401 });
    expect(await toGithub("issues", labeled("acme/nobody-here", 21, "short"), secret)).toMatchObject({ status: 401 });
    const huge = labeled(repository, 22, "x".repeat(5 * 1024 * 1024));
    expect(await toGithub("issues", huge, secret)).toMatchObject({ status: 413 });
    expect(await recorded()).toEqual(before);

    const long = await toGithub("issues", labeled(repository, 23, `start ${"y".repeat(40_000)} end`), secret);
    const prompt = (await db.pool.query<{ prompt: string }>("SELECT prompt FROM sessions WHERE id = $1", [long.body.started])).rows[0]!
      .prompt;
    expect(prompt.length).toBeLessThanOrEqual(20_000);
    expect(prompt).toContain("start yyy");
    expect(prompt).toContain("[cut]");
    expect(prompt).not.toContain(" end");
  });

  it("hands pull-request reviews to the tracker's follow-ups, verified and deduplicated like the rest", async () => {
    const { repository, secret } = await intakeProject("github");
    const review = githubExample("pull_request_review", () => true);
    review.repository.full_name = repository;
    const first = await toGithub("pull_request_review", review, secret);
    // No session delivered that pull request: the follow-up says why it ignores it.
    expect(first.body).toMatchObject({ outcome: "ignored" });
    expect((await toGithub("pull_request_review", review, secret, first.deliveryId)).body).toEqual({ ignored: "replayed" });
    expect((await toGithub("pull_request_review", review, "wrong-secret-value")).status).toBe(401);
  });
});

describe("GitLab deliveries", () => {
  const issueHook = (path: string, iid: number, labels: { previous: string[]; current: string[] }) => ({
    object_kind: "issue",
    event_type: "issue",
    user: { id: 1, name: "Administrator", username: "root" },
    project: { id: 42, name: path.split("/")[1], path_with_namespace: path, web_url: `https://gitlab.example.com/${path}` },
    object_attributes: {
      id: 301,
      iid,
      title: `GitLab issue ${iid}`,
      description: "Divide by zero in average().",
      state: "opened",
      action: "update",
      url: `https://gitlab.example.com/${path}/-/issues/${iid}`,
    },
    labels: labels.current.map((title, i) => ({ id: i + 1, title })),
    changes: {
      labels: {
        previous: labels.previous.map((title, i) => ({ id: i + 1, title })),
        current: labels.current.map((title, i) => ({ id: i + 1, title })),
      },
    },
  });
  const noteHook = (path: string, iid: number, note: string, user: { id: number; username: string }) => ({
    object_kind: "note",
    event_type: "note",
    user: { ...user, name: user.username },
    project_id: 42,
    project: { id: 42, path_with_namespace: path },
    object_attributes: { id: 1244, note, noteable_type: "Issue", url: `https://gitlab.example.com/${path}/-/issues/${iid}#note_1244` },
    issue: { id: 92, iid, title: `GitLab issue ${iid}`, description: "Average of nothing crashes." },
  });

  it("an Issue Hook that adds the label starts a task; a Note Hook command from a Developer starts one, from a Reporter it is held", async () => {
    const { id, repository, secret } = await intakeProject("gitlab");
    const unlabelled = await toGitlab("Issue Hook", issueHook(repository, 5, { previous: [], current: ["bug"] }), secret);
    expect(unlabelled.body).toEqual({ ignored: "no_rule" });
    const res = await toGitlab("Issue Hook", issueHook(repository, 5, { previous: ["bug"], current: ["bug", "catcafe"] }), secret);
    const sessionId = String(res.body.started);
    await waiting(sessionId);
    expect((await issueEvents(sessionId))[0]!.data).toEqual({
      provider: "gitlab",
      repository,
      issueNumber: 5,
      issueUrl: `https://gitlab.example.com/${repository}/-/issues/5`,
      title: "GitLab issue 5",
      trigger: "label",
      deliveryId: res.deliveryId,
      sender: "root",
    });
    const prompt = (await db.pool.query<{ prompt: string }>("SELECT prompt FROM sessions WHERE id = $1", [sessionId])).rows[0]!.prompt;
    expect(prompt).toContain("Divide by zero in average().");

    const levels: Record<string, number> = { "7": 30, "8": 20 };
    gitlab.handle((req, res) => {
      expect(req.headers["private-token"]).toBe("ghp_intakeTokenValue0123456789abcdefAB");
      const m = /^\/api\/v4\/projects\/([^/]+)\/members\/all\/(\d+)/.exec(req.url);
      if (!m || decodeURIComponent(m[1]!) !== repository) return res.writeHead(404, { "content-type": "application/json" }).end("{}");
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: Number(m[2]), access_level: levels[m[2]!] }));
    });
    const dev = await toGitlab("Note Hook", noteHook(repository, 6, "/catcafe handle empty lists", { id: 7, username: "dev" }), secret);
    expect(dev.body).toMatchObject({ trigger: "comment" });
    expect((await issueEvents(String(dev.body.started)))[0]!.data).toMatchObject({ trigger: "comment", sender: "dev", issueNumber: 6 });
    const reporter = await toGitlab("Note Hook", noteHook(repository, 6, "/catcafe do it", { id: 8, username: "rep" }), secret);
    expect(reporter.body).toEqual({ held: reporter.deliveryId, reason: "no_permission" });
    expect((await listHeld(db.pool, { projectId: id })).map((x) => x.detail)).toEqual(["rep has 20 access, not write"]);

    // A wrong token, or none: 401, nothing recorded.
    const before = await recorded();
    expect(
      (await toGitlab("Issue Hook", issueHook(repository, 9, { previous: [], current: ["catcafe"] }), "wrong-token-000000")).status,
    ).toBe(401);
    expect((await toGitlab("Issue Hook", issueHook(repository, 9, { previous: [], current: ["catcafe"] }), null)).status).toBe(401);
    expect(await recorded()).toEqual(before);
    // A merge request note goes to the pull-request route.
    const mr = {
      ...noteHook(repository, 6, "looks good", { id: 7, username: "dev" }),
      object_attributes: { note: "ok", noteable_type: "MergeRequest" },
    };
    expect((await toGitlab("Note Hook", mr, secret)).body).toMatchObject({ outcome: "ignored" });
  });

  it("a delivery sent again is replayed: named by Idempotency-Key, else (before GitLab 17.4) by its event UUID or its body within the project it verified for", async () => {
    const a = await intakeProject("gitlab");
    const b = await intakeProject("gitlab", {}, a.repository);
    const labelled = (iid: number) => issueHook(a.repository, iid, { previous: [], current: ["catcafe"] });
    const startedBy = async (sessionId: unknown) => (await issueEvents(String(sessionId)))[0]!.data as { deliveryId: string };

    // GitLab 17.4 on: "Resend request" keeps the Idempotency-Key and sends a new event UUID.
    const first = await toGitlab("Issue Hook", labelled(11), a.secret);
    expect(await startedBy(first.body.started)).toMatchObject({ deliveryId: first.deliveryId });
    let before = await recorded();
    expect((await toGitlab("Issue Hook", labelled(11), a.secret, first.deliveryId)).body).toEqual({ ignored: "replayed" });
    expect(await recorded()).toEqual(before);

    // Before it: the event UUID, which a retry keeps and both projects' hooks on the repository send.
    const uuid = crypto.randomUUID();
    const toA = await toGitlab("Issue Hook", labelled(12), a.secret, null, uuid);
    const toB = await toGitlab("Issue Hook", labelled(12), b.secret, null, uuid);
    expect(await startedBy(toA.body.started)).toMatchObject({ deliveryId: `${a.id}:${uuid}` });
    expect(await startedBy(toB.body.started)).toMatchObject({ deliveryId: `${b.id}:${uuid}` });
    before = await recorded();
    expect((await toGitlab("Issue Hook", labelled(12), a.secret, null, uuid)).body).toEqual({ ignored: "replayed" });
    expect((await toGitlab("Issue Hook", labelled(12), b.secret, null, uuid)).body).toEqual({ ignored: "replayed" });
    expect(await recorded()).toEqual(before);

    // Older still, no id at all: the body's SHA-256 (a retry sends the same bytes).
    const bare = await toGitlab("Issue Hook", labelled(13), a.secret, null, null);
    const sha = crypto
      .createHash("sha256")
      .update(JSON.stringify(labelled(13)))
      .digest("hex");
    expect(await startedBy(bare.body.started)).toMatchObject({ deliveryId: `${a.id}:sha256:${sha}` });
    before = await recorded();
    expect((await toGitlab("Issue Hook", labelled(13), a.secret, null, null)).body).toEqual({ ignored: "replayed" });
    expect(await recorded()).toEqual(before);
    // An event UUID with no room for the project's prefix within a delivery id's 200 characters: refused by its name.
    expect(await toGitlab("Issue Hook", labelled(14), a.secret, null, "u".repeat(100))).toMatchObject({
      status: 400,
      body: { error: { message: "x-gitlab-event-uuid is required (at most 99 characters)" } },
    });
    expect(await recorded()).toEqual(before);
    // Nothing but the event header missing is refused, by its name.
    const noEvent = await receiveDelivery(
      deps(),
      "gitlab",
      new Request("http://catcafe.test/api/hooks/gitlab", {
        method: "POST",
        headers: { "content-type": "application/json", "x-gitlab-token": a.secret },
        body: JSON.stringify({ project: { path_with_namespace: a.repository } }),
      }),
    );
    expect({ status: noEvent.status, body: await noEvent.json() }).toEqual({
      status: 400,
      body: { error: { message: "x-gitlab-event is required (at most 100 characters)" } },
    });
  });
});

describe("the webhook secret", () => {
  it("is never in an event, an export or a log line; its setting and rotation are recorded without it", async () => {
    const { id, repository, secret } = await intakeProject("github");
    const res = await toGithub("issues", labeled(repository, 31, "Please fix."), secret);
    const rotated = `whsec-${crypto.randomBytes(16).toString("hex")}`;
    await setWebhookSecret({ store: db.store, pool: db.pool, key: TEST_SECRET }, { projectId: id, secret: rotated }, testActor);
    const set = await db.pool.query<{ data: unknown }>(
      "SELECT data FROM events WHERE stream_id = $1 AND type = 'IntakeSecretSet' ORDER BY position",
      [`intake-${id}`],
    );
    expect(set.rows.map((r) => r.data)).toEqual([
      { projectId: id, rotated: false },
      { projectId: id, rotated: true },
    ]);
    const everyEvent = (await db.pool.query<{ t: string }>("SELECT string_agg(data::text || metadata::text, '\n') AS t FROM events"))
      .rows[0]!.t;
    const exported = JSON.stringify(await exportSession(db.store, db.pool, String(res.body.started)));
    const sealed = (await db.pool.query<{ sealed: string }>("SELECT sealed FROM intake_secrets WHERE project_id = $1", [id])).rows[0]!
      .sealed;
    for (const s of [secret, rotated]) {
      expect(everyEvent).not.toContain(s);
      expect(exported).not.toContain(s);
      expect(logged.join("\n")).not.toContain(s);
      expect(sealed).not.toContain(s);
    }
    expect(logged.some((l) => l.includes(res.deliveryId))).toBe(true);
    // The old secret no longer verifies; the new one does.
    expect((await toGithub("issues", labeled(repository, 32, "x"), secret)).status).toBe(401);
    expect((await toGithub("issues", labeled(repository, 32, "x"), rotated)).status).toBe(200);
  });

  it("a viewer can neither set rules nor a secret (FORBIDDEN); an operator can, and sees when and by whom, never the value", async () => {
    const fixture = api();
    const { id } = await intakeProject("github");
    const viewer = await fixture.user("viewer");
    const operator = await fixture.user("operator");
    // The web process's context carries NEXTAUTH_SECRET as the sealing key (server/api/context.ts).
    const as = (user: Awaited<ReturnType<typeof fixture.user>>) => createCaller({ ...fixture.deps, user, sealingKey: TEST_SECRET });
    const rules = { provider: "github", repository: "acme/viewer-test", triggers: { label: { name: "ai" } } };
    await expect(as(viewer).intake.setRules({ projectId: id, rules })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(as(viewer).intake.setSecret({ projectId: id, secret: "a-viewer-secret-0123456789" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const saved = await as(operator).intake.setRules({ projectId: id, rules });
    expect(saved.changed).toBeGreaterThan(0);
    await expect(
      as(operator).intake.setRules({ projectId: id, rules: { provider: "bitbucket", repository: "x/y" } }),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    const newSecret = "an-operator-secret-0123456789";
    const set = await as(operator).intake.setSecret({ projectId: id, secret: newSecret });
    expect(set).toMatchObject({ projectId: id, setBy: `user:${operator.id}`, rotated: true });
    const shown = await as(viewer).intake.show({ projectId: id });
    expect(shown.rules).toMatchObject({
      provider: "github",
      repository: "acme/viewer-test",
      triggers: { label: { name: "ai", workflow: "review_loop", autoConfirm: false } },
    });
    expect(shown.secret).toEqual({ setAt: set.setAt, setBy: `user:${operator.id}`, setByName: "Test operator" });
    expect(JSON.stringify(shown)).not.toContain(newSecret);
    const history = await db.pool.query<{ data: { changes: Array<{ path: string[] }> } }>(
      "SELECT data FROM events WHERE stream_id = $1 AND type = 'ConfigChanged' ORDER BY position DESC LIMIT 1",
      [`config-project-${id}`],
    );
    expect(history.rows[0]!.data.changes.map((c) => c.path.join("."))).toContain("settings.intake.repository");
  });
});
