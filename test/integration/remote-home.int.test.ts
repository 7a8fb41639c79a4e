// The project's remote as the home of the sessions' branches (docs/delivery.md, "The remote is the
// home"), with two runner "hosts": two clones of one bare remote, each mapped to the registered
// repository with the runner's repositoryPath option (as runner/main.ts does from
// CATCAFE_REPOSITORY_PATHS), each with its own workspaces. Checks: every build's commit is on
// `catcafe/<id>` on the remote right after it is made; the host that takes over fetches the
// other's commit from the remote (the bundle is gone); a merge delivery moves the remote's
// target, not a clone's; with no remote, a mapped clone refuses the merge and the registered
// repository does it; a remote that cannot be reached loses no build and is recorded; a stale
// attempt never moves the session's branch back.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { appStepKinds } from "../../server/app-runner";
import { createAppEventStore } from "../../server/app-store";
import { createPool, type Db } from "../../server/db/pool";
import { deliverSession } from "../../server/delivery/service";
import type { RecordedEvent } from "../../server/events/types";
import { webhookTarget } from "../../server/projects/access";
import type { StepExecutor } from "../../server/runner/executors";
import type { Runner } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { startTask } from "../../server/tasks/commands";
import { pushSessionBranch } from "../../server/workspaces";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import {
  commitFiles,
  createHarness,
  FIXED_SUM,
  gitIn,
  ofType,
  reviewApprove,
  reviewChanges,
  testPlan,
  type Harness,
} from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let root: string;
const running: Runner[] = [];
const pools: Db[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  root = path.dirname(h.repo);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

const deps = () => ({ store: db.store, pool: db.pool });
const branchOf = (id: string) => `catcafe/${id}`;
const retry = { maxAttempts: 5, backoffMs: [200] };

/** A bare repository holding the project (its `main`), and `branches` made from it: the project's remote. */
function bareRemote(name: string, branches: string[] = []): string {
  const bare = path.join(root, `${name}.git`);
  execFileSync("git", ["clone", "-q", "--bare", h.repo, bare]);
  for (const b of branches) execFileSync("git", ["--git-dir", bare, "branch", b, "main"]);
  return bare;
}

/** A host's clone of `from`: --no-local, so it holds what a clone on another machine holds. */
function hostClone(name: string, from: string): string {
  const clone = path.join(root, name);
  execFileSync("git", ["clone", "-q", "--no-local", from, clone]);
  return clone;
}

/** Where `branch` points in the repository at `gitDir` (null when it has no such branch). */
function refIn(gitDir: string, branch: string): string | null {
  try {
    return execFileSync("git", ["--git-dir", gitDir, "rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], {
      encoding: "utf8",
    }).trim();
  } catch {
    return null;
  }
}

/** A host's executors: the application's step kinds with its own clone mapped to the registered repository, and its own workspaces. */
function hostExecutors(clone: string | null, workspaces: string): Record<string, StepExecutor> {
  const pool = createPool(db.url, 4);
  pools.push(pool);
  const store = createAppEventStore(pool);
  return stepKindRegistry(
    appStepKinds({
      pool,
      store,
      workspacesRoot: path.join(root, workspaces),
      ...(clone ? { repositoryPath: (repoPath: string) => (repoPath === h.repo ? clone : repoPath) } : {}),
      webhook: { webhookFor: (id) => webhookTarget(pool, store, id), publicUrl: "http://catcafe.test", requestTimeoutMs: 1_000 },
    }),
  ).executors;
}

async function startHost(executors: Record<string, StepExecutor>): Promise<Runner> {
  const runner = await h.startRunner(undefined, { executors, shutdownGraceMs: 50 });
  running.push(runner);
  return runner;
}

async function eventsUntil(sessionId: string, what: string, done: (events: RecordedEvent[]) => boolean): Promise<RecordedEvent[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = await db.store.readStream(sessionId);
    if (done(events)) return events;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${events.map((e) => e.type).join(", ")}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

const commits = (events: RecordedEvent[]) => ofType<{ commit: string; bundle?: { blob: string } }>(events, "WorkspaceCommitted");
const deliveryOutcome = (events: RecordedEvent[]) => events.find((e) => e.type === "DeliveryCompleted" || e.type === "DeliveryFailed");

describe("two hosts, one remote", () => {
  it("each build is on catcafe/<id> on the remote; host B fetches host A's commit from the remote, not a bundle; the merge delivery moves the remote's target only", async () => {
    const remote = bareRemote("home", ["release"]);
    const cloneA = hostClone("host-a", remote);
    const cloneB = hostClone("host-b", remote);
    await h.project(
      "two-hosts",
      {
        coder: [
          { reply: "First try.", files: { "src/sum.js": "function sum(a, b) {\n  return a * b;\n}\nmodule.exports = { sum };\n" } },
          { reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } },
        ],
        reviewer: [{ reply: reviewChanges("sum multiplies") }, { reply: reviewApprove }],
        tester: [{ reply: testPlan() }],
      },
      { settings: { retry, delivery: { method: "merge", remote, target: "release" } } },
    );

    // Host A builds, and holds on to whatever comes next until it is stopped.
    const execA = hostExecutors(cloneA, "workspaces-a");
    const onlyBuilds: StepExecutor = async (step, ctx) => {
      if ((step.input as { phase?: string }).phase === "build") return execA.agent!(step, ctx);
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    };
    const hostA = await startHost({ agent: onlyBuilds });
    const { sessionId } = await startTask(deps(), { projectId: "two-hosts", prompt: "Fix sum()", mode: "implementation" }, testActor);
    const first = commits(await eventsUntil(sessionId, "host A's build", (e) => commits(e).length === 1))[0]!;
    // Right after the build, before anything else: the remote's branch is the session's head.
    expect(refIn(remote, branchOf(sessionId))).toBe(first.commit);

    // The bundle is gone: host B can get the commit only from the remote.
    expect(first.bundle?.blob).toMatch(/^[0-9a-f]{64}$/);
    await db.pool.query("DELETE FROM blobs WHERE hash = $1", [first.bundle!.blob]);
    expect(() => execFileSync("git", ["-C", cloneB, "cat-file", "-e", `${first.commit}^{commit}`], { stdio: "ignore" })).toThrow();
    await startHost(hostExecutors(cloneB, "workspaces-b"));
    await hostA.stop();

    const second = commits(await eventsUntil(sessionId, "host B's build", (e) => commits(e).length === 2))[1]!;
    expect(refIn(remote, branchOf(sessionId))).toBe(second.commit);
    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");
    const head = done.status === "finished" ? done.head : "";
    expect(head).toBe(second.commit);
    expect(gitIn(cloneB, "rev-parse", `${second.commit}^`)).toBe(first.commit);
    // Host B's clone has host A's commit (fetched from the remote: the bundle was deleted), pinned.
    expect(gitIn(cloneB, "rev-parse", `refs/catcafe/pins/${first.commit}`)).toBe(first.commit);
    // Both hosts' clones say the same of the session's branch once they fetch it: the remote's.
    gitIn(cloneA, "fetch", "-q", "origin", `+refs/heads/${branchOf(sessionId)}:refs/remotes/origin/${branchOf(sessionId)}`);
    expect(gitIn(cloneA, "rev-parse", `refs/remotes/origin/${branchOf(sessionId)}`)).toBe(head);
    expect(gitIn(remote, "log", "--format=%s", `main..${branchOf(sessionId)}`).split("\n")).toHaveLength(2);
    expect(ofType(await db.store.readStream(sessionId), "SessionBranchPushFailed")).toEqual([]);

    // The delivery runs on host B and merges into the remote's release, not host B's clone's.
    const releaseInB = refIn(path.join(cloneB, ".git"), "release");
    await deliverSession(deps(), { sessionId }, testActor);
    const events = await eventsUntil(sessionId, "the delivery", (e) => deliveryOutcome(e) !== undefined);
    expect(deliveryOutcome(events)).toMatchObject({
      type: "DeliveryCompleted",
      data: { pushed: { remote }, merged: { target: "release", commit: head, how: "fast_forward" } },
    });
    expect(refIn(remote, "release")).toBe(head);
    expect(refIn(path.join(cloneB, ".git"), "release")).toBe(releaseInB);
    expect(refIn(path.join(h.repo, ".git"), "release")).toBeNull();
  });

  it("a merge delivery onto a remote target that moved on: a merge commit pushed there, its parents the target and the session's head", async () => {
    const remote = bareRemote("home-moved", ["release"]);
    const cloneA = hostClone("host-a-moved", remote);
    // Someone pushes another change to release meanwhile (a file the session does not touch).
    const other = hostClone("someone", remote);
    gitIn(other, "checkout", "-q", "release");
    fs.writeFileSync(path.join(other, "NOTES.md"), "release notes\n");
    gitIn(other, "add", "NOTES.md");
    gitIn(other, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", "notes");
    gitIn(other, "push", "-q", "origin", "release");
    const moved = refIn(remote, "release")!;
    await h.project(
      "moved-target",
      {
        coder: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }],
        reviewer: [{ reply: reviewApprove }],
        tester: [{ reply: testPlan() }],
      },
      { settings: { retry, delivery: { method: "merge", remote, target: "release" } } },
    );
    await startHost(hostExecutors(cloneA, "workspaces-moved"));
    const { sessionId } = await startTask(deps(), { projectId: "moved-target", prompt: "Fix sum()", mode: "implementation" }, testActor);
    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    const head = done.status === "finished" ? done.head : "";
    await deliverSession(deps(), { sessionId }, testActor);
    const events = await eventsUntil(sessionId, "the delivery", (e) => deliveryOutcome(e) !== undefined);
    expect(deliveryOutcome(events)).toMatchObject({ type: "DeliveryCompleted", data: { merged: { how: "merge_commit" } } });
    const merged = refIn(remote, "release")!;
    expect(
      execFileSync("git", ["--git-dir", remote, "rev-parse", `${merged}^1`, `${merged}^2`], { encoding: "utf8" })
        .trim()
        .split("\n"),
    ).toEqual([moved, head]);
  });
});

