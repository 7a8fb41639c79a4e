// The whole loop from outside (docs/intake.md, "The whole loop"): local GitHub and GitLab API
// stand-ins recording every request, projects whose intake rules and delivery point at them, and
// from there only signed webhook deliveries to the receivers' handler and the product's own
// commands (tRPC confirm and deliver) with a real runner, real git and a bare remote:
//   - a labelled issue → a session waiting for a confirm with the issue's text, ONE comment on the
//     issue with the session's link and the proposal;
//   - confirm → the review loop → approved → delivery opens ONE pull request ending `Closes #n`,
//     with the verdicts and the tests; a commit status for each state of the branch head;
//   - a review asking for changes → one follow-up iteration (the same delivery id again, even at
//     once: nothing more, the same answer) → approved → the SAME pull request updated;
//   - a review delivery that fails between the follow-up's fork and its record, delivered again,
//     forks once (server/tracker/review-follow-ups.ts);
//   - the webhook secret and the token appear in no table, blob, export or log line.
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import path from "node:path";
import examples from "@octokit/webhooks-examples";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { receiveDelivery, type ReceiverDeps } from "../../server/intake/receive";
import { setWebhookSecret } from "../../server/intake/secret";
import { logger } from "../../server/log";
import type { FinishedTask } from "../../server/task-engine";
import { createApiFixture, TEST_SECRET, type ApiFixture } from "../helpers/api";
import { startBrainStub, type BrainStub, type StubRequest } from "../helpers/brains-stub";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { leaksOf } from "../helpers/leaks";
import { BUGGY_SUM, createHarness, FIXED_SUM, ofType, reviewApprove, reviewChanges, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let fixture: ApiFixture;
let github: BrainStub;
let gitlab: BrainStub;
const TOKEN_ENV = "CATCAFE_TEST_LOOP_TOKEN";
const TOKEN = "ghp_loopTrackerToken0123456789abcdefABCD";
const PUBLIC_URL = "http://cats.test";
/** Every line the server and the runner log, as written. */
const logged: string[] = [];
let logLevel = "info";

beforeAll(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  process.env.NEXTAUTH_URL = PUBLIC_URL;
  db = await createTestDatabase();
  h = createHarness(db);
  fixture = createApiFixture(db);
  await h.startRunner((line) => logged.push(line), { concurrency: 4 });
  github = await startBrainStub();
  gitlab = await startBrainStub();
  const stream = (logger as unknown as Record<symbol, { write: (line: string) => unknown }>)[pino.symbols.streamSym]!;
  logLevel = logger.level;
  logger.level = "info";
  vi.spyOn(stream, "write").mockImplementation((line: string) => {
    logged.push(line);
    return true;
  });
  // A fault a test arms: an event of a listed type cannot be recorded (the process "dies" there).
  await db.pool.query(`
    CREATE TABLE loop_faults (event_type text PRIMARY KEY);
    CREATE FUNCTION loop_fault() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM loop_faults WHERE event_type = NEW.type) THEN
        RAISE EXCEPTION 'injected fault: % is not recorded', NEW.type;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER loop_fault BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION loop_fault();`);
});
afterAll(async () => {
  vi.restoreAllMocks();
  logger.level = logLevel;
  delete process.env[TOKEN_ENV];
  delete process.env.NEXTAUTH_URL;
  await github?.close();
  await gitlab?.close();
});

const receiverDeps = (): ReceiverDeps => ({ store: db.store, pool: db.pool, key: TEST_SECRET });
const json = (req: StubRequest) => JSON.parse(req.body) as Record<string, unknown>;
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ended(sessionId: string, what: string): Promise<FinishedTask> {
  const s = await h.waitFor(sessionId, what, (t) => t.status === "finished", 60_000);
  if (s.status !== "finished") throw new Error(`${sessionId} has not finished`);
  return s;
}

async function delivered(sessionId: string) {
  return until(`the delivery of ${sessionId}`, async () =>
    (await db.store.readStream(sessionId)).find(
      (e) => e.streamId === sessionId && (e.type === "DeliveryCompleted" || e.type === "DeliveryFailed"),
    ),
  );
}

