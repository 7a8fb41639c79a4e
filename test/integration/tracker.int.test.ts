// Back to the tracker (docs/delivery.md, "The tracker") through the real runner with real git, a
// bare repository as the remote, and local stand-ins of the GitHub and GitLab APIs recording every
// request: a session started from an issue comments once on the issue with its proposal, posts a
// commit status for each state on its branch head, and its delivery opens a pull request with
// `Closes #7`, the review's rounds and the test results; a review on that pull request (a payload
// of @octokit/webhooks-examples) becomes a follow-up iteration once per delivery id, and its
// delivery updates the same pull request.
import { execFileSync } from "node:child_process";
import path from "node:path";
import examples from "@octokit/webhooks-examples";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../server/db/pool";
import { deliverSession } from "../../server/delivery/service";
import type { FinishedTask } from "../../server/task-engine";
import { confirmTask, createTask, prepareTask } from "../../server/tasks/commands";
import { followUpFromPullRequestDelivery } from "../../server/tracker/review-follow-ups";
import { sessionIssue } from "../../server/tracker/session-issue";
import { ISSUE_COMMENT_STEP, trackerStepKinds } from "../../server/tracker/step-kinds";
import { startBrainStub, type BrainStub, type StubRequest } from "../helpers/brains-stub";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { claimedStep } from "../helpers/steps";
import { BUGGY_SUM, createHarness, FIXED_SUM, ofType, reviewApprove, reviewChanges, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let github: BrainStub;
let gitlab: BrainStub;
const TOKEN_ENV = "CATCAFE_TEST_TRACKER_TOKEN";
const TOKEN = "test-tracker-token-0123456789";
const PUBLIC_URL = "http://cats.test";

beforeAll(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  process.env.NEXTAUTH_URL = PUBLIC_URL;
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 4 });
  github = await startBrainStub();
  gitlab = await startBrainStub();
});
afterAll(async () => {
  delete process.env[TOKEN_ENV];
  delete process.env.NEXTAUTH_URL;
  await github?.close();
  await gitlab?.close();
});

const deps = () => ({ store: db.store, pool: db.pool });
const json = (req: StubRequest) => JSON.parse(req.body) as Record<string, unknown>;
/** The session once it has finished. */
async function ended(sessionId: string, what: string): Promise<FinishedTask> {
  const s = await h.waitFor(sessionId, what, (t) => t.status === "finished");
  if (s.status !== "finished") throw new Error(`${sessionId} has not finished`);
  return s;
}

function bareRemote(name: string): string {
  const dir = path.join(h.workspacesRoot, "..", `${name}.git`);
  execFileSync("git", ["init", "-q", "--bare", dir]);
  return dir;
}

/** Starts a task as the intake does: the session and its TaskStartedFromIssue in one transaction. */
async function startFromIssue(projectId: string, provider: "github" | "gitlab", mode: "proposal" | "implementation") {
  const prepared = await prepareTask(deps(), { projectId, prompt: "Fix sum(): it subtracts", mode });
  return withTransaction(db.pool, async (tx) => {
    const created = await createTask(deps(), prepared, testActor, tx);
    const issue = {
      provider,
      repository: "acme/app",
      issueNumber: 7,
      issueUrl: `https://${provider}.test/acme/app/issues/7`,
      title: "sum() subtracts",
      trigger: "label",
      deliveryId: `d-${created.sessionId}`,
      sender: "octocat",
    };
    await db.store.appendInTx(tx, created.sessionId, created.version, [{ type: "TaskStartedFromIssue", data: issue }], {
      actor: { kind: "system", id: "intake" },
    });
    return created.sessionId;
  });
}

async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function delivered(sessionId: string, count = 1) {
  return until(`delivery ${count} of ${sessionId}`, async () => {
    const events = await db.store.readStream(sessionId);
    const outcomes = events.filter((e) => e.streamId === sessionId && (e.type === "DeliveryCompleted" || e.type === "DeliveryFailed"));
    return outcomes.length >= count ? outcomes.at(-1)! : null;
  });
}