describe("no remote: the registered repository is the home", () => {
  it("a merge delivery on a runner whose repository is a mapped clone is refused as retryable, naming why; a runner on the registered repository merges there", async () => {
    gitIn(h.repo, "branch", "reviewed", "main");
    const clone = hostClone("host-mapped", h.repo);
    await h.project(
      "no-remote",
      {
        coder: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }],
        reviewer: [{ reply: reviewApprove }],
        tester: [{ reply: testPlan() }],
      },
      { settings: { retry, delivery: { method: "merge", target: "reviewed" } } },
    );
    const mapped = await startHost(hostExecutors(clone, "workspaces-mapped"));
    const { sessionId } = await startTask(deps(), { projectId: "no-remote", prompt: "Fix sum()", mode: "implementation" }, testActor);
    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    const head = done.status === "finished" ? done.head : "";
    const { stepId } = await deliverSession(deps(), { sessionId }, testActor);
    const scheduled = (await db.store.readStream(sessionId)).find(
      (e) => e.type === "StepScheduled" && (e.data as { stepId: string }).stepId === stepId,
    );
    expect(scheduled?.data).toMatchObject({ input: { needsRegisteredRepository: true } });

    const refused = await eventsUntil(sessionId, "the mapped clone's refusal", (e) =>
      e.some((x) => x.type === "StepFailed" && (x.data as { stepId: string }).stepId === stepId),
    );
    const failure = ofType<{ stepId: string; message: string; retryAt: string | null }>(refused, "StepFailed").find(
      (f) => f.stepId === stepId,
    )!;
    expect(failure.retryAt).not.toBeNull();
    expect(failure.message).toBe(
      `[needs_registered_repository] merging into reviewed with no delivery remote moves the registered repository ${h.repo}; ` +
        `this runner has a clone of it (${clone}, CATCAFE_REPOSITORY_PATHS): left to a runner whose repository is the registered one, or set delivery.remote`,
    );
    expect(deliveryOutcome(refused)).toBeUndefined();
    expect(refIn(path.join(h.repo, ".git"), "reviewed")).not.toBe(head);
    expect(refIn(path.join(clone, ".git"), "reviewed")).toBeNull();

    // A runner on the registered repository takes the retry and merges there.
    await startHost(hostExecutors(null, "workspaces-registered"));
    await mapped.stop();
    const events = await eventsUntil(sessionId, "the delivery", (e) => deliveryOutcome(e) !== undefined);
    expect(deliveryOutcome(events)).toMatchObject({
      type: "DeliveryCompleted",
      data: { pushed: null, merged: { target: "reviewed", commit: head, how: "fast_forward" } },
    });
    expect(refIn(path.join(h.repo, ".git"), "reviewed")).toBe(head);
    expect(refIn(path.join(clone, ".git"), "reviewed")).toBeNull();
  });

  it("when no runner with the registered repository takes it within the retry policy, the delivery is recorded as failed, needs_registered_repository", async () => {
    gitIn(h.repo, "branch", "reviewed-once", "main");
    const clone = hostClone("host-mapped-once", h.repo);
    await h.project(
      "no-remote-once",
      {
        coder: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }],
        reviewer: [{ reply: reviewApprove }],
        tester: [{ reply: testPlan() }],
      },
      { settings: { retry: { maxAttempts: 1, backoffMs: [50] }, delivery: { method: "merge", target: "reviewed-once" } } },
    );
    await startHost(hostExecutors(clone, "workspaces-mapped-once"));
    const { sessionId } = await startTask(deps(), { projectId: "no-remote-once", prompt: "Fix sum()", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    const main = refIn(path.join(h.repo, ".git"), "main");
    await deliverSession(deps(), { sessionId }, testActor);
    const events = await eventsUntil(sessionId, "the delivery", (e) => deliveryOutcome(e) !== undefined);
    expect(deliveryOutcome(events)).toMatchObject({
      type: "DeliveryFailed",
      data: { errorClass: "needs_registered_repository", message: expect.stringContaining("or set delivery.remote") },
    });
    expect(refIn(path.join(h.repo, ".git"), "reviewed-once")).toBe(main);
  });
});