function bareRemote(name: string): string {
  const dir = path.join(h.workspacesRoot, "..", `${name}.git`);
  execFileSync("git", ["init", "-q", "--bare", dir]);
  return dir;
}

const remoteHead = (remote: string, branch: string) =>
  execFileSync("git", ["--git-dir", remote, "rev-parse", `refs/heads/${branch}`], { encoding: "utf8" }).trim();

/** The follow-up forks made of a session: one ChangeRequested each. */
async function forksOf(sessionId: string) {
  const r = await db.pool.query<{ stream_id: string }>(
    "SELECT stream_id FROM events WHERE type = 'ChangeRequested' AND data->>'baseSessionId' = $1",
    [sessionId],
  );
  return r.rows.map((row) => row.stream_id);
}

async function send(provider: "github" | "gitlab", headers: Record<string, string>, payload: unknown) {
  const body = JSON.stringify(payload);
  const res = await receiveDelivery(
    receiverDeps(),
    provider,
    new Request(`http://catcafe.test/api/hooks/${provider}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A delivery as GitHub signs it: X-Hub-Signature-256 over the raw body. */
function toGithub(event: string, payload: unknown, secret: string, deliveryId: string = crypto.randomUUID()) {
  const signature = `sha256=${crypto.createHmac("sha256", secret).update(JSON.stringify(payload)).digest("hex")}`;
  return send("github", { "x-github-event": event, "x-github-delivery": deliveryId, "x-hub-signature-256": signature }, payload);
}

/** A delivery as GitLab sends it: the secret token in X-Gitlab-Token, the delivery named by Idempotency-Key (a resend keeps it, with a new event UUID). */
function toGitlab(event: string, payload: unknown, secret: string, deliveryId: string = crypto.randomUUID()) {
  const headers = { "x-gitlab-event": event, "idempotency-key": deliveryId, "x-gitlab-event-uuid": crypto.randomUUID() };
  return send("gitlab", { ...headers, "x-gitlab-token": secret }, payload);
}

async function operator() {
  return fixture.caller(await fixture.user("operator"));
}

async function intakeProject(
  id: string,
  provider: "github" | "gitlab",
  agents: Record<string, Array<Record<string, unknown>>>,
  delivery: Record<string, unknown>,
) {
  const repository = `acme/${id}`;
  await h.project(id, agents, {
    settings: {
      access: { privateHosts: ["127.0.0.1"] },
      delivery: { method: "pull_request", target: "main", tokenEnv: TOKEN_ENV, remote: bareRemote(`origin-${id}`), ...delivery },
      intake: { provider, repository, triggers: { label: {} } },
    },
  });
  const secret = `whsec-${crypto.randomBytes(16).toString("hex")}`;
  await setWebhookSecret({ store: db.store, pool: db.pool, key: TEST_SECRET }, { projectId: id, secret }, testActor);
  return { repository, secret, remote: path.join(h.workspacesRoot, "..", `origin-${id}.git`) };
}

interface Pull {
  number: number;
  head: string;
  body: string;
}

/** The GitHub API as Cat Cafe calls it for one repository: pull requests, issue comments, commit statuses. */
function githubApi(repository: string) {
  const pulls: Pull[] = [];
  const comments: Array<{ id: number; body: string }> = [];
  const statuses: Array<{ sha: string; state: string; description: string; target_url?: string }> = [];
  const base = `/repos/${repository}`;
  github.handle((req, res) => {
    res.setHeader("content-type", "application/json");
    const reply = (status: number, body: unknown) => {
      res.statusCode = status;
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url, "http://x");
    const owner = repository.split("/")[0];
    if (url.pathname === `${base}/pulls` && req.method === "GET")
      return reply(
        200,
        pulls
          .filter((p) => `${owner}:${p.head}` === url.searchParams.get("head"))
          .map((p) => ({ number: p.number, html_url: `https://github.test/pull/${p.number}` })),
      );
    if (url.pathname === `${base}/pulls` && req.method === "POST") {
      const body = json(req);
      pulls.push({ number: 40 + pulls.length, head: String(body.head), body: String(body.body) });
      return reply(201, { number: pulls.at(-1)!.number, html_url: `https://github.test/pull/${pulls.at(-1)!.number}` });
    }
    const pull = new RegExp(`^${base}/pulls/(\\d+)$`).exec(url.pathname);
    if (pull && req.method === "PATCH") {
      const found = pulls.find((p) => p.number === Number(pull[1]));
      if (!found) return reply(404, { message: "no such pull request" });
      found.body = String(json(req).body);
      return reply(200, { number: found.number, html_url: `https://github.test/pull/${found.number}` });
    }
    if (url.pathname === `${base}/issues/7/comments` && req.method === "GET") return reply(200, comments);
    if (url.pathname === `${base}/issues/7/comments` && req.method === "POST") {
      comments.push({ id: comments.length + 1, body: String(json(req).body) });
      return reply(201, comments.at(-1));
    }
    const status = new RegExp(`^${base}/statuses/([0-9a-f]{40})$`).exec(url.pathname);
    if (status && req.method === "POST") {
      statuses.push({ sha: status[1]!, ...(json(req) as { state: string; description: string }) });
      return reply(201, {});
    }
    return reply(404, { message: `no ${req.method} ${url.pathname} in the stand-in` });
  });
  return { pulls, comments, statuses };
}

