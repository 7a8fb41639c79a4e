// Every runner host cleans up its own worktrees (docs/operations.md, "Worktrees on every host";
// docs/scaling.md), through real runners on a real database and git: two "hosts" (their own
// workspace directories and clones, their own host names) run one session's steps — host A
// builds, is stopped, host B goes on. Each host's pass removes A's worktree at once (B ran the
// latest step), B's only once the session has ended longer ago than `workspaces.keepFinishedDays`
// (time driven by the setting and the session's end, not by sleeping), then the pins and local
// branch of each clone — but never an approved session's branch in the registered repository.
// A cleaned-up (pruned) session loses worktree, pins and branch on both. Each removal is an event
// with host and path; a second pass does nothing; replay and a fork still work; `session show`'s
// procedure names the host and path of each live worktree. Dead runners' rows are aged out.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appStepKinds } from "../../server/app-runner";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import type { RecordedEvent } from "../../server/events/types";
import { configureProject } from "../../server/projects/config-edits";
import { collectHostWorkspaces, type HostGcDeps } from "../../server/pruning/host-gc";
import { pruneSession, pruneStatusOf } from "../../server/pruning/service";
import { liveWorktrees } from "../../server/pruning/worktrees";
import type { StepExecutor } from "../../server/runner/executors";
import { DEAD_RUNNERS_KEPT_MS, forgetDeadRunners, listRunners } from "../../server/runner/liveness";
import type { Runner } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { replayAt } from "../../server/sessions/replay";
import { startTask } from "../../server/tasks/commands";
import { forkSession } from "../../server/tasks/fork";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, testPlan, type Harness, type TaskView } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let api: ApiFixture;
const pools: Array<{ end(): Promise<void> }> = [];
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  api = createApiFixture(db);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

const DAY_MS = 24 * 60 * 60 * 1000;
const deps = () => ({ store: db.store, pool: db.pool });
const finished = (s: TaskView) => s.status === "finished";
const refsOf = (repo: string) => gitIn(repo, "for-each-ref", "--format=%(refname)").split("\n");
const hasRef = (repo: string, ref: string) => refsOf(repo).includes(ref);

interface Host {
  name: string;
  workspaces: string;
  /** This host's clone of the registered repository (the registered one itself on host A). */
  clone: string;
}

/** A host's pass: its name, its workspaces, its clone in place of the registered repository (CATCAFE_REPOSITORY_PATHS). */
const gcOf = (host: Host): HostGcDeps => ({
  ...deps(),
  host: host.name,
  workspacesRoot: host.workspaces,
  repositoryPath: (p) => (p === h.repo ? host.clone : p),
});

/**
 * A runner on host `name`, with its workspaces and clone; `buildsOnly`: it runs the build of a
 * task and holds on to every other agent step until it is stopped (so the next host takes it).
 */
async function startHost(host: Host, options: { buildsOnly?: boolean } = {}): Promise<Runner> {
  const pool = createPool(db.url, 6);
  pools.push(pool);
  const store = createAppEventStore(pool);
  const kinds = stepKindRegistry(
    appStepKinds({
      pool,
      store,
      workspacesRoot: host.workspaces,
      host: host.name,
      repositoryPath: () => host.clone,
      webhook: { webhookFor: async () => null, publicUrl: "http://catcafe.test" },
    }),
  );
  const agent = kinds.executors.agent!;
  const onlyBuilds: StepExecutor = async (step, ctx) => {
    if ((step.input as { phase?: string }).phase === "build") return agent(step, ctx);
    await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
  };
  const executors = options.buildsOnly ? { agent: onlyBuilds } : kinds.executors;
  return h.startRunner(undefined, {
    host: host.name,
    executors,
    react: kinds.react,
    onReactionError: kinds.onReactionError,
    shutdownGraceMs: 50,
    // One step at a time: two sessions' first steps on a host both fetch bundles into its one
    // clone, and two concurrent fetches there can collide on its refs (not what this test is about).
    ...(options.buildsOnly ? {} : { concurrency: 1 }),
  });
}

/** The removals a session's stream records, host by host. */
const removals = (events: readonly RecordedEvent[]) =>
  ofType<{ host: string; path: string; removed: boolean; reason: string; refsDeleted: string[] }>(events, "WorktreeRemoved");

