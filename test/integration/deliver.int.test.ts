// Delivering an approved session (docs/delivery.md) through the real runner with real git: each
// session's commits are on its branch; Deliver merges locally (fast-forward, then already
// merged; a conflicting target reported with its files and left as it was), pushes to a bare
// repository as the remote, and opens or updates pull requests on local stubs of the GitHub
// and GitLab APIs, with every failure (422, 500, 429) recorded with its class.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveDelivery, deliverSession, deliveryApprovals } from "../../server/delivery/service";
import { appStepKinds } from "../../server/app-runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { withTransaction } from "../../server/db/pool";
import { startTask } from "../../server/tasks/commands";
import { startBrainStub, type BrainStub, type StubRequest } from "../helpers/brains-stub";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let github: BrainStub;
let gitlab: BrainStub;
const TOKEN_ENV = "CATCAFE_TEST_FORGE_TOKEN";
const TOKEN = "test-token-0123456789";

const agents = {
  coder: [{ reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } }],
  reviewer: [{ reply: reviewApprove }],
  tester: [{ reply: testPlan() }],
};
const retry = { maxAttempts: 2, backoffMs: [50] };

beforeAll(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 4 });
  github = await startBrainStub();
  gitlab = await startBrainStub();
});
afterAll(async () => {
  delete process.env[TOKEN_ENV];
  await github?.close();
  await gitlab?.close();
});

const deps = () => ({ store: db.store, pool: db.pool });

async function approvedSession(projectId: string): Promise<{ sessionId: string; head: string }> {
  const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
  const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
  expect(done.outcome).toBe("approved");
  return { sessionId, head: done.status === "finished" ? done.head : "" };
}