/** The GitLab API (under /api/v4) as Cat Cafe calls it for one project: merge requests, issue notes, commit statuses. */
function gitlabApi(repository: string) {
  const mergeRequests: Pull[] = [];
  const notes: Array<{ id: number; body: string }> = [];
  const statuses: Array<{ sha: string; state: string; name: string }> = [];
  const base = `/api/v4/projects/${encodeURIComponent(repository)}`;
  gitlab.handle((req, res) => {
    res.setHeader("content-type", "application/json");
    const reply = (status: number, body: unknown) => {
      res.statusCode = status;
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url, "http://x");
    if (url.pathname === `${base}/merge_requests` && req.method === "GET")
      return reply(
        200,
        mergeRequests
          .filter((m) => m.head === url.searchParams.get("source_branch"))
          .map((m) => ({ iid: m.number, web_url: `https://gitlab.test/mr/${m.number}` })),
      );
    if (url.pathname === `${base}/merge_requests` && req.method === "POST") {
      const body = json(req);
      mergeRequests.push({ number: 3 + mergeRequests.length, head: String(body.source_branch), body: String(body.description) });
      return reply(201, { iid: mergeRequests.at(-1)!.number, web_url: `https://gitlab.test/mr/${mergeRequests.at(-1)!.number}` });
    }
    const mr = new RegExp(`^${base}/merge_requests/(\\d+)$`).exec(url.pathname);
    if (mr && req.method === "PUT") {
      const found = mergeRequests.find((m) => m.number === Number(mr[1]));
      if (!found) return reply(404, { message: "no such merge request" });
      found.body = String(json(req).description);
      return reply(200, { iid: found.number, web_url: `https://gitlab.test/mr/${found.number}` });
    }
    if (url.pathname === `${base}/issues/7/notes` && req.method === "GET") return reply(200, notes);
    if (url.pathname === `${base}/issues/7/notes` && req.method === "POST") {
      notes.push({ id: notes.length + 1, body: String(json(req).body) });
      return reply(201, notes.at(-1));
    }
    const status = new RegExp(`^${base}/statuses/([0-9a-f]{40})$`).exec(url.pathname);
    if (status && req.method === "POST") {
      statuses.push({ sha: status[1]!, ...(json(req) as { state: string; name: string }) });
      return reply(201, {});
    }
    return reply(404, { message: `no ${req.method} ${url.pathname} in the stand-in` });
  });
  return { mergeRequests, notes, statuses };
}

const prompted = async (sessionId: string) =>
  (await db.pool.query<{ prompt: string }>("SELECT prompt FROM sessions WHERE id = $1", [sessionId])).rows[0]!.prompt;

