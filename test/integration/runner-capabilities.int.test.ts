// Capability-aware claims (docs/scaling.md, "Which runner runs a step"): runners on two
// "hosts" (their own clones, workspaces and CATCAFE_REPOSITORY_PATHS-style mappings) sharing
// one database. One host has no clone of a project at all, the other a clone that lacks a
// project's base commit. Each claims only steps it can run, the one whose clone lacks a commit
// hands the step over (uncharged, never to take it again), a step no live runner can run fails
// naming what is missing where, and a resume after that runs once a capable runner is up.
import { execFileSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { appStepKinds } from "../../server/app-runner";
import { createPool, type Db } from "../../server/db/pool";
import type { RecordedEvent } from "../../server/events/types";
import { webhookTarget } from "../../server/projects/access";
import { listProjectRecords } from "../../server/projects/projects";
import { PROJECTS_CHANNEL, projectsServed } from "../../server/runner/capabilities";
import { releaseOrphanedLease } from "../../server/runner/liveness";
import type { Runner, RunnerOptions } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { startTask } from "../../server/tasks/commands";
import { resumeSession } from "../../server/tasks/resume";
import { createApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { spawnRunnerProcess } from "../helpers/runner-process";
import { createHarness, FIXED_SUM, gitIn, makeSumRepo, reviewApprove, testPlan, type Harness } from "../helpers/tasks";

process.env.CATCAFE_SANDBOX = "off";

let db: TestDatabase;
let h: Harness;
let api: ReturnType<typeof createApiFixture>;
const running: Runner[] = [];
const pools: Db[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  api = createApiFixture(db);
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

const deps = () => ({ store: db.store, pool: db.pool });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A new git project (src/sum.js buggy, its test failing) in a directory of its own; its path. */
function newRepo(): string {
  return makeSumRepo(fs.mkdtempSync(path.join(path.dirname(h.repo), "repo-")));
}

/** A clone as another machine has it: only what the branches reach (--no-local). */
function cloneOf(repo: string, where: string): string {
  const dir = path.join(path.dirname(h.repo), `${where}-${uniqueId()}`);
  execFileSync("git", ["clone", "-q", "--no-local", repo, dir]);
  return dir;
}

const agents = (coder: Array<Record<string, unknown>> = [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }]) => ({
  coder,
  reviewer: [{ reply: reviewApprove }],
  tester: [{ reply: testPlan() }],
});

async function project(repoPath: string, coder?: Array<Record<string, unknown>>): Promise<string> {
  return h.project(uniqueId("p"), agents(coder), { repoPath });
}

interface Host {
  runner: Runner;
  lines: string[];
}

/**
 * A runner as on a machine of its own: host name, workspaces, and the clones its mapping
 * names (a project it does not map is at its registered path, as on the web's machine).
 */
async function startHost(name: string, mapping: Record<string, string>, overrides: Partial<RunnerOptions> = {}): Promise<Host> {
  const pool = createPool(db.url, 8);
  pools.push(pool);
  const store = createAppEventStore(pool);
  const repositoryPath = (repoPath: string) => mapping[repoPath] ?? repoPath;
  const kinds = stepKindRegistry(
    appStepKinds({
      pool,
      store,
      workspacesRoot: path.join(path.dirname(h.repo), `workspaces-${name}-${uniqueId()}`),
      repositoryPath,
      webhook: { webhookFor: (id) => webhookTarget(pool, store, id), publicUrl: "http://catcafe.test", requestTimeoutMs: 1_000 },
    }),
  );
  const lines: string[] = [];
  const runner = await h.startRunner((line) => lines.push(line), {
    id: `${name}-${uniqueId()}`,
    host: `host-${name}`,
    executors: kinds.executors,
    react: kinds.react,
    onReactionError: kinds.onReactionError,
    projectsServed: async () => projectsServed(await listProjectRecords(pool), repositoryPath),
    ...overrides,
  });
  running.push(runner);
  return { runner, lines };
}

const startSession = async (projectId: string) =>
  (await startTask(deps(), { projectId, prompt: `Fix sum() ${uniqueId()}`, mode: "implementation" }, testActor)).sessionId;

type StepEvent = RecordedEvent & { data: Record<string, unknown> };
const stepEvents = async (sessionId: string) =>
  (await db.store.readStream(sessionId)).filter((e) => e.type.startsWith("Step")) as StepEvent[];

describe("capability-aware claims", () => {
  it("two hosts, one without a project's clone and one whose clone lacks another's base commit: every session is approved, no step starts where it cannot run, and the Runners data says why", async () => {
    const repo1 = newRepo();
    const repo2 = newRepo();
    // Host B's clones: project 1 up to date; project 2 cloned before its base commit was made.
    const b1 = cloneOf(repo1, "b1");
    const b2 = cloneOf(repo2, "b2");
    gitIn(repo2, "commit", "-q", "--allow-empty", "-m", "after host B cloned");
    const base2 = gitIn(repo2, "rev-parse", "HEAD");
    // Host A's: project 2 only (project 1 maps to a clone that is not there).
    const a2 = cloneOf(repo2, "a2");
    const missingA1 = path.join(path.dirname(h.repo), "host-a-has-no-clone");
    const p1 = await project(repo1);
    const p2 = await project(repo2);

    // Host B first, alone: it takes project 2's first step, finds the base commit missing and hands it back.
    const hostB = await startHost("b", { [repo1]: b1, [repo2]: b2 });
    const first2 = await startSession(p2);
    const released = async () => (await stepEvents(first2)).find((e) => e.type === "StepReleased");
    for (let i = 0; i < 200 && !(await released()); i++) await sleep(50);
    const release = (await released())!;
    expect(release).toBeDefined();
    expect(release.data.unable).toEqual({
      runnerId: hostB.runner.id,
      host: "host-b",
      missing: expect.stringContaining(`commit ${base2} is not in ${b2}`),
    });
    expect(release.data.reason).toContain(`runner ${hostB.runner.id} on host-b cannot run it`);
    // Not charged, and B does not take it again while it waits.
    await sleep(500);
    const waiting = await db.pool.query("SELECT state, attempt, released, excluded_runners FROM steps WHERE id = $1", [
      release.data.stepId,
    ]);
    expect(waiting.rows[0]).toEqual({ state: "pending", attempt: 1, released: 1, excluded_runners: [hostB.runner.id] });

    const hostA = await startHost("a", { [repo1]: missingA1, [repo2]: a2 });
    expect(hostA.lines.some((l) => l.includes(`project ${p1} is not served by this runner: no clone at ${missingA1}`))).toBe(true);
    const sessions = [first2, ...(await Promise.all([p1, p2, p1, p2, p1].map(startSession)))];
    const projectOf = new Map(sessions.map((s, i) => [s, i === 0 || i % 2 === 0 ? p2 : p1]));

    for (const s of sessions) {
      const done = await h.waitFor(s, "approved", (t) => t.status === "finished", 90_000);
      expect(done.outcome, `session ${s}`).toBe("approved");
    }
    for (const s of sessions) {
      const events = await stepEvents(s);
      const started = events.filter((e) => e.type === "StepStarted");
      expect(started.length).toBeGreaterThan(0);
      if (projectOf.get(s) === p1) {
        // Host A has no clone of project 1: it never starts one of its steps.
        expect(started.filter((e) => e.data.runnerId === hostA.runner.id)).toEqual([]);
      } else {
        // Host B may start a project 2 step once (it has a clone), and hands it back at once.
        for (const start of started.filter((e) => e.data.runnerId === hostB.runner.id)) {
          const next = events.find((e) => e.position > start.position && e.data.stepId === start.data.stepId);
          expect(next?.type).toBe("StepReleased");
          expect((next?.data.unable as { runnerId: string }).runnerId).toBe(hostB.runner.id);
        }
        const byB = started.filter((e) => e.data.runnerId === hostB.runner.id).map((e) => e.data.stepId);
        expect(new Set(byB).size).toBe(byB.length);
        for (const done of events.filter((e) => e.type === "StepCompleted")) {
          const holder = started.filter((e) => e.data.stepId === done.data.stepId && e.data.attempt === done.data.attempt);
          expect(holder.map((e) => e.data.runnerId)).toEqual([hostA.runner.id]);
        }
      }
      // Releases are not charged: no step failed.
      expect(events.filter((e) => e.type === "StepFailed")).toEqual([]);
    }

    // What the dashboard's Runners panel reads (runners.live): A cannot serve project 1, and why; B serves both.
    const operator = api.caller(await api.user("operator"));
    const live = await operator.runners.live();
    const a = live.runners.find((r) => r.id === hostA.runner.id)!;
    const b = live.runners.find((r) => r.id === hostB.runner.id)!;
    expect(a.unservedProjects).toContainEqual({
      projectId: p1,
      repoPath: repo1,
      reason: `no clone at ${missingA1} (CATCAFE_REPOSITORY_PATHS maps ${repo1} to ${missingA1})`,
    });
    expect(a.unservedProjects!.map((u) => u.projectId)).not.toContain(p2);
    expect(b.unservedProjects!.map((u) => u.projectId)).not.toContain(p1);
    expect(b.unservedProjects!.map((u) => u.projectId)).not.toContain(p2);
    // A viewer sees which projects, not the paths.
    const viewer = api.caller(await api.user("viewer"));
    const seen = (await viewer.runners.list()).find((r) => r.id === hostA.runner.id)!;
    expect(seen.unservedProjects).toContainEqual({ projectId: p1, repoPath: null, reason: null });
  }, 180_000);

  it("a step no live runner can run fails naming what is missing where; resumed once a capable runner is up, the session is approved", async () => {
    const repo = newRepo();
    const missing = path.join(path.dirname(h.repo), "nowhere");
    const p = await project(repo);
    const hostA = await startHost("a", { [repo]: missing }, { unrunnableGraceMs: 300 });
    const sessionId = await startSession(p);
    const failedEvent = async () => (await stepEvents(sessionId)).find((e) => e.type === "StepFailed");
    for (let i = 0; i < 200 && !(await failedEvent()); i++) await sleep(50);
    const failed = (await failedEvent())!;
    expect(failed.data).toMatchObject({ unrunnable: true, attempt: 1, retryAt: null });
    expect(failed.data.message).toBe(
      `no live runner can run this step (runner ${hostA.runner.id} on host-a: no clone of ${repo}: ` +
        `no clone at ${missing} (CATCAFE_REPOSITORY_PATHS maps ${repo} to ${missing}))`,
    );
    const ended = await h.waitFor(sessionId, "the failure decided", (t) => t.status === "finished" || t.step === null);
    expect(ended.status === "finished" ? ended.outcome : "waits for a person").not.toBe("approved");
    expect((await stepEvents(sessionId)).filter((e) => e.type === "StepStarted")).toEqual([]);

    // A capable runner comes up; the session is resumed and runs there.
    const hostB = await startHost("b", {});
    const resumed = await resumeSession({ ...deps(), lease: (stepId) => releaseOrphanedLease(db.pool, stepId) }, { sessionId }, testActor);
    expect(resumed.status).toBe("resumed");
    const done = await h.waitFor(sessionId, "approved", (t) => t.status === "finished" && t.outcome === "approved", 60_000);
    expect(done.outcome).toBe("approved");
    const started = (await stepEvents(sessionId)).filter((e) => e.type === "StepStarted");
    expect(new Set(started.map((e) => e.data.runnerId))).toEqual(new Set([hostB.runner.id]));
  }, 120_000);

  it("the only capable runner killed mid-step: the incapable one never takes the step; a capable runner started later takes it over after the lease and the session is approved", async () => {
    const repo = newRepo();
    const missing = path.join(path.dirname(h.repo), "not-here");
    // The first build is slow (the runner is killed in it); its take-over is quick.
    const p = await project(repo, [
      { reply: "Fixing slowly.", files: { "src/sum.js": FIXED_SUM }, chunkDelayMs: 20_000 },
      { reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } },
    ]);
    // (its grace before failing a step no live runner can run is the default minute: the capable runner is on its way)
    const hostA = await startHost("a", { [repo]: missing }, { reclaimBackoffMs: 50 });
    const sessionId = await startSession(p);
    // The capable runner: a process (server/runner/main.ts, its clone at the registered path), killed with -9.
    const capableId = `capable-${uniqueId()}`;
    const child = spawnRunnerProcess({
      databaseUrl: db.url,
      id: capableId,
      stateDir: h.stateDir,
      workspacesRoot: path.join(path.dirname(h.repo), `workspaces-capable-${uniqueId()}`),
      leaseMs: 1_000,
      reclaimBackoffMs: 50,
      env: { CATCAFE_SANDBOX: "off" },
    });
    children.push(child);
    const holder = async () =>
      (
        await db.pool.query<{ lease_owner: string | null }>("SELECT lease_owner FROM steps WHERE session_id = $1 AND state = 'running'", [
          sessionId,
        ])
      ).rows[0]?.lease_owner;
    for (let i = 0; i < 600 && (await holder()) !== capableId; i++) await sleep(50);
    expect(await holder()).toBe(capableId);
    await sleep(300); // mid-step: its agent is replying
    child.kill("SIGKILL");
    // Its lease (1 s) expires; the incapable runner, polling, still never takes the step over.
    await sleep(3_000);
    const events = await stepEvents(sessionId);
    expect(events.filter((e) => e.type === "StepStarted").map((e) => e.data.runnerId)).toEqual([capableId]);
    expect(events.filter((e) => e.type === "StepFailed")).toEqual([]);

    const later = await startHost("b", {}, { reclaimBackoffMs: 50 });
    const done = await h.waitFor(sessionId, "approved", (t) => t.status === "finished", 60_000);
    expect(done.outcome).toBe("approved");
    const started = (await stepEvents(sessionId)).filter((e) => e.type === "StepStarted");
    expect(started[1]).toMatchObject({ data: { runnerId: later.runner.id, reclaimed: true, attempt: 2 } });
    expect(started.filter((e) => e.data.runnerId === hostA.runner.id)).toEqual([]);
  }, 120_000);
});

describe("registration: the projects a runner serves", () => {
  it("a project whose mapped clone is missing, or is not a git repository, is not served, with the reason; the others are", async () => {
    const repo = newRepo();
    const notGit = fs.mkdtempSync(path.join(path.dirname(h.repo), "plain-"));
    const mapping: Record<string, string> = { "/srv/elsewhere": "/nonexistent/clone", "/srv/plain": notGit };
    const served = await projectsServed(
      [
        { id: "here", repoPath: repo },
        { id: "unmapped-missing", repoPath: "/srv/not-on-this-host" },
        { id: "mapped-missing", repoPath: "/srv/elsewhere" },
        { id: "not-git", repoPath: "/srv/plain" },
      ],
      (p) => mapping[p] ?? p,
    );
    expect(served).toEqual({
      served: [repo],
      unserved: [
        { projectId: "unmapped-missing", repoPath: "/srv/not-on-this-host", reason: "no clone at /srv/not-on-this-host" },
        {
          projectId: "mapped-missing",
          repoPath: "/srv/elsewhere",
          reason: "no clone at /nonexistent/clone (CATCAFE_REPOSITORY_PATHS maps /srv/elsewhere to /nonexistent/clone)",
        },
        {
          projectId: "not-git",
          repoPath: "/srv/plain",
          reason: `${notGit} is not the top of a git repository (CATCAFE_REPOSITORY_PATHS maps /srv/plain to ${notGit})`,
        },
      ],
    });
  });

  it("a project registered while the runner runs is served at once: its first step starts without waiting for the periodic check", async () => {
    // The periodic check far away: only the projects table's doorbell can tell the runner.
    const { runner } = await startHost("bell", {}, { capabilityRefreshMs: 600_000 });
    const served = async () =>
      (await db.pool.query<{ served_repos: string[] }>("SELECT served_repos FROM runners WHERE id = $1", [runner.id])).rows[0]!
        .served_repos;
    const repo = newRepo();
    expect(await served()).not.toContain(repo);
    const sessionId = await startSession(await project(repo));
    let started: StepEvent | undefined;
    for (let i = 0; i < 100 && !started; i++) {
      started = (await stepEvents(sessionId)).find((e) => e.type === "StepStarted");
      if (!started) await sleep(50);
    }
    expect(started, "the first step was not claimed within 5 s").toBeDefined();
    expect(started!.data.runnerId).toBe(runner.id);
    expect(await served()).toContain(repo);
    await h.waitFor(sessionId, "approved", (s) => s.outcome === "approved", 30_000);
  });

  it("the projects' doorbell rings when a project is added, moved or removed, not when only its settings change", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    let rings = 0;
    listener.on("notification", (n) => n.channel === PROJECTS_CHANNEL && rings++);
    await listener.query(`LISTEN ${PROJECTS_CHANNEL}`);
    const settle = async () => {
      await sleep(200);
      const n = rings;
      rings = 0;
      return n;
    };
    try {
      const repo = newRepo();
      const id = await project(repo);
      expect(await settle(), "added").toBe(1);
      await h.project(id, agents([{ reply: "Other." }]), { repoPath: repo });
      expect(await settle(), "settings only").toBe(0);
      await h.project(id, agents(), { repoPath: newRepo() });
      expect(await settle(), "moved").toBe(1);
      await db.pool.query("DELETE FROM projects WHERE id = $1", [id]);
      expect(await settle(), "removed").toBe(1);
    } finally {
      await listener.end();
    }
  });

  it("a project registered while the runner runs is checked at the next refresh, and the runner's row and claims follow", async () => {
    const { runner } = await startHost("r", {}, { capabilityRefreshMs: 200 });
    const row = async () =>
      (
        await db.pool.query<{ served_repos: string[]; unserved_repos: Array<{ projectId: string }>; labels: string[] }>(
          "SELECT served_repos, unserved_repos, labels FROM runners WHERE id = $1",
          [runner.id],
        )
      ).rows[0]!;
    const id = uniqueId("late");
    await h.project(id, agents(), { repoPath: "/srv/registered-later" });
    for (let i = 0; i < 100 && !(await row()).unserved_repos.some((u) => u.projectId === id); i++) await sleep(50);
    expect((await row()).unserved_repos).toContainEqual({
      projectId: id,
      repoPath: "/srv/registered-later",
      reason: "no clone at /srv/registered-later",
    });
    expect((await row()).served_repos).not.toContain("/srv/registered-later");
  });
});