/** A GitHub API stand-in: pull requests, issue comments (the first POST fails with 500 when asked) and statuses. */
function githubApi(options: { failFirstComment: boolean }) {
  const pulls: Array<{ number: number; head: string; body: string }> = [];
  const comments: Array<{ id: number; body: string }> = [];
  const statuses: Array<{ sha: string; state: string; context: string; description: string; target_url?: string }> = [];
  let failComment = options.failFirstComment;
  github.handle((req, res) => {
    res.setHeader("content-type", "application/json");
    const send = (status: number, body: unknown) => {
      res.statusCode = status;
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/repos/acme/app/pulls" && req.method === "GET")
      return send(
        200,
        pulls
          .filter((p) => `acme:${p.head}` === url.searchParams.get("head"))
          .map((p) => ({ number: p.number, html_url: `https://github.test/pull/${p.number}` })),
      );
    if (url.pathname === "/repos/acme/app/pulls" && req.method === "POST") {
      const body = json(req);
      pulls.push({ number: 12, head: body.head as string, body: body.body as string });
      return send(201, { number: 12, html_url: "https://github.test/pull/12" });
    }
    if (url.pathname === "/repos/acme/app/pulls/12" && req.method === "PATCH") {
      pulls[0]!.body = json(req).body as string;
      return send(200, { number: 12, html_url: "https://github.test/pull/12" });
    }
    if (url.pathname === "/repos/acme/app/issues/7/comments" && req.method === "GET") return send(200, comments);
    if (url.pathname === "/repos/acme/app/issues/7/comments" && req.method === "POST") {
      if (failComment) {
        failComment = false;
        return send(500, { message: "stand-in failure" });
      }
      comments.push({ id: comments.length + 1, body: json(req).body as string });
      return send(201, comments.at(-1));
    }
    const status = /^\/repos\/acme\/app\/statuses\/([0-9a-f]{40})$/.exec(url.pathname);
    if (status && req.method === "POST") {
      statuses.push({ sha: status[1]!, ...(json(req) as { state: string; context: string; description: string }) });
      return send(201, {});
    }
    return send(404, { message: `no ${req.method} ${url.pathname} in the stand-in` });
  });
  return { pulls, comments, statuses };
}

const githubProject = (id: string, agents: Record<string, Array<Record<string, unknown>>>, remote: string, extra = {}) =>
  h.project(id, agents, {
    settings: {
      delivery: {
        method: "pull_request",
        remote,
        target: "main",
        tokenEnv: TOKEN_ENV,
        pullRequest: { provider: "github", apiBaseUrl: github.url, repository: "acme/app" },
      },
    },
    ...extra,
  });

/** A pull_request_review of the published examples, as a reviewer of `number` sends it. */
function reviewPayload(number: number, login: string, state: string, body: string) {
  const example = examples.find((e) => e.name === "pull_request_review")!.examples[0] as Record<string, unknown>;
  const payload = structuredClone(example) as {
    action: string;
    review: { state: string; body: string | null; user: { login: string } };
    pull_request: { number: number };
    repository: { full_name: string };
  };
  payload.action = "submitted";
  payload.review = { ...payload.review, state, body, user: { ...payload.review.user, login } };
  payload.pull_request = { ...payload.pull_request, number };
  payload.repository = { ...payload.repository, full_name: "acme/app" };
  return payload;
}

describe("GitHub", () => {
  const agents = {
    coder: [
      { reply: "Proposal: make sum add." },
      { reply: "First try.", files: { "src/sum.js": `${BUGGY_SUM}// looked at it\n` } },
      { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } },
      { reply: "Renamed as the reviewer asked.", files: { "src/sum.js": `${FIXED_SUM}// reviewed\n` } },
    ],
    reviewer: [{ reply: "Fine." }, { reply: reviewChanges() }, { reply: reviewApprove }],
    tester: [{ reply: "One test is enough." }, { reply: testPlan() }],
  };
  let sessionId = "";
  let api: ReturnType<typeof githubApi>;

  it("an issue's session comments on the issue once (a 500, then once), with the link and the proposal, and waits for a confirm", async () => {
    api = githubApi({ failFirstComment: true });
    await githubProject("gh-issue", agents, bareRemote("origin-gh"));
    sessionId = await startFromIssue("gh-issue", "github", "proposal");
    expect(await sessionIssue(db.pool, sessionId)).toMatchObject({ provider: "github", repository: "acme/app", issueNumber: 7 });
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    await until("the issue comment", () => api.comments.length === 1);
    const posts = github.requests.filter((r) => r.method === "POST" && r.url === "/repos/acme/app/issues/7/comments");
    expect(posts).toHaveLength(2); // the 500, then the comment
    expect(posts[1]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const comment = api.comments[0]!.body;
    expect(comment).toContain(`${PUBLIC_URL}/sessions/${sessionId}`);
    expect(comment).toContain("waits for a person's confirm in Cat Cafe");
    expect(comment).toContain("**coder**: Proposal: make sum add.");
    // The step's attempts are in the session's events, like a webhook's.
    const events = await db.store.readStream(sessionId);
    const step = ofType<{ stepId: string; kind: string; input: unknown }>(events, "StepScheduled").filter(
      (s) => s.kind === ISSUE_COMMENT_STEP,
    );
    expect(step).toHaveLength(1);
    expect(ofType<{ stepId: string }>(events, "StepFailed").filter((f) => f.stepId === step[0]!.stepId)).toHaveLength(1);
    await until("the comment step's completion", async () =>
      ofType<{ stepId: string }>(await db.store.readStream(sessionId), "StepCompleted").some((c) => c.stepId === step[0]!.stepId),
    );

    // A runner killed after posting runs the step again: it finds its comment and posts nothing.
    const [commentKind] = trackerStepKinds({ env: { [TOKEN_ENV]: TOKEN } });
    const again = await commentKind!.execute(claimedStep(ISSUE_COMMENT_STEP, step[0]!.input, { sessionId }), {
      signal: new AbortController().signal,
    } as never);
    expect(again).toMatchObject({ existed: true });
    expect(api.comments).toHaveLength(1);
    expect(JSON.stringify(await db.store.readStream(sessionId))).not.toContain(TOKEN);
  });

  it("confirm → statuses pending on each build's head, then success on the approved head; delivery opens a PR with Closes #7, rounds and tests", async () => {
    await confirmTask(deps(), { sessionId, via: "api" }, testActor);
    const done = await ended(sessionId, "approved");
    expect(done.outcome).toBe("approved");
    const head = done.head;
    await until("the success status", () => api.statuses.some((s) => s.sha === head && s.state === "success"));
    expect(api.statuses.every((s) => s.context === "catcafe")).toBe(true);
    const pending = api.statuses.filter((s) => s.state === "pending");
    expect(pending.length).toBeGreaterThanOrEqual(2); // one per build's head
    expect(pending.some((s) => s.sha === head)).toBe(true);
    expect(api.statuses.find((s) => s.state === "success")).toMatchObject({ target_url: `${PUBLIC_URL}/sessions/${sessionId}` });
    expect(api.statuses.filter((s) => s.sha === head && s.state === "success")).toHaveLength(1);

    await deliverSession(deps(), { sessionId }, testActor, { publicUrl: PUBLIC_URL });
    expect(await delivered(sessionId)).toMatchObject({ type: "DeliveryCompleted", data: { pullRequest: { number: 12, updated: false } } });
    const body = api.pulls[0]!.body;
    expect(body).toContain("Closes #7");
    expect(body).toContain("- Round 1: **changes_requested**: Not yet.");
    expect(body).toContain("  - blocking, resolved: src/sum.js:2 sum still subtracts");
    expect(body).toContain("Final verdict: **approve**: Looks right.");
    expect(body).toContain("- `node --test test/`: passed (exit 0)");
    expect(body).toContain(`Session: ${PUBLIC_URL}/sessions/${sessionId}`);
    // Still one comment on the issue: the session's later states comment nothing.
    expect(api.comments).toHaveLength(1);
  });

  it("a review requesting changes → one follow-up iteration (twice the same delivery id: once); the bot's own and an unknown PR ignored; its delivery updates the PR", async () => {
    const payload = reviewPayload(
      12,
      "reviewer-jane",
      "changes_requested",
      "Please add a comment to sum(). token ghp_abcdefghijklmnopqrstuvwxyz0123",
    );
    const answer = await followUpFromPullRequestDelivery(deps(), "github", "pull_request_review", payload, "gh-delivery-1");
    expect(answer).toMatchObject({ outcome: "followed_up", sessionId, followUp: { how: "modify" } });
    const again = await followUpFromPullRequestDelivery(deps(), "github", "pull_request_review", payload, "gh-delivery-1");
    expect(again).toEqual(answer);
    const bot = await followUpFromPullRequestDelivery(
      { ...deps(), botUser: "catcafe-bot" },
      "github",
      "pull_request_review",
      reviewPayload(12, "catcafe-bot", "commented", "Delivered by Cat Cafe."),
      "gh-delivery-2",
    );
    expect(bot).toEqual({ outcome: "ignored", reason: "a comment by Cat Cafe's own user catcafe-bot" });
    const stranger = await followUpFromPullRequestDelivery(
      deps(),
      "github",
      "pull_request_review",
      reviewPayload(999, "jane", "changes_requested", "x"),
      "gh-delivery-3",
    );
    expect(stranger).toEqual({ outcome: "ignored", reason: "no session delivered acme/app #999" });

    // One follow-up: one fork of the session, with the reviewer's text (its token taken out).
    const forks = await db.pool.query<{ stream_id: string; data: { text: string } }>(
      "SELECT stream_id, data FROM events WHERE type = 'ChangeRequested' AND data->>'baseSessionId' = $1",
      [sessionId],
    );
    expect(forks.rows).toHaveLength(1);
    const followUp = forks.rows[0]!.stream_id;
    expect(forks.rows[0]!.data.text).toContain("reviewer-jane requested changes on pull request #12:\n\nPlease add a comment to sum().");
    expect(forks.rows[0]!.data.text).not.toContain("ghp_");
    const feedback = ofType(await db.store.readStream(sessionId), "PullRequestFeedbackReceived");
    expect(feedback).toEqual([
      expect.objectContaining({ deliveryId: "gh-delivery-1", number: 12, followUp: { sessionId: followUp, how: "modify" } }),
    ]);

    const done = await ended(followUp, "the follow-up approved");
    expect(done.outcome).toBe("approved");
    const postsBefore = github.requests.filter((r) => r.method === "POST" && r.url === "/repos/acme/app/pulls").length;
    await deliverSession(deps(), { sessionId: followUp }, testActor, { publicUrl: PUBLIC_URL });
    expect(await delivered(followUp)).toMatchObject({ type: "DeliveryCompleted", data: { pullRequest: { number: 12, updated: true } } });
    expect(github.requests.filter((r) => r.method === "POST" && r.url === "/repos/acme/app/pulls")).toHaveLength(postsBefore);
    expect(github.requests.filter((r) => r.method === "PATCH" && r.url === "/repos/acme/app/pulls/12")).toHaveLength(1);
    expect(api.pulls).toHaveLength(1);
    expect(api.pulls[0]!.body).toContain("Closes #7");
    // The PR's branch carries the follow-up's head, and that head got its own success status.
    const remote = path.join(h.workspacesRoot, "..", "origin-gh.git");
    expect(execFileSync("git", ["--git-dir", remote, "rev-parse", `refs/heads/catcafe/${sessionId}`], { encoding: "utf8" }).trim()).toBe(
      done.head,
    );
    await until("the follow-up's success status", () => api.statuses.some((s) => s.sha === done.head && s.state === "success"));
    // Still one comment on the issue: the follow-up inherits the session's.
    expect(api.comments).toHaveLength(1);
  });

  it("a session that ends max_iterations_reached posts a failure status on its head", async () => {
    const api2 = githubApi({ failFirstComment: false });
    await githubProject(
      "gh-escalated",
      {
        coder: [{ reply: "Tried.", files: { "src/sum.js": `${BUGGY_SUM}// tried\n` } }],
        reviewer: [{ reply: reviewChanges() }],
        tester: [{ reply: testPlan() }],
      },
      bareRemote("origin-gh-escalated"),
      { maxIterations: 1 },
    );
    const id = await startFromIssue("gh-escalated", "github", "implementation");
    const done = await ended(id, "the end");
    expect(done.outcome).toBe("max_iterations_reached");
    await until("the failure status", () => api2.statuses.some((s) => s.sha === done.head && s.state === "failure"));
    expect(api2.statuses.filter((s) => s.sha === done.head).map((s) => s.state)).toEqual(["pending", "failure"]);
    expect(api2.statuses.find((s) => s.state === "failure")!.description).toBe("Cat Cafe: max_iterations_reached");
    // Never confirmed by anyone (implementation mode): it never waited, so no comment.
    expect(api2.comments).toHaveLength(0);
  });
});

describe("GitLab", () => {
  it("delivered on approval: opens the merge request with Closes #7, posts statuses named catcafe; a note on it becomes a follow-up once, delivered onto the same merge request", async () => {
    const mergeRequests: Array<{ iid: number; source: string; description: string }> = [];
    const statuses: Array<{ sha: string; state: string; name: string }> = [];
    gitlab.handle((req, res) => {
      res.setHeader("content-type", "application/json");
      const send = (status: number, body: unknown) => {
        res.statusCode = status;
        res.end(JSON.stringify(body));
      };
      const url = new URL(req.url, "http://x");
      if (url.pathname === "/projects/acme%2Fapp/merge_requests" && req.method === "GET")
        return send(
          200,
          mergeRequests
            .filter((m) => m.source === url.searchParams.get("source_branch"))
            .map((m) => ({ iid: m.iid, web_url: "https://gitlab.test/mr/3" })),
        );
      if (url.pathname === "/projects/acme%2Fapp/merge_requests" && req.method === "POST") {
        const body = json(req);
        mergeRequests.push({ iid: 3, source: body.source_branch as string, description: body.description as string });
        return send(201, { iid: 3, web_url: "https://gitlab.test/mr/3" });
      }
      if (url.pathname === "/projects/acme%2Fapp/merge_requests/3" && req.method === "PUT") {
        mergeRequests[0]!.description = json(req).description as string;
        return send(200, { iid: 3, web_url: "https://gitlab.test/mr/3" });
      }
      const status = /^\/projects\/acme%2Fapp\/statuses\/([0-9a-f]{40})$/.exec(url.pathname);
      if (status && req.method === "POST") {
        statuses.push({ sha: status[1]!, ...(json(req) as { state: string; name: string }) });
        return send(201, {});
      }
      return send(404, { message: `no ${req.method} ${url.pathname} in the stand-in` });
    });
    await h.project(
      "gl-issue",
      {
        coder: [
          { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } },
          { reply: "Commented.", files: { "src/sum.js": `${FIXED_SUM}// adds\n` } },
        ],
        reviewer: [{ reply: reviewApprove }],
        tester: [{ reply: testPlan() }],
      },
      {
        settings: {
          delivery: {
            method: "pull_request",
            remote: bareRemote("origin-gl"),
            // Delivered on approval: the follow-up fork too, onto the same merge request.
            auto: true,
            tokenEnv: TOKEN_ENV,
            pullRequest: { provider: "gitlab", apiBaseUrl: gitlab.url, repository: "acme/app" },
          },
        },
      },
    );
    const sessionId = await startFromIssue("gl-issue", "gitlab", "implementation");
    const done = await ended(sessionId, "approved");
    expect(done.outcome).toBe("approved");
    await until("the success status", () => statuses.some((s) => s.sha === done.head && s.state === "success"));
    expect(statuses.filter((s) => s.sha === done.head).map((s) => s.state)).toEqual(["running", "success"]);
    expect(statuses.every((s) => s.name === "catcafe")).toBe(true);

    expect(await delivered(sessionId)).toMatchObject({
      type: "DeliveryCompleted",
      data: { pullRequest: { provider: "gitlab", number: 3, updated: false } },
    });
    expect(mergeRequests[0]!.description).toContain("Closes #7");
    const create = gitlab.requests.find((r) => r.method === "POST" && r.url === "/projects/acme%2Fapp/merge_requests")!;
    expect(create.headers["private-token"]).toBe(TOKEN);

    // A note on the merge request, as GitLab sends it (object_kind note, noteable_type MergeRequest).
    const note = {
      object_kind: "note",
      event_type: "note",
      user: { id: 2, name: "Jane", username: "jane" },
      project: { id: 5, path_with_namespace: "acme/app" },
      object_attributes: {
        id: 9,
        note: "Say that it adds.",
        noteable_type: "MergeRequest",
        position: { new_path: "src/sum.js", new_line: 2 },
      },
      merge_request: { iid: 3, source_branch: `catcafe/${sessionId}` },
    };
    const answer = await followUpFromPullRequestDelivery(deps(), "gitlab", "Note Hook", note, "gl-delivery-1");
    expect(answer).toMatchObject({ outcome: "followed_up", followUp: { how: "modify" } });
    expect(await followUpFromPullRequestDelivery(deps(), "gitlab", "Note Hook", note, "gl-delivery-1")).toEqual(answer);
    const onIssue = { ...note, object_attributes: { ...note.object_attributes, noteable_type: "Issue" } };
    expect(await followUpFromPullRequestDelivery(deps(), "gitlab", "Note Hook", onIssue, "gl-delivery-2")).toEqual({
      outcome: "ignored",
      reason: "a note on a Issue, not a merge request",
    });
    const followUp = answer.outcome === "followed_up" ? answer.followUp.sessionId : "";
    const forks = await db.pool.query("SELECT 1 FROM events WHERE type = 'ChangeRequested' AND data->>'baseSessionId' = $1", [sessionId]);
    expect(forks.rowCount).toBe(1);
    const forked = await db.store.readStream(followUp);
    expect(ofType<{ text: string }>(forked, "ChangeRequested")[0]!.text).toContain(
      "jane commented on src/sum.js:2 on merge request !3:\n\nSay that it adds.",
    );
    const end = await ended(followUp, "the follow-up approved");
    expect(end.outcome).toBe("approved");
    expect(await delivered(followUp)).toMatchObject({ type: "DeliveryCompleted", data: { pullRequest: { number: 3, updated: true } } });
    expect(gitlab.requests.filter((r) => r.method === "POST" && r.url === "/projects/acme%2Fapp/merge_requests")).toHaveLength(1);
    expect(mergeRequests).toHaveLength(1);
  });
});