describe("GitHub: issue → confirm → pull request → review → the same pull request", () => {
  const agents = {
    coder: [
      { reply: "Proposal: make sum add." },
      { reply: "First try.", files: { "src/sum.js": `${BUGGY_SUM}// looked at it\n` } },
      { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } },
      // Slow enough for a review comment to find the follow-up still running.
      { reply: "Commented as the reviewer asked.", files: { "src/sum.js": `${FIXED_SUM}// adds two numbers\n` }, chunkDelayMs: 300 },
    ],
    reviewer: [{ reply: "Fine." }, { reply: reviewChanges() }, { reply: reviewApprove }],
    tester: [{ reply: "One test is enough." }, { reply: testPlan() }],
  };
  let project: Awaited<ReturnType<typeof intakeProject>>;
  let api: ReturnType<typeof githubApi>;
  let sessionId = "";
  let head = "";

  it("a labelled issue (issues.labeled, signed) → a session waiting for a confirm with the issue's text; one comment on the issue with the link and the proposal", async () => {
    project = await intakeProject("loop-gh", "github", agents, {
      pullRequest: { provider: "github", apiBaseUrl: github.url, repository: "acme/loop-gh" },
    });
    api = githubApi(project.repository);
    const payload = clone(
      examples.find((e) => e.name === "issues")!.examples.find((e) => (e as { action?: string }).action === "labeled"),
    ) as {
      repository: { full_name: string };
      label: { name: string };
      issue: { number: number; title: string; body: string | null; html_url: string };
    };
    payload.repository.full_name = project.repository;
    payload.label.name = "catcafe";
    payload.issue = { ...payload.issue, number: 7, title: "sum() subtracts", body: "sum(2, 2) returns 0.\nIt should return 4." };
    payload.issue.html_url = `https://github.com/${project.repository}/issues/7`;
    const started = await toGithub("issues", payload, project.secret);
    expect(started).toMatchObject({ status: 200, body: { trigger: "label" } });
    sessionId = String(started.body.started);
    await h.waitFor(sessionId, "waiting for a confirm", (s) => s.fsm === "awaiting_operator_confirm");
    expect(await prompted(sessionId)).toContain("sum(2, 2) returns 0.\nIt should return 4.");

    await until("the issue comment", () => api.comments.length === 1);
    const comment = api.comments[0]!.body;
    expect(comment).toContain(`${PUBLIC_URL}/sessions/${sessionId}`);
    expect(comment).toContain("waits for a person's confirm in Cat Cafe");
    expect(comment).toContain("**coder**: Proposal: make sum add.");
    expect(github.requests.filter((r) => r.method === "POST" && r.url.endsWith("/issues/7/comments"))).toHaveLength(1);
    expect(github.requests.find((r) => r.method === "POST")!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // No build yet: the branch has no head of its own, so no status.
    expect(api.statuses).toEqual([]);
  });

  it("confirm → review loop → approved: pending on each build's head, success on the approved one; deliver opens one pull request ending Closes #7 with the verdicts and tests", async () => {
    const as = await operator();
    await as.tasks.confirm({ sessionId });
    const done = await ended(sessionId, "approved");
    expect(done.outcome).toBe("approved");
    head = done.head;
    await until("the success status", () => api.statuses.some((s) => s.sha === head && s.state === "success"));
    const pending = api.statuses.filter((s) => s.state === "pending");
    expect(new Set(pending.map((s) => s.sha)).size).toBeGreaterThanOrEqual(2); // the first build's head, then the fixed one
    expect(api.statuses.filter((s) => s.sha === head).map((s) => s.state)).toEqual(["pending", "success"]);
    expect(api.statuses.find((s) => s.state === "success")).toMatchObject({ target_url: `${PUBLIC_URL}/sessions/${sessionId}` });

    await as.sessions.deliver({ sessionId });
    expect(await delivered(sessionId)).toMatchObject({ type: "DeliveryCompleted", data: { pullRequest: { number: 40, updated: false } } });
    expect(api.pulls).toHaveLength(1);
    expect(api.pulls[0]!.head).toBe(`catcafe/${sessionId}`);
    const body = api.pulls[0]!.body;
    expect(body.endsWith("Closes #7")).toBe(true);
    expect(body).toContain("- Round 1: **changes_requested**: Not yet.");
    expect(body).toContain("Final verdict: **approve**: Looks right.");
    expect(body).toContain("- `node --test test/`: passed (exit 0)");
    expect(remoteHead(project.remote, `catcafe/${sessionId}`)).toBe(head);
    expect(api.comments).toHaveLength(1);
  });

  it("a review requesting changes (pull_request_review, signed) → one follow-up (the same delivery id twice at once and once more: one fork, the same answer); a review comment meanwhile → one message to it, even after a failure before its record → approved → the same pull request updated", async () => {
    const review = clone(examples.find((e) => e.name === "pull_request_review")!.examples[0]) as unknown as {
      action: string;
      review: { state: string; body: string | null; user: { login: string } };
      pull_request: { number: number };
      repository: { full_name: string };
    };
    review.action = "submitted";
    review.review = {
      ...review.review,
      state: "changes_requested",
      body: "Please say what sum() does.",
      user: { ...review.review.user, login: "jane" },
    };
    review.pull_request = { ...review.pull_request, number: 40 };
    review.repository = { ...review.repository, full_name: project.repository };
    const deliveryId = crypto.randomUUID();
    const [first, second] = await Promise.all([
      toGithub("pull_request_review", review, project.secret, deliveryId),
      toGithub("pull_request_review", review, project.secret, deliveryId),
    ]);
    expect(first).toMatchObject({ status: 200, body: { outcome: "followed_up", sessionId, followUp: { how: "modify" } } });
    expect(second).toEqual(first);
    expect(await toGithub("pull_request_review", review, project.secret, deliveryId)).toEqual(first);
    const forks = await forksOf(sessionId);
    expect(forks).toHaveLength(1);
    const followUp = forks[0]!;
    expect(first.body.followUp).toEqual({ sessionId: followUp, how: "modify" });
    expect(ofType<{ text: string }>(await db.store.readStream(followUp), "ChangeRequested")[0]!.text).toContain(
      "jane requested changes on pull request #40:\n\nPlease say what sum() does.",
    );
    const rows = await db.pool.query("SELECT outcome FROM intake_deliveries WHERE delivery_id = $1", [deliveryId]);
    expect(rows.rows).toEqual([{ outcome: "followed_up" }]);

    // A review comment while the follow-up runs is a message to it. Failing between the message
    // and its record, then sent again, it is posted once; once more: the same answer.
    const comment = clone(
      examples.find((e) => e.name === "pull_request_review_comment")!.examples.find((e) => (e as { action?: string }).action === "created"),
    ) as unknown as {
      comment: { body: string; path: string; line: number | null; user: { login: string } };
      pull_request: { number: number };
      repository: { full_name: string };
    };
    comment.comment = { ...comment.comment, body: "Keep the exports as they are.", path: "src/sum.js", line: 2 };
    comment.comment.user = { ...comment.comment.user, login: "jane" };
    comment.pull_request = { ...comment.pull_request, number: 40 };
    comment.repository = { ...comment.repository, full_name: project.repository };
    const commentId = crypto.randomUUID();
    const messages = async () =>
      ofType<{ text: string }>(await db.store.readStream(followUp), "OperatorMessagePosted").filter((m) =>
        m.text.includes("Keep the exports as they are."),
      );
    await db.pool.query("INSERT INTO loop_faults (event_type) VALUES ('PullRequestFeedbackReceived')");
    await expect(toGithub("pull_request_review_comment", comment, project.secret, commentId)).rejects.toThrow(/injected fault/);
    await db.pool.query("DELETE FROM loop_faults");
    expect(await messages()).toEqual([]);
    const told = await toGithub("pull_request_review_comment", comment, project.secret, commentId);
    expect(told).toEqual({ status: 200, body: { outcome: "followed_up", sessionId, followUp: { sessionId: followUp, how: "follow_up" } } });
    expect(await toGithub("pull_request_review_comment", comment, project.secret, commentId)).toEqual(told);
    expect((await messages()).map((m) => m.text)).toEqual(["jane commented on src/sum.js:2:\n\nKeep the exports as they are."]);
    expect(await forksOf(sessionId)).toEqual([followUp]);

    const done = await ended(followUp, "the follow-up approved");
    expect(done.outcome).toBe("approved");
    expect(done.head).not.toBe(head);
    await until("the follow-up's success status", () => api.statuses.some((s) => s.sha === done.head && s.state === "success"));
    // Each state of the follow-up on its head: working, then approved.
    expect(api.statuses.filter((s) => s.sha === done.head).map((s) => [s.state, s.description])).toEqual([
      ["pending", expect.stringMatching(/^Cat Cafe: working/)],
      ["success", "Cat Cafe: approved"],
    ]);

    const as = await operator();
    await as.sessions.deliver({ sessionId: followUp });
    expect(await delivered(followUp)).toMatchObject({ type: "DeliveryCompleted", data: { pullRequest: { number: 40, updated: true } } });
    expect(github.requests.filter((r) => r.method === "POST" && r.url === `/repos/${project.repository}/pulls`)).toHaveLength(1);
    expect(github.requests.filter((r) => r.method === "PATCH" && r.url === `/repos/${project.repository}/pulls/40`)).toHaveLength(1);
    expect(api.pulls).toHaveLength(1);
    expect(api.pulls[0]!.body.endsWith("Closes #7")).toBe(true);
    expect(remoteHead(project.remote, `catcafe/${sessionId}`)).toBe(done.head);
    // Still the one comment on the issue: the follow-up inherits the session's.
    expect(api.comments).toHaveLength(1);

    expect(await leaksOf(db, sessionId, [project.secret, TOKEN], logged)).toEqual([]);
    expect(await leaksOf(db, followUp, [project.secret, TOKEN], logged)).toEqual([]);
    expect(logged.some((l) => l.includes(deliveryId))).toBe(true);
  });
});