describe("each host cleans up its own worktrees", () => {
  it("two hosts run one session: A's worktree goes at once, B's once the session ended long enough ago; pins and branches of each clone go (an approved session's registered branch stays); a pruned session's go on both; recorded once per host; replay and a fork still work", async () => {
    const root = path.dirname(h.repo);
    const cloneB = path.join(root, "gc-clone-b");
    // --no-local: objects reachable from the branches only, as a clone on another machine has.
    execFileSync("git", ["clone", "-q", "--no-local", h.repo, cloneB]);
    const a: Host = { name: "host-a", workspaces: path.join(root, "gc-workspaces-a"), clone: h.repo };
    const b: Host = { name: "host-b", workspaces: path.join(root, "gc-workspaces-b"), clone: cloneB };
    const approvedSum = FIXED_SUM.replace("a + b", "b + a");
    await h.project("gc-approved", {
      coder: [{ reply: "Fixed.", files: { "src/sum.js": approvedSum } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    await h.project("gc-failed", {
      coder: [{ reply: "Changed.", files: { "src/sum.js": FIXED_SUM.replace("a + b", "(b) + (a)") } }],
      reviewer: [{ fault: "auth" }],
      tester: [{ reply: testPlan() }],
    });

    // Host A builds both sessions; then it stops and host B goes on with each.
    const runnerA = await startHost(a, { buildsOnly: true });
    const approved = (await startTask(deps(), { projectId: "gc-approved", prompt: "Fix sum()", mode: "implementation" }, testActor))
      .sessionId;
    const failed = (await startTask(deps(), { projectId: "gc-failed", prompt: "Fix sum()", mode: "implementation" }, testActor)).sessionId;
    await h.waitFor(approved, "the review step", (s) => s.fsm === "reviewing", 60_000);
    await h.waitFor(failed, "the review step", (s) => s.fsm === "reviewing", 60_000);
    await startHost(b);
    await runnerA.stop();
    expect((await h.waitFor(approved, "approved", finished, 60_000)).outcome).toBe("approved");
    expect((await h.waitFor(failed, "failed", finished, 60_000)).outcome).toBe("failed");

    const dir = (host: Host, sessionId: string) => path.join(fs.realpathSync(host.workspaces), sessionId);
    const before = await db.store.readStream(approved);
    const commit = ofType<{ commit: string; empty: boolean }>(before, "WorkspaceCommitted").find((c) => !c.empty)!.commit;
    const endedAt = Date.parse(before.findLast((e) => e.type === "SessionFinalized")!.recordedAt);
    const pin = `refs/catcafe/pins/${commit}`;
    const branch = `refs/heads/catcafe/${approved}`;
    // Where each worktree lives: recorded by the runner that made it, listed by `session show`'s procedure.
    expect(ofType<{ host: string; path: string }>(before, "WorktreePlaced").map((p) => [p.host, p.path])).toEqual([
      ["host-a", dir(a, approved)],
      ["host-b", dir(b, approved)],
    ]);
    const operator = await api.user("operator");
    const shown = await api.caller(operator).tasks.runtimeContext({ sessionId: approved });
    expect(shown?.worktrees.map((w) => `${w.host}:${w.path}`)).toEqual([`host-a:${dir(a, approved)}`, `host-b:${dir(b, approved)}`]);
    expect(hasRef(h.repo, pin) && hasRef(cloneB, pin) && hasRef(h.repo, branch)).toBe(true);
    const replays = await Promise.all(before.map((e) => replayAt(deps(), { sessionId: approved, version: e.version })));

    // A day after it ended: host A's worktree goes (B ran the latest step); B keeps its own (7 days by default).
    const dayAfter = new Date(endedAt + DAY_MS);
    const passA = await collectHostWorkspaces(gcOf(a), { now: dayAfter });
    expect(passA.failed).toEqual([]);
    expect(passA.removed).toContainEqual({
      sessionId: approved,
      path: dir(a, approved),
      removed: true,
      reason: "not_last_host",
      refsDeleted: [],
    });
    expect(fs.existsSync(dir(a, approved))).toBe(false);
    expect(gitIn(h.repo, "worktree", "list", "--porcelain")).not.toContain(dir(a, approved));
    // Its pins stay in host A's clone until the session goes for good; the host notes that, for its later passes.
    expect(hasRef(h.repo, pin)).toBe(true);
    expect(fs.existsSync(path.join(fs.realpathSync(a.workspaces), "+refs-pending", approved))).toBe(true);
    const passB = await collectHostWorkspaces(gcOf(b), { now: dayAfter });
    expect(passB.removed.filter((r) => r.sessionId === approved)).toEqual([]);
    expect(fs.existsSync(dir(b, approved))).toBe(true);
    expect((await api.caller(operator).tasks.runtimeContext({ sessionId: approved }))?.worktrees).toEqual([
      expect.objectContaining({ host: "host-b", path: dir(b, approved) }),
    ]);

    // The setting says two days: three days after it ended, B's goes too, with the pins and local branch of each clone.
    await configureProject(deps(), { projectId: "gc-approved", keepFinishedDays: 2 }, { kind: "user", id: "admin" });
    const later = new Date(endedAt + 3 * DAY_MS);
    const laterB = await collectHostWorkspaces(gcOf(b), { now: later });
    expect(laterB.removed.find((r) => r.sessionId === approved)).toMatchObject({
      path: dir(b, approved),
      removed: true,
      reason: "finished",
    });
    expect(fs.existsSync(dir(b, approved))).toBe(false);
    expect(hasRef(cloneB, pin)).toBe(false);
    expect(refsOf(cloneB).filter((r) => r.includes(approved))).toEqual([]);
    const laterA = await collectHostWorkspaces(gcOf(a), { now: later });
    expect(laterA.removed.find((r) => r.sessionId === approved)).toEqual({
      sessionId: approved,
      path: dir(a, approved),
      removed: false,
      reason: "finished",
      refsDeleted: [pin],
    });
    expect(hasRef(h.repo, pin)).toBe(false);
    // Approved: its branch in the registered repository may be what is delivered; it stays.
    expect(gitIn(h.repo, "rev-parse", branch)).toBe(commit);

    // The failed session, cleaned up: the prune step ran on host B; each host's pass removes what it holds.
    await pruneSession(deps(), { sessionId: failed }, testActor);
    for (let i = 0; pruneStatusOf(failed, await db.store.readStream(failed)).status !== "pruned"; i++) {
      if (i > 600) throw new Error("the clean-up did not finish");
      await new Promise((r) => setTimeout(r, 50));
    }
    const failedCommit = ofType<{ commit: string; empty: boolean }>(await db.store.readStream(failed), "WorkspaceCommitted").find(
      (c) => !c.empty,
    )!.commit;
    // Host A's worktree of it went in the first pass (not the last host); its pins and branch go now.
    expect(passA.removed.find((r) => r.sessionId === failed)).toMatchObject({ path: dir(a, failed), reason: "not_last_host" });
    const prunedA = await collectHostWorkspaces(gcOf(a), { now: dayAfter });
    const prunedOnA = prunedA.removed.find((r) => r.sessionId === failed);
    expect(prunedOnA).toMatchObject({ path: dir(a, failed), removed: false, reason: "pruned" });
    expect(prunedOnA?.refsDeleted.sort()).toEqual([`refs/catcafe/pins/${failedCommit}`, `refs/heads/catcafe/${failed}`]);
    // Host B's worktree went with the prune step, which ran there: its record names the host.
    expect(ofType<{ host?: string; worktree: string | null }>(await db.store.readStream(failed), "SessionPruned")).toEqual([
      expect.objectContaining({ host: "host-b", worktree: dir(b, failed) }),
    ]);
    expect((await collectHostWorkspaces(gcOf(b), { now: dayAfter })).removed).toEqual([]);
    for (const repo of [h.repo, cloneB]) {
      expect(hasRef(repo, `refs/catcafe/pins/${failedCommit}`)).toBe(false);
      expect(refsOf(repo).filter((r) => r.includes(failed))).toEqual([]);
    }
    expect(fs.existsSync(dir(b, failed))).toBe(false);

    // Each removal recorded once per host, with host and path; nothing live is listed any more.
    const after = await db.store.readStream(approved);
    expect(removals(after).map((r) => [r.host, r.path, r.reason])).toEqual([
      ["host-a", dir(a, approved), "not_last_host"],
      ["host-b", dir(b, approved), "finished"],
      ["host-a", dir(a, approved), "finished"],
    ]);
    expect(liveWorktrees(approved, after)).toEqual([]);
    expect(removals(await db.store.readStream(failed)).map((r) => [r.host, r.reason])).toEqual([
      ["host-a", "not_last_host"],
      ["host-a", "pruned"],
    ]);
    expect(liveWorktrees(failed, await db.store.readStream(failed))).toEqual([]);
    // Host A noted the sessions whose pins stayed after their worktree went; gone once it removed them.
    expect(fs.readdirSync(path.join(fs.realpathSync(a.workspaces), "+refs-pending"))).toEqual([]);
    // A second pass on each host does nothing more.
    const counts = [(await db.store.readStream(approved)).length, (await db.store.readStream(failed)).length];
    for (const host of [a, b])
      expect(await collectHostWorkspaces(gcOf(host), { now: later })).toEqual({ locked: false, removed: [], failed: [] });
    expect([(await db.store.readStream(approved)).length, (await db.store.readStream(failed)).length]).toEqual(counts);

    // Replay reads events and blobs: every position shows what it showed before.
    for (const [i, e] of before.entries()) {
      expect((await replayAt(deps(), { sessionId: approved, version: e.version })).state).toEqual(replays[i]!.state);
    }
    // A fork after the build starts on host B at the approved commit (its clone lost the pin; the bundle has it).
    spawnSync("git", ["gc", "--prune=now", "--quiet"], { cwd: cloneB });
    const committed = before.find((e) => e.type === "WorkspaceCommitted" && (e.data as { commit: string }).commit === commit)!;
    const reviewing = before.find((e) => e.version > committed.version && e.type === "SessionStateChanged")!;
    const fork = await forkSession(deps(), { sessionId: approved, atVersion: reviewing.version }, testActor);
    await h.waitFor(fork.sessionId, "the fork ends", finished, 60_000);
    expect(gitIn(dir(b, fork.sessionId), "rev-parse", "HEAD")).toBe(commit);
    expect(fs.readFileSync(path.join(dir(b, fork.sessionId), "src/sum.js"), "utf8")).toBe(approvedSum);
    expect(liveWorktrees(fork.sessionId, await db.store.readStream(fork.sessionId))).toEqual([
      expect.objectContaining({ host: "host-b", path: dir(b, fork.sessionId) }),
    ]);
  }, 240_000);

  it("one pass per host at a time: while a pass holds one host's lock, that host's next pass skips and another host's runs", async () => {
    const hostDeps = (host: string): HostGcDeps => ({
      ...deps(),
      host,
      workspacesRoot: path.join(path.dirname(h.repo), `gc-lock-${host}`),
    });
    const key = (d: HostGcDeps) => `catcafe-workspace-gc:${d.host}:${path.resolve(d.workspacesRoot)}`;
    const [one, two] = [hostDeps("lock-one"), hostDeps("lock-two")];
    const other = await db.pool.connect();
    try {
      await other.query("SELECT pg_advisory_lock(hashtextextended($1, 7))", [key(one)]);
      expect(await collectHostWorkspaces(one)).toEqual({ locked: true, removed: [], failed: [] });
      expect((await collectHostWorkspaces(two)).locked).toBe(false);
      await other.query("SELECT pg_advisory_unlock(hashtextextended($1, 7))", [key(one)]);
      expect((await collectHostWorkspaces(one)).locked).toBe(false);
    } finally {
      other.release();
    }
  });

  it("dead runners' rows are aged out; live ones, recently dead ones and one still holding a lease stay", async () => {
    const insert = (id: string, heartbeatDaysAgo: number, stoppedDaysAgo: number | null) =>
      db.pool.query(
        `INSERT INTO runners (id, host, pid, version, started_at, heartbeat_at, stopped_at)
         VALUES ($1, 'old-host', 1, '0.0.0', now() - interval '30 days', now() - make_interval(days => $2),
                 CASE WHEN $3::int IS NULL THEN NULL ELSE now() - make_interval(days => $3::int) END)`,
        [id, heartbeatDaysAgo, stoppedDaysAgo],
      );
    await insert("gone-stopped", 10, 10);
    await insert("gone-silent", 9, null);
    await insert("recently-stopped", 1, 1);
    await insert("silent-holding", 10, null);
    await db.pool.query(
      `INSERT INTO steps (id, session_id, kind, input, state, attempt, max_attempts, timeout_ms, available_at, lease_owner, lease_expires_at, scheduled_at)
       VALUES (gen_random_uuid(), 's-gc-lease', 'echo', '{}', 'running', 1, 1, 1000, now(), 'silent-holding', now(), now())`,
    );
    const live = await startHost({ name: "host-live", workspaces: path.join(path.dirname(h.repo), "gc-live"), clone: h.repo });

    expect(await forgetDeadRunners(db.pool, DEAD_RUNNERS_KEPT_MS)).toEqual(["gone-silent", "gone-stopped"]);
    const ids = (await db.pool.query<{ id: string }>("SELECT id FROM runners")).rows.map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining(["recently-stopped", "silent-holding", live.id]));
    expect(ids).not.toContain("gone-stopped");
    expect((await listRunners(db.pool, { liveOnly: true })).runners.map((r) => r.id)).toContain(live.id);
    // Again: nothing more.
    expect(await forgetDeadRunners(db.pool, DEAD_RUNNERS_KEPT_MS)).toEqual([]);
  });
});