describe("a remote that cannot be reached", () => {
  it("loses no build: the session goes on and is approved, the failed push is recorded; the delivery pushes the branch once the remote is back", async () => {
    const remote = path.join(root, "away.git");
    const clone = hostClone("host-away", h.repo);
    await h.project(
      "away",
      {
        coder: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }],
        reviewer: [{ reply: reviewApprove }],
        tester: [{ reply: testPlan() }],
      },
      { settings: { retry, delivery: { method: "push", remote } } },
    );
    await startHost(hostExecutors(clone, "workspaces-away"));
    const { sessionId } = await startTask(deps(), { projectId: "away", prompt: "Fix sum()", mode: "implementation" }, testActor);
    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");
    const head = done.status === "finished" ? done.head : "";
    const events = await db.store.readStream(sessionId);
    expect(commits(events).map((c) => c.commit)).toEqual([head]);
    const failed = events.filter((e) => e.type === "SessionBranchPushFailed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data).toMatchObject({
      branch: branchOf(sessionId),
      commit: head,
      remote,
      errorClass: "remote_unreachable",
      message: expect.stringContaining("does not appear to be a git repository"),
    });
    expect(failed[0]!.metadata.actor).toEqual({ kind: "runner", id: "session-branch" });
    // The build is in the host's clone, on the session's branch.
    expect(gitIn(clone, "rev-parse", `refs/heads/${branchOf(sessionId)}`)).toBe(head);

    // The remote is back: the delivery pushes the branch.
    execFileSync("git", ["init", "-q", "--bare", remote]);
    await deliverSession(deps(), { sessionId }, testActor);
    const delivered = await eventsUntil(sessionId, "the delivery", (e) => deliveryOutcome(e) !== undefined);
    expect(deliveryOutcome(delivered)).toMatchObject({ type: "DeliveryCompleted", data: { pushed: { remote } } });
    expect(refIn(remote, branchOf(sessionId))).toBe(head);
  });
});

