// The runner under faults (issue: runners under faults), each case deterministic: a runner
// killed with SIGKILL while a test command runs, a runner cut off from the database for
// longer than its lease, the database away while results are recorded, a reaction that
// fails, progress from an attempt that no longer holds its step, and a rebuild while a
// long step runs. Each asserts on outcomes: session states, events, processes.
import { execFileSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { rebuildProjections, snapshotProjections } from "../../server/events/rebuild";
import { appendWhileHeld, claimNextStep, failExhaustedSteps, recordStepOutcome, scheduleStep } from "../../server/runner/dispatch";
import { builtinExecutors } from "../../server/runner/echo";
import type { StepExecutor } from "../../server/runner/executors";
import { Runner } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { workflowStepKinds, type WorkflowStepKindDeps } from "../../server/runner/workflow-executors";
import { reactToReactionFailure, reactToStepOutcome } from "../../server/task-engine";
import { startTask } from "../../server/tasks/commands";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { isAlive, waitUntil } from "../helpers/processes";
import { spawnRunnerProcess } from "../helpers/runner-process";
import { createHarness, FIXED_SUM, reviewApprove, testPlan, type Harness, ofType } from "../helpers/tasks";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";

// The ledger cases watch the test processes from outside by pid, which needs them outside a
// PID namespace: these runners run test commands unsandboxed, as on a host without
// bubblewrap (agents always are, for now). Inside the sandbox a runner's death ends its
// commands by itself (bwrap --die-with-parent); sandbox.e2e.test.ts covers the sandbox.
process.env.CATCAFE_SANDBOX = "off";

let db: TestDatabase;
let h: Harness;
const children: ChildProcess[] = [];
const extraRunners: Runner[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
});
// Each test's runners stop with it: a runner left running would claim the next test's steps.
afterEach(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const p of proxies) p.restore();
  await Promise.all(extraRunners.splice(0).map((r) => r.stop()));
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
});

const deps = () => ({ store: db.store, pool: db.pool });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function newSession(): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "faults", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

const stepRow = async (stepId: string) =>
  (
    await db.pool.query<{ state: string; attempt: number; lost: number; lease_expires_at: Date | null }>(
      "SELECT state, attempt, lost, lease_expires_at FROM steps WHERE id = $1",
      [stepId],
    )
  ).rows[0]!;

/** A runner process on this database, with the harness's workspaces and ledgers (killed by afterEach if still running). */
function spawnRunner(id: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawnRunnerProcess({
    databaseUrl: db.url,
    id,
    stateDir: h.stateDir,
    workspacesRoot: h.workspacesRoot,
    reclaimBackoffMs: 100,
    env: { CATCAFE_SANDBOX: "off", ...env },
  });
  children.push(child);
  return child;
}

const reactor = { reactToStepOutcome, reactToReactionFailure };

/** The workflow's executors by kind, as a runner's registry holds them. */
const workflowExecutors = (deps: Omit<WorkflowStepKindDeps, "reactor">) =>
  stepKindRegistry(workflowStepKinds({ ...deps, reactor })).executors;