async function delivered(sessionId: string, count = 1) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = await db.store.readStream(sessionId);
    const outcomes = events.filter((e) => e.type === "DeliveryCompleted" || e.type === "DeliveryFailed");
    if (outcomes.length >= count) return { events, last: outcomes.at(-1)! };
    if (Date.now() > deadline)
      throw new Error(
        `no delivery outcome for ${sessionId}: ${events
          .slice(-5)
          .map((e) => e.type)
          .join(", ")}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

const branchOf = (id: string) => `catcafe/${id}`;
const json = (req: StubRequest) => JSON.parse(req.body) as Record<string, unknown>;
/** A commit status the tracker posts for a project with pull requests: no call of the delivery. */
const isStatus = (req: StubRequest) => /\/statuses\/[0-9a-f]{40}$/.test(req.url);
/** The stand-in's calls since `seen`, but the commit statuses. */
const pullRequestCalls = (stub: BrainStub, seen: number) => stub.requests.slice(seen).filter((r) => !isStatus(r));

describe("the session's branch and a local merge", () => {
  it("each commit moves the session's branch; Deliver fast-forwards the target, and again is already merged", async () => {
    gitIn(h.repo, "branch", "release", "main");
    await h.project("merge", agents, { settings: { delivery: { method: "merge", target: "release" } } });
    const { sessionId, head } = await approvedSession("merge");
    expect(gitIn(h.repo, "rev-parse", `refs/heads/${branchOf(sessionId)}`)).toBe(head);
    expect(gitIn(h.repo, "log", "--format=%s", `main..${branchOf(sessionId)}`)).toMatch(/^coder \(building\): /);

    const asked = await deliverSession(deps(), { sessionId }, testActor);
    expect(asked).toMatchObject({ method: "merge", branch: branchOf(sessionId) });
    const first = await delivered(sessionId);
    expect(first.last).toMatchObject({
      type: "DeliveryCompleted",
      data: { merged: { target: "release", commit: head, how: "fast_forward" } },
    });
    expect(gitIn(h.repo, "rev-parse", "refs/heads/release")).toBe(head);
    expect(first.last.metadata.actor).toEqual({ kind: "system", id: "delivery" });
    expect(ofType(first.events, "DeliveryRequested")).toEqual([expect.objectContaining({ commit: head, target: "release", remote: null })]);

    await deliverSession(deps(), { sessionId }, testActor);
    const again = await delivered(sessionId, 2);
    expect(again.last).toMatchObject({ type: "DeliveryCompleted", data: { merged: { how: "already_merged", commit: head } } });
  });

  it("a target that conflicts is reported with the files and stays where it was; a checked-out target is refused", async () => {
    gitIn(h.repo, "branch", "hotfix", "main");
    const wt = path.join(h.workspacesRoot, "..", "hotfix-wt");
    gitIn(h.repo, "worktree", "add", "-q", wt, "hotfix");
    fs.writeFileSync(path.join(wt, "src/sum.js"), "function sum(a, b) {\n  return b + a + 0;\n}\nmodule.exports = { sum };\n");
    gitIn(wt, "commit", "-q", "-am", "hotfix: another sum");
    const hotfix = gitIn(h.repo, "rev-parse", "refs/heads/hotfix");
    await h.project("conflict", agents, { settings: { delivery: { method: "merge", target: "hotfix" } } });
    const { sessionId } = await approvedSession("conflict");

    // hotfix is checked out in a worktree: merging would change it under whoever works there.
    await deliverSession(deps(), { sessionId }, testActor);
    expect((await delivered(sessionId)).last).toMatchObject({ type: "DeliveryFailed", data: { errorClass: "target_checked_out" } });
    gitIn(h.repo, "worktree", "remove", "--force", wt);

    await deliverSession(deps(), { sessionId }, testActor);
    const { last } = await delivered(sessionId, 2);
    expect(last).toMatchObject({ type: "DeliveryFailed", data: { errorClass: "merge_conflict", files: ["src/sum.js"] } });
    expect(gitIn(h.repo, "rev-parse", "refs/heads/hotfix")).toBe(hotfix);
  });

  it("a project that asks for two people's approvals delivers only after two different people approved; who approved is recorded", async () => {
    gitIn(h.repo, "branch", "reviewed", "main");
    await h.project("approvals", agents, { settings: { delivery: { method: "merge", target: "reviewed", approvals: 2 } } });
    const { sessionId, head } = await approvedSession("approvals");
    const ada = { kind: "user", id: "ada" } as const;
    const bo = { kind: "user", id: "bo" } as const;
    expect((await rejection(deliverSession(deps(), { sessionId }, ada))).message).toBe(
      "project approvals delivers after approvals by 2 different people; this session has 0",
    );
    expect(await deliveryApprovals(deps(), sessionId)).toEqual({ needed: 2, approvedBy: [] });
    await approveDelivery(deps(), { sessionId }, ada);
    expect(await deliveryApprovals(deps(), sessionId)).toEqual({ needed: 2, approvedBy: ["user:ada"] });
    expect((await rejection(approveDelivery(deps(), { sessionId }, ada))).code).toBe("CONFLICT");
    expect((await rejection(deliverSession(deps(), { sessionId }, ada))).message).toMatch(/this session has 1 \(user:ada\)$/);
    expect(await approveDelivery(deps(), { sessionId }, bo)).toMatchObject({ approvedBy: ["user:ada", "user:bo"] });
    await deliverSession(deps(), { sessionId }, bo);
    const { events } = await delivered(sessionId);
    expect(ofType(events, "DeliveryRequested")).toEqual([expect.objectContaining({ approvedBy: ["user:ada", "user:bo"] })]);
    expect(gitIn(h.repo, "rev-parse", "refs/heads/reviewed")).toBe(head);
  });

  it("delivery on approval: the session's approval delivers it, asked by the system in the same transaction", async () => {
    gitIn(h.repo, "branch", "auto", "main");
    await h.project("auto", agents, { settings: { delivery: { method: "merge", target: "auto", auto: true } } });
    const { sessionId, head } = await approvedSession("auto");
    const { events, last } = await delivered(sessionId);
    expect(last).toMatchObject({ type: "DeliveryCompleted", data: { merged: { target: "auto", commit: head, how: "fast_forward" } } });
    const requested = events.find((e) => e.type === "DeliveryRequested")!;
    expect(requested.metadata.actor).toEqual({ kind: "system", id: "auto-delivery" });
    // Asked in the transaction that finished the session: the ending and the request share it.
    const finalized = events.find((e) => e.type === "SessionFinalized")!;
    expect(requested.txId).toBe(finalized.txId);
    expect(gitIn(h.repo, "rev-parse", "refs/heads/auto")).toBe(head);
    expect(ofType(events, "DeliveryRequested")).toHaveLength(1);
  });

  it("delivery on approval with two approvals: nothing at the session's approval or the first person's; the second's delivers, asked by them, once", async () => {
    gitIn(h.repo, "branch", "auto-reviewed", "main");
    await h.project("auto-approvals", agents, {
      settings: { delivery: { method: "merge", target: "auto-reviewed", approvals: 2, auto: true } },
    });
    const { sessionId, head } = await approvedSession("auto-approvals");
    const ada = { kind: "user", id: "ada" } as const;
    const bo = { kind: "user", id: "bo" } as const;
    await approveDelivery(deps(), { sessionId }, ada);
    expect(ofType(await db.store.readStream(sessionId), "DeliveryRequested")).toEqual([]);
    // Two approvals at once by the same second person: one is refused, one delivery is asked for.
    const both = await Promise.allSettled([approveDelivery(deps(), { sessionId }, bo), approveDelivery(deps(), { sessionId }, bo)]);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const { events } = await delivered(sessionId);
    const requested = events.filter((e) => e.type === "DeliveryRequested");
    expect(requested).toHaveLength(1);
    expect(requested[0]!.metadata.actor).toEqual(bo);
    expect(requested[0]!.data).toMatchObject({ approvedBy: ["user:ada", "user:bo"] });
    expect(gitIn(h.repo, "rev-parse", "refs/heads/auto-reviewed")).toBe(head);
    // Automatic once: a third approval after it asks for no second delivery.
    await approveDelivery(deps(), { sessionId }, { kind: "user", id: "cy" });
    expect(ofType(await db.store.readStream(sessionId), "DeliveryRequested")).toHaveLength(1);
  });

  it("delivery on approval that the settings cannot carry out (a push with no remote) is recorded as failed, not_configured; the session stays approved", async () => {
    await h.project("auto-unconfigured", agents, { settings: { delivery: { method: "push", auto: true } } });
    const { sessionId } = await approvedSession("auto-unconfigured");
    const { events, last } = await delivered(sessionId);
    expect(last).toMatchObject({
      type: "DeliveryFailed",
      data: { errorClass: "not_configured", message: expect.stringMatching(/set delivery\.remote/) },
    });
    expect(events.filter((e) => e.type === "StepScheduled" && (e.data as { kind: string }).kind === "deliver")).toEqual([]);
    expect((await h.state(sessionId)).outcome).toBe("approved");
  });

  it("when recording a delivery's outcome fails (a defect), the delivery is recorded as failed: none stays running", async () => {
    gitIn(h.repo, "branch", "defect", "main");
    await h.project("defect", agents, { settings: { delivery: { method: "merge", target: "defect" } } });
    const { sessionId } = await approvedSession("defect");
    const { stepId } = await deliverSession(deps(), { sessionId }, testActor);
    const { events } = await delivered(sessionId);
    const outcome = events.find((e) => e.type === "StepCompleted" && (e.data as { stepId: string }).stepId === stepId)!;
    const scheduled = ofType<{ stepId: string; kind: string; input: unknown }>(events, "StepScheduled").find((s) => s.stepId === stepId)!;
    // The application's fallback, as a runner's registry calls it with the step's kind and input.
    const { onReactionError } = stepKindRegistry(
      appStepKinds({ pool: db.pool, store: db.store, workspacesRoot: h.workspacesRoot, webhook: { webhookFor: async () => null } }),
    );
    await withTransaction(db.pool, (tx) => onReactionError(tx, db.store, sessionId, [outcome], "the reaction threw", scheduled));
    const after = await db.store.readStream(sessionId);
    expect(after.at(-1)).toMatchObject({
      type: "DeliveryFailed",
      data: { stepId, errorClass: "internal_error", message: "the reaction threw" },
    });
  });

  it("refuses what cannot be delivered: a session not approved, a push with no remote named", async () => {
    await h.project("norem", agents, { settings: { delivery: { method: "push" } } });
    const { sessionId } = await startTask(deps(), { projectId: "norem", prompt: "Fix sum()", mode: "proposal" }, testActor);
    expect((await rejection(deliverSession(deps(), { sessionId }, testActor))).message).toMatch(
      /only an approved session can be delivered/,
    );
    const approved = await approvedSession("norem");
    const refused = await rejection(deliverSession(deps(), { sessionId: approved.sessionId }, testActor));
    expect(refused).toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringContaining("set delivery.remote") });
    expect(ofType(await db.store.readStream(approved.sessionId), "DeliveryRequested")).toEqual([]);
  });
});

describe("push and pull requests", () => {
  function bareRemote(name: string): string {
    const dir = path.join(h.workspacesRoot, "..", `${name}.git`);
    execFileSync("git", ["init", "-q", "--bare", dir]);
    return dir;
  }

  it("pushes the session's branch to the remote: its head there is the approved commit", async () => {
    const remote = bareRemote("origin-push");
    await h.project("push", agents, { settings: { delivery: { method: "push", remote } } });
    const { sessionId, head } = await approvedSession("push");
    await deliverSession(deps(), { sessionId }, testActor);
    expect((await delivered(sessionId)).last).toMatchObject({ type: "DeliveryCompleted", data: { pushed: { remote } } });
    expect(execFileSync("git", ["--git-dir", remote, "rev-parse", `refs/heads/${branchOf(sessionId)}`], { encoding: "utf8" }).trim()).toBe(
      head,
    );
  });

  it("a remote that cannot be reached is tried again, then recorded as remote_unreachable; the session's branch is unchanged", async () => {
    const remote = path.join(h.workspacesRoot, "..", "nowhere.git");
    await h.project("unreachable", agents, { settings: { retry, delivery: { method: "push", remote } } });
    const { sessionId, head } = await approvedSession("unreachable");
    await deliverSession(deps(), { sessionId }, testActor);
    const { last } = await delivered(sessionId);
    expect(last).toMatchObject({ type: "DeliveryFailed", data: { errorClass: "remote_unreachable" } });
    const steps = await db.pool.query("SELECT attempt, state FROM steps WHERE session_id = $1 AND kind = 'deliver'", [sessionId]);
    expect(steps.rows).toEqual([{ attempt: 2, state: "failed" }]);
    expect(gitIn(h.repo, "rev-parse", `refs/heads/${branchOf(sessionId)}`)).toBe(head);
  });

  it("GitHub: opens the pull request with the summary, verdict, tests and link as its body; a second delivery updates it", async () => {
    const remote = bareRemote("origin-gh");
    const pulls: Array<{ number: number; head: string }> = [];
    github.handle((req, res) => {
      res.setHeader("content-type", "application/json");
      // The session's commit statuses (docs/delivery.md, "Commit statuses") are taken and set aside.
      if (isStatus(req)) return res.end("{}");
      if (req.method === "GET")
        return res.end(
          JSON.stringify(
            pulls
              .filter((p) => req.url.includes(encodeURIComponent(`acme:${p.head}`)))
              .map((p) => ({ number: p.number, html_url: `https://github.test/acme/app/pull/${p.number}` })),
          ),
        );
      if (req.method === "POST") {
        pulls.push({ number: 7, head: json(req).head as string });
        res.statusCode = 201;
        return res.end(JSON.stringify({ number: 7, html_url: "https://github.test/acme/app/pull/7" }));
      }
      return res.end(JSON.stringify({ number: 7, html_url: "https://github.test/acme/app/pull/7" }));
    });
    await h.project("gh", agents, {
      settings: {
        retry,
        delivery: {
          method: "pull_request",
          remote,
          target: "main",
          tokenEnv: TOKEN_ENV,
          pullRequest: { provider: "github", apiBaseUrl: github.url, repository: "acme/app" },
        },
      },
    });
    const { sessionId } = await approvedSession("gh");
    const seen = github.requests.length;
    await deliverSession(deps(), { sessionId }, testActor, { publicUrl: "http://cats.test" });
    expect((await delivered(sessionId)).last).toMatchObject({
      type: "DeliveryCompleted",
      data: { pullRequest: { provider: "github", number: 7, url: "https://github.test/acme/app/pull/7", updated: false } },
    });
    const [lookup, open] = pullRequestCalls(github, seen);
    expect(lookup).toMatchObject({
      method: "GET",
      url: `/repos/acme/app/pulls?state=open&head=${encodeURIComponent(`acme:${branchOf(sessionId)}`)}`,
    });
    expect(open!.method).toBe("POST");
    expect(open!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const body = json(open!);
    expect(body).toMatchObject({ title: "Fix sum()", head: branchOf(sessionId), base: "main" });
    expect(body.body).toContain("## Task\n\nFix sum()");
    expect(body.body).toContain("**approve**: Looks right.");
    expect(body.body).toContain("- `node --test test/`: passed (exit 0)");
    expect(body.body).toContain(`Session: http://cats.test/sessions/${sessionId}`);

    await deliverSession(deps(), { sessionId }, testActor);
    expect((await delivered(sessionId, 2)).last).toMatchObject({
      type: "DeliveryCompleted",
      data: { pullRequest: { number: 7, updated: true } },
    });
    expect(pullRequestCalls(github, seen).map((r) => r.method)).toEqual(["GET", "POST", "GET", "PATCH"]);
    // The token is in no event.
    expect(JSON.stringify(await db.store.readStream(sessionId))).not.toContain(TOKEN);
  });

  it("GitLab: opens the merge request, then updates it; 422, 500 and 429 are each recorded with their class", async () => {
    const remote = bareRemote("origin-gl");
    let answer: { status: number; retryAfter?: string } | null = null;
    let opened = false;
    gitlab.handle((req, res) => {
      res.setHeader("content-type", "application/json");
      if (isStatus(req)) return res.end("{}");
      if (answer) {
        res.statusCode = answer.status;
        if (answer.retryAfter) res.setHeader("retry-after", answer.retryAfter);
        return res.end(JSON.stringify({ message: `HTTP ${answer.status} from the stub` }));
      }
      if (req.method === "GET")
        return res.end(JSON.stringify(opened ? [{ iid: 3, web_url: "https://gitlab.test/acme/app/-/merge_requests/3" }] : []));
      opened = true;
      res.statusCode = req.method === "POST" ? 201 : 200;
      return res.end(JSON.stringify({ iid: 3, web_url: "https://gitlab.test/acme/app/-/merge_requests/3" }));
    });
    await h.project("gl", agents, {
      settings: {
        retry,
        delivery: {
          method: "pull_request",
          remote,
          tokenEnv: TOKEN_ENV,
          pullRequest: { provider: "gitlab", apiBaseUrl: gitlab.url, repository: "acme/app" },
        },
      },
    });
    const { sessionId } = await approvedSession("gl");
    const seen = gitlab.requests.length;
    await deliverSession(deps(), { sessionId }, testActor);
    expect((await delivered(sessionId)).last).toMatchObject({
      type: "DeliveryCompleted",
      data: { pullRequest: { provider: "gitlab", number: 3, updated: false } },
    });
    const create = pullRequestCalls(gitlab, seen).find((r) => r.method === "POST")!;
    expect(create.url).toBe("/projects/acme%2Fapp/merge_requests");
    expect(create.headers["private-token"]).toBe(TOKEN);
    expect(json(create)).toMatchObject({ source_branch: branchOf(sessionId), target_branch: "main" });
    await deliverSession(deps(), { sessionId }, testActor);
    expect((await delivered(sessionId, 2)).last).toMatchObject({ data: { pullRequest: { number: 3, updated: true } } });

    const classes: string[] = [];
    for (const [i, a] of [{ status: 422 }, { status: 500 }, { status: 429, retryAfter: "0" }].entries()) {
      answer = a;
      await deliverSession(deps(), { sessionId }, testActor);
      const { last } = await delivered(sessionId, 3 + i);
      classes.push((last.data as { errorClass: string }).errorClass);
    }
    expect(classes).toEqual(["pr_invalid", "api_unavailable", "rate_limited"]);
    // A retryable failure was tried again (retry.maxAttempts 2) before it was recorded.
    const steps = await db.pool.query<{ attempt: number }>(
      "SELECT attempt FROM steps WHERE session_id = $1 AND kind = 'deliver' ORDER BY scheduled_at",
      [sessionId],
    );
    expect(steps.rows.map((r) => r.attempt)).toEqual([1, 1, 1, 2, 2]);
  });
});