describe("the session's branch on the remote moves forward only (pushSessionBranch)", () => {
  it("created, moved forward, the same again; an older commit or a stale sibling never moves it back; a sibling replaces it only while the attempt holds its step", async () => {
    const repo = path.join(root, "lease-repo");
    const base = commitFiles(repo, { "a.txt": "a\n" });
    const commit = (name: string, parent: string) => {
      gitIn(repo, "checkout", "-q", "--detach", parent);
      fs.writeFileSync(path.join(repo, `${name}.txt`), `${name}\n`);
      gitIn(repo, "add", "-A");
      gitIn(repo, "commit", "-q", "-m", name);
      return gitIn(repo, "rev-parse", "HEAD");
    };
    const c1 = commit("c1", base);
    const c2 = commit("c2", c1);
    const sibling = commit("sibling", c1);
    const remote = path.join(root, "lease.git");
    execFileSync("git", ["init", "-q", "--bare", remote]);
    const push = (c: string, held: boolean) =>
      pushSessionBranch({ repoPath: repo, remote: { remote }, branch: "catcafe/s-lease", commit: c, stillHeld: async () => held });

    expect(await push(c1, false)).toBe("pushed");
    expect(refIn(remote, "catcafe/s-lease")).toBe(c1);
    expect(await push(c2, false)).toBe("pushed");
    expect(await push(c2, false)).toBe("already");
    expect(await push(c1, false)).toBe("stale");
    expect(await push(sibling, false)).toBe("stale");
    expect(refIn(remote, "catcafe/s-lease")).toBe(c2);
    expect(await push(sibling, true)).toBe("pushed");
    expect(refIn(remote, "catcafe/s-lease")).toBe(sibling);
  });
});