describe("runners under faults", () => {
  it("kill -9 of a runner while its test command runs: the next runner ends the orphaned test process, re-runs the one-attempt step, and the session is approved", async () => {
    const root = path.dirname(h.repo);
    const pids = path.join(root, "slow-test.pids");
    const firstRun = path.join(root, "slow-test.first");
    // The coder adds a test that hangs on its first run only (and says which pid it runs as).
    const slowTest = `const fs = require("node:fs");
fs.appendFileSync(${JSON.stringify(pids)}, process.pid + "\\n");
if (!fs.existsSync(${JSON.stringify(firstRun)})) { fs.writeFileSync(${JSON.stringify(firstRun)}, ""); setTimeout(() => {}, 120000); }
require("node:test")("slow once", () => {});
`;
    const projectId = await h.project("killed-tests", {
      coder: [{ reply: "Fixed, with a slow test.", files: { "src/sum.js": FIXED_SUM, "test/slow.test.js": slowTest } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const doomed = spawnRunner("doomed");
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    await waitUntil(() => fs.existsSync(pids), 30_000, "the slow test started");
    const orphans = fs.readFileSync(pids, "utf8").trim().split("\n").map(Number);
    expect(fs.readdirSync(h.stateDir)).toContain("doomed.json");
    doomed.kill("SIGKILL");
    await new Promise((r) => doomed.once("exit", r));
    // SIGKILL skipped every exit hook: the test process (a node --test child) still runs.
    expect(orphans.some(isAlive)).toBe(true);

    const next = await h.startRunner(undefined, { reclaimBackoffMs: 100 });
    extraRunners.push(next);
    expect(orphans.filter(isAlive)).toEqual([]);
    expect(fs.readdirSync(h.stateDir)).not.toContain("doomed.json");

    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished", 30_000);
    expect(done.outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    const commandsStep = ofType<{ stepId: string; kind: string }>(events, "StepScheduled").find((s) => s.kind === "commands")!;
    const starts = ofType<{ stepId: string; attempt: number; runnerId: string; reclaimed?: boolean }>(events, "StepStarted").filter(
      (s) => s.stepId === commandsStep.stepId,
    );
    // `reclaimed` is recorded only when true.
    expect(starts.map((s) => [s.attempt, s.runnerId === "doomed", s.reclaimed])).toEqual([
      [1, true, undefined],
      [2, false, true],
    ]);
    expect(ofType(events, "StepFailed")).toEqual([]);
    expect(ofType<{ passed: boolean }>(events, "TestCommandRecorded").map((t) => t.passed)).toEqual([true]);
  });

  it("a runner cut off from the database stops its attempt before the lease expires; the runner that takes over never runs beside it", async () => {
    const proxy = await startTcpProxy(Number(new URL(db.url).port));
    proxies.push(proxy);
    const timeline: Array<[string, number]> = [];
    const sleepy: StepExecutor = (step, ctx) =>
      new Promise((resolve, reject) => {
        timeline.push([`start ${step.attempt}`, Date.now()]);
        const timer = setTimeout(() => resolve({ slept: step.attempt }), step.attempt === 1 ? 60_000 : 10);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          timeline.push([`stop ${step.attempt}`, Date.now()]);
          reject(ctx.signal.reason);
        });
      });
    const leaseMs = 1_500;
    const cutUrl = proxy.url(db.url);
    const cutPool = createPool(cutUrl, 4);
    const cutOff = new Runner(createAppEventStore(cutPool), cutPool, cutUrl, {
      id: "cut-off",
      executors: { sleepy },
      leaseMs,
      stateDir: h.stateDir,
    });
    extraRunners.push(cutOff);
    await cutOff.start();
    const session = await newSession();
    const stepId = await scheduleStep(db.store, { sessionId: session, kind: "sleepy", input: {} }, { actor: testActor });
    await waitUntil(() => timeline.length === 1, 10_000, "attempt 1 started");
    proxy.cut();
    const cutAt = Date.now();

    const rescuer = await h.startRunner(undefined, { executors: { sleepy }, leaseMs, reclaimBackoffMs: 50 });
    extraRunners.push(rescuer);
    await until(async () => (await stepRow(stepId)).state === "completed", 20_000, "attempt 2 completed");
    const at = Object.fromEntries(timeline);
    expect(Object.keys(at)).toEqual(["start 1", "stop 1", "start 2"]);
    // Attempt 1 stopped itself while its lease could still have been valid, before attempt 2 began.
    expect(at["stop 1"]! - cutAt).toBeLessThan(leaseMs);
    expect(at["stop 1"]!).toBeLessThan(at["start 2"]!);
    proxy.restore();
    const events = await db.store.readStream(session);
    expect(ofType<{ attempt: number }>(events, "StepCompleted").map((e) => e.attempt)).toEqual([2]);
  });

  it("the database away for seconds: a finished step's result is recorded once it is back, the runner survives, and its LISTEN connection is re-opened", async () => {
    const proxy = await startTcpProxy(Number(new URL(db.url).port));
    proxies.push(proxy);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const gated: StepExecutor = async (step) => {
      if ((step.input as { wait?: boolean }).wait) await gate;
      return { done: true };
    };
    const url = proxy.url(db.url);
    const pool = createPool(url, 4);
    // A 60 s poll: new work after the outage can only arrive through LISTEN/NOTIFY.
    const runner = new Runner(createAppEventStore(pool), pool, url, {
      id: "through-outage",
      executors: { gated, ...builtinExecutors },
      leaseMs: 20_000,
      pollMs: 60_000,
      stateDir: h.stateDir,
    });
    extraRunners.push(runner);
    await runner.start();
    await runner.listeningOnce();
    const session = await newSession();
    const first = await scheduleStep(db.store, { sessionId: session, kind: "gated", input: { wait: true } }, { actor: testActor });
    await until(async () => (await stepRow(first)).state === "running", 10_000, "first step running");

    proxy.cut();
    release(); // the step finishes while the database is unreachable
    await sleep(3_000);
    expect((await stepRow(first)).state).toBe("running");
    proxy.restore();
    await until(async () => (await stepRow(first)).state === "completed", 20_000, "the result recorded after the outage");
    await runner.listeningOnce();
    const second = await scheduleStep(db.store, { sessionId: session, kind: "gated", input: {} }, { actor: testActor });
    await until(async () => (await stepRow(second)).state === "completed", 5_000, "new work woken by NOTIFY");
    const listeners = await db.pool.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'catcafe-runner-listen' AND datname = current_database()",
    );
    expect(listeners.rows[0].n).toBeGreaterThanOrEqual(1);
    const events = await db.store.readStream(session);
    expect(ofType<{ stepId: string }>(events, "StepCompleted").map((e) => e.stepId)).toEqual([first, second]);
  });

  it("a reaction that fails (a defect) records the outcome and ends the session failed, with the reason, instead of leaving it waiting", async () => {
    const projectId = await h.project("reaction-bug", {
      coder: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const broken = await h.startRunner(undefined, {
      react: async () => {
        throw new Error("the decider exploded");
      },
    });
    extraRunners.push(broken);
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const done = await h.waitFor(sessionId, "failed", (s) => s.status === "finished", 20_000);
    expect(done.outcome).toBe("failed");
    const events = await db.store.readStream(sessionId);
    expect(ofType(events, "StepCompleted")).toHaveLength(1);
    expect(ofType<{ errorClass: string; diagnosis: string }>(events, "SessionFinalized")[0]).toMatchObject({
      errorClass: "internal_error",
      diagnosis: expect.stringContaining("the decider exploded"),
    });
  });

  it("progress of an attempt that no longer holds its step (streamed output, rate-limit waits) is refused; nothing lands after the step ended", async () => {
    const session = await newSession();
    const stepId = await scheduleStep(db.store, { sessionId: session, kind: "echo", input: {} }, { actor: testActor });
    const claimed = (await claimNextStep(db.store, { runnerId: "r1", leaseMs: 60_000, reclaimBackoffMs: 10 }))!;
    const chunk = (seq: number) => [
      { type: "AgentOutputStreamed", data: { stepId, attempt: 1, role: "coder", seq, text: `chunk ${seq}` } },
    ];
    const step = { id: stepId, attempt: claimed.attempt, sessionId: session };
    expect(await appendWhileHeld(db.store, step, chunk(0), { actor: testActor })).toBe(true);
    await recordStepOutcome(db.store, step, { kind: "completed", output: { ok: true } }, testActor);
    expect(await appendWhileHeld(db.store, step, chunk(1), { actor: testActor })).toBe(false);
    expect(await appendWhileHeld(db.store, { ...step, attempt: 7 }, chunk(2), { actor: testActor })).toBe(false);
    const events = await db.store.readStream(session);
    expect(ofType<{ seq: number }>(events, "AgentOutputStreamed").map((e) => e.seq)).toEqual([0]);
    expect(events.at(-1)!.type).toBe("StepCompleted");
  });

  it("a rebuild while a long step runs keeps its heartbeat-extended lease: the step is not taken over, and the tables equal the live ones", async () => {
    const session = await newSession();
    const stepId = await scheduleStep(db.store, { sessionId: session, kind: "echo", input: {} }, { actor: testActor });
    const claimed = (await claimNextStep(db.store, { runnerId: "long", leaseMs: 1_000, reclaimBackoffMs: 10 }))!;
    // Heartbeats moved the lease far beyond the claim-time value in the event.
    await db.pool.query("UPDATE steps SET lease_expires_at = now() + interval '10 minutes' WHERE id = $1", [stepId]);
    const before = await snapshotProjections(db.pool, db.store);
    await sleep(1_100); // the claim-time lease has passed
    await rebuildProjections(db.store);
    expect(await snapshotProjections(db.pool, db.store)).toEqual(before);
    expect((await stepRow(stepId)).lease_expires_at!.getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    expect(await claimNextStep(db.store, { runnerId: "thief", leaseMs: 1_000, reclaimBackoffMs: 10 })).toBeNull();
    expect(await recordStepOutcome(db.store, claimed, { kind: "completed", output: {} }, testActor)).toBe(true);
  });
  it("runners on two machines (separate clones, separate workspace directories): the commit built on one reaches the other through the session's bundle, and the session is approved", async () => {
    const root = path.dirname(h.repo);
    const cloneB = path.join(root, "clone-b");
    // --no-local: objects reachable from the branches only, as a clone on another machine has.
    execFileSync("git", ["clone", "-q", "--no-local", h.repo, cloneB]);
    const projectId = await h.project("two-machines", {
      coder: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    // Machine A builds, and holds on to whatever comes next until it is stopped.
    const poolA = createPool(db.url, 4);
    const execA = workflowExecutors({ pool: poolA, store: createAppEventStore(poolA), workspacesRoot: h.workspacesRoot });
    const onlyBuilds: StepExecutor = async (step, ctx) => {
      if ((step.input as { phase?: string }).phase === "build") return execA.agent!(step, ctx);
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    };
    const machineA = await h.startRunner(undefined, { executors: { agent: onlyBuilds }, shutdownGraceMs: 50 });
    extraRunners.push(machineA);
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "the review step", (s) => s.fsm === "reviewing");

    const workspacesB = path.join(root, "workspaces-b");
    const poolB = createPool(db.url, 4);
    const machineB = await h.startRunner(undefined, {
      executors: {
        ...workflowExecutors({ pool: poolB, store: createAppEventStore(poolB), workspacesRoot: workspacesB, repositoryPath: () => cloneB }),
      },
    });
    extraRunners.push(machineB);
    await machineA.stop(); // its review step goes back to the queue; machine B takes it

    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished", 30_000);
    expect(done.outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    const commit = ofType<{ commit: string; bundle?: { blob: string } }>(events, "WorkspaceCommitted")[0]!;
    expect(commit.bundle?.blob).toMatch(/^[0-9a-f]{64}$/);
    // Machine B's clone now has the commit, and its own workspace ran the tests on the fix.
    expect(execFileSync("git", ["-C", cloneB, "cat-file", "-t", commit.commit], { encoding: "utf8" }).trim()).toBe("commit");
    expect(fs.readFileSync(path.join(workspacesB, sessionId, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
    expect(ofType<{ passed: boolean }>(events, "TestCommandRecorded").map((t) => t.passed)).toEqual([true]);
    await Promise.all([poolA.end(), poolB.end()]);
  });
  it("a cancel reaches a running step in under a second even when its runner's LISTEN connection is gone (the cancel poll)", async () => {
    const proxy = await startTcpProxy(Number(new URL(db.url).port));
    proxies.push(proxy);
    let abortedAt = 0;
    const sleepy: StepExecutor = (_step, ctx) =>
      new Promise((_, reject) =>
        ctx.signal.addEventListener("abort", () => {
          abortedAt = Date.now();
          reject(ctx.signal.reason);
        }),
      );
    const pool = createPool(db.url, 4);
    // Queries go straight to the database; LISTEN only through the proxy, which is then cut.
    const runner = new Runner(createAppEventStore(pool), pool, proxy.url(db.url), {
      id: "deaf",
      executors: { sleepy },
      stateDir: h.stateDir,
    });
    extraRunners.push(runner);
    await runner.start();
    await runner.listeningOnce();
    const session = await newSession();
    const stepId = await scheduleStep(db.store, { sessionId: session, kind: "sleepy", input: {} }, { actor: testActor });
    await until(async () => (await stepRow(stepId)).state === "running", 10_000, "running");
    proxy.cut();
    await sleep(300);
    const cancelledAt = Date.now();
    await db.store.append(session, "any", [{ type: "StepCancelled", data: { stepId } }], { actor: testActor });
    await until(async () => abortedAt > 0, 5_000, "the attempt aborted");
    expect(abortedAt - cancelledAt).toBeLessThan(1_000);
    expect((await stepRow(stepId)).state).toBe("cancelled");
  });

  it("SIGTERM: a runner still probing the agent CLIs stops at once, without waiting for the probe", async () => {
    const fakeBin = path.join(path.dirname(h.repo), "slow-bin");
    fs.mkdirSync(fakeBin, { recursive: true });
    // A "claude" that takes 30 s to say its version: detection would wait for it.
    fs.writeFileSync(path.join(fakeBin, "claude"), "#!/bin/sh\nsleep 30\n", { mode: 0o755 });
    const child = spawnRunner("probing", { CATCAFE_RUNNER_DETECT_SHELLS: "1", PATH: `${fakeBin}:${process.env.PATH}` });
    await until(
      async () => (await db.pool.query("SELECT 1 FROM runners WHERE id = 'probing' AND stopped_at IS NULL")).rowCount === 1,
      20_000,
      "registered",
    );
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const sentAt = Date.now();
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    const row = await db.pool.query("SELECT shells, stopped_at FROM runners WHERE id = 'probing'");
    expect(row.rows[0]).toMatchObject({ shells: null, stopped_at: expect.any(Date) });
  });
  it("rebuild equals live for histories the runner can produce: random claims, losses, takeovers, retries, releases, cancels and exhaustion (seeded)", async () => {
    // mulberry32: a small seeded generator, so a failing history can be replayed by its seed.
    const rng = (seed: number) => () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const runner = { kind: "runner", id: "prop" } as const;
    const held: Array<{ id: string; attempt: number; sessionId: string }> = [];
    for (let seed = 1; seed <= 12; seed++) {
      const random = rng(seed);
      const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
      const session = await newSession();
      for (let i = 0; i < 4; i++) {
        await scheduleStep(
          db.store,
          { sessionId: session, kind: "prop", input: { i }, maxAttempts: 1 + Math.floor(random() * 3) },
          { actor: testActor },
        );
      }
      for (let op = 0; op < 40; op++) {
        const r = random();
        if (r < 0.3) {
          // A claim; a quarter of them by a runner that then vanishes (its lease passes at once).
          const dies = random() < 0.25;
          const claimed = await claimNextStep(db.store, { runnerId: `r${op}`, leaseMs: dies ? 1 : 60_000, reclaimBackoffMs: 0 });
          if (claimed && !dies) held.push({ id: claimed.id, attempt: claimed.attempt, sessionId: claimed.sessionId });
          if (dies) await sleep(3);
        } else if (r < 0.75 && held.length) {
          const step = held.splice(Math.floor(random() * held.length), 1)[0]!;
          const kind = pick(["completed", "retryable", "final", "released", "progress"] as const);
          if (kind === "progress") {
            await appendWhileHeld(
              db.store,
              step,
              [{ type: "AgentOutputStreamed", data: { stepId: step.id, attempt: step.attempt, role: "coder", seq: op, text: "…" } }],
              {
                actor: runner,
              },
            );
            held.push(step);
          } else {
            const outcome =
              kind === "completed"
                ? ({ kind: "completed", output: { op } } as const)
                : kind === "released"
                  ? ({ kind: "released", reason: "shutdown" } as const)
                  : ({ kind: "failed", errorClass: "timeout", message: "slow", retryable: kind === "retryable" } as const);
            await recordStepOutcome(db.store, step, outcome, runner, { retryBaseMs: 1 });
          }
        } else if (r < 0.85) {
          const running = await db.pool.query<{ id: string }>(
            "SELECT id FROM steps WHERE session_id = $1 AND state IN ('pending', 'running')",
            [session],
          );
          const victim = pick(running.rows);
          if (victim) await db.store.append(session, "any", [{ type: "StepCancelled", data: { stepId: victim.id } }], { actor: testActor });
        } else {
          await failExhaustedSteps(db.store, runner);
        }
      }
    }
    const live = await snapshotProjections(db.pool, db.store);
    const liveLeases = (await db.pool.query("SELECT id, lease_expires_at FROM steps ORDER BY id")).rows;
    await rebuildProjections(db.store);
    expect(await snapshotProjections(db.pool, db.store)).toEqual(live);
    expect((await db.pool.query("SELECT id, lease_expires_at FROM steps ORDER BY id")).rows).toEqual(liveLeases);
  });
});