describe("GitLab: Issue Hook → confirm → merge request → a note on it → the same merge request", () => {
  const agents = {
    coder: [
      { reply: "Proposal: make sum add." },
      { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } },
      { reply: "Said that it adds.", files: { "src/sum.js": `${FIXED_SUM}// adds\n` } },
    ],
    reviewer: [{ reply: "Fine." }, { reply: reviewApprove }],
    tester: [{ reply: "One test is enough." }, { reply: testPlan() }],
  };
  let project: Awaited<ReturnType<typeof intakeProject>>;
  let api: ReturnType<typeof gitlabApi>;
  let sessionId = "";

  it("a labelled issue (Issue Hook, X-Gitlab-Token) → a session waiting for a confirm, one note on the issue; confirm → approved → delivered on approval: one merge request with Closes #7", async () => {
    project = await intakeProject("loop-gl", "gitlab", agents, {
      auto: true,
      pullRequest: { provider: "gitlab", apiBaseUrl: `${gitlab.url}/api/v4`, repository: "acme/loop-gl" },
    });
    api = gitlabApi(project.repository);
    const hook = {
      object_kind: "issue",
      event_type: "issue",
      user: { id: 1, name: "Administrator", username: "root" },
      project: { id: 42, name: "loop-gl", path_with_namespace: project.repository, web_url: `https://gitlab.test/${project.repository}` },
      object_attributes: {
        id: 301,
        iid: 7,
        title: "sum() subtracts",
        description: "sum(2, 2) returns 0 on GitLab too.",
        state: "opened",
        action: "update",
        url: `https://gitlab.test/${project.repository}/-/issues/7`,
      },
      labels: [{ id: 1, title: "catcafe" }],
      changes: { labels: { previous: [], current: [{ id: 1, title: "catcafe" }] } },
    };
    const started = await toGitlab("Issue Hook", hook, project.secret);
    expect(started).toMatchObject({ status: 200, body: { trigger: "label" } });
    sessionId = String(started.body.started);
    await h.waitFor(sessionId, "waiting for a confirm", (s) => s.fsm === "awaiting_operator_confirm");
    expect(await prompted(sessionId)).toContain("sum(2, 2) returns 0 on GitLab too.");
    await until("the issue note", () => api.notes.length === 1);
    expect(api.notes[0]!.body).toContain(`${PUBLIC_URL}/sessions/${sessionId}`);
    expect(api.notes[0]!.body).toContain("**coder**: Proposal: make sum add.");
    expect(gitlab.requests.find((r) => r.method === "POST")!.headers["private-token"]).toBe(TOKEN);

    await (await operator()).tasks.confirm({ sessionId });
    const done = await ended(sessionId, "approved");
    expect(done.outcome).toBe("approved");
    expect(await delivered(sessionId)).toMatchObject({
      type: "DeliveryCompleted",
      data: { pullRequest: { provider: "gitlab", number: 3, updated: false } },
    });
    expect(api.mergeRequests).toHaveLength(1);
    expect(api.mergeRequests[0]!.body.endsWith("Closes #7")).toBe(true);
    expect(api.mergeRequests[0]!.body).toContain("Final verdict: **approve**: Looks right.");
    await until("the success status", () => api.statuses.some((s) => s.sha === done.head && s.state === "success"));
    expect(api.statuses.filter((s) => s.sha === done.head).map((s) => s.state)).toEqual(["running", "success"]);
    expect(api.notes).toHaveLength(1);
  });

  it("a Note Hook on the merge request that fails between the follow-up's fork and its record, delivered again, forks once; once more: the same answer; the follow-up updates the same merge request", async () => {
    const note = {
      object_kind: "note",
      event_type: "note",
      user: { id: 2, name: "Jane", username: "jane" },
      project_id: 42,
      project: { id: 42, path_with_namespace: project.repository },
      object_attributes: {
        id: 9,
        note: "Say that it adds.",
        noteable_type: "MergeRequest",
        position: { new_path: "src/sum.js", new_line: 2 },
      },
      merge_request: { iid: 3, source_branch: `catcafe/${sessionId}` },
    };
    const deliveryId = crypto.randomUUID();
    await db.pool.query("INSERT INTO loop_faults (event_type) VALUES ('PullRequestFeedbackReceived')");
    // The fork is made, then its record fails: the delivery fails (GitLab retries it) and leaves nothing.
    await expect(toGitlab("Note Hook", note, project.secret, deliveryId)).rejects.toThrow(/injected fault/);
    await db.pool.query("DELETE FROM loop_faults");
    expect(await forksOf(sessionId)).toEqual([]);
    expect((await db.pool.query("SELECT 1 FROM intake_deliveries WHERE delivery_id = $1", [deliveryId])).rowCount).toBe(0);

    const retried = await toGitlab("Note Hook", note, project.secret, deliveryId);
    expect(retried).toMatchObject({ status: 200, body: { outcome: "followed_up", sessionId, followUp: { how: "modify" } } });
    expect(await toGitlab("Note Hook", note, project.secret, deliveryId)).toEqual(retried);
    const forks = await forksOf(sessionId);
    expect(forks).toHaveLength(1);
    const followUp = forks[0]!;
    expect(ofType(await db.store.readStream(sessionId), "PullRequestFeedbackReceived")).toEqual([
      expect.objectContaining({ deliveryId, number: 3, followUp: { sessionId: followUp, how: "modify" } }),
    ]);
    expect(ofType<{ text: string }>(await db.store.readStream(followUp), "ChangeRequested")[0]!.text).toContain(
      "jane commented on src/sum.js:2 on merge request !3:\n\nSay that it adds.",
    );

    const done = await ended(followUp, "the follow-up approved");
    expect(done.outcome).toBe("approved");
    expect(await delivered(followUp)).toMatchObject({ type: "DeliveryCompleted", data: { pullRequest: { number: 3, updated: true } } });
    const mrs = `/api/v4/projects/${encodeURIComponent(project.repository)}/merge_requests`;
    expect(gitlab.requests.filter((r) => r.method === "POST" && r.url === mrs)).toHaveLength(1);
    expect(gitlab.requests.filter((r) => r.method === "PUT" && r.url === `${mrs}/3`)).toHaveLength(1);
    expect(api.mergeRequests).toHaveLength(1);
    expect(remoteHead(project.remote, `catcafe/${sessionId}`)).toBe(done.head);
    await until("the follow-up's success status", () => api.statuses.some((s) => s.sha === done.head && s.state === "success"));
    expect(api.statuses.filter((s) => s.sha === done.head).map((s) => s.state)).toEqual(["running", "success"]);
    expect(api.notes).toHaveLength(1);

    expect(await leaksOf(db, sessionId, [project.secret, TOKEN], logged)).toEqual([]);
    expect(await leaksOf(db, followUp, [project.secret, TOKEN], logged)).toEqual([]);
  });
});
