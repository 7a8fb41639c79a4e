import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../server/db/pool";
import { createAppEventStore } from "../../server/app-store";
import {
  claimNextStep,
  failExhaustedSteps,
  MAX_LOST_ATTEMPTS,
  recordStepOutcome,
  scheduleStep,
  scheduleSteps,
} from "../../server/runner/dispatch";
import { builtinExecutors } from "../../server/runner/echo";
import { StepExecutionError, type StepExecutor } from "../../server/runner/executors";
import { Runner, type RunnerOptions } from "../../server/runner/runner";
import { recordedMetadata, type RecordedEvent, type StoredEventMetadata } from "../../server/events/types";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { spawnRunnerProcess } from "../helpers/runner-process";

let db: TestDatabase;
/** This file's runners' process ledgers, child runners' too (kept apart from other test files'). */
const STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-runner-state-"));
const runners: Runner[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await Promise.all(runners.map((r) => r.stop()));
});

async function newSession(): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "runner test", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

async function startRunner(options: Partial<RunnerOptions> = {}): Promise<Runner> {
  const pool = createPool(db.url, 8);
  const runner = new Runner(createAppEventStore(pool), pool, db.url, {
    executors: builtinExecutors,
    leaseMs: 2_000,
    stateDir: STATE_DIR,
    ...options,
  });
  await runner.start();
  runners.push(runner);
  return runner;
}

function stepEvents(events: RecordedEvent[], stepId: string) {
  return events.filter((e) => (e.data as { stepId?: string }).stepId === stepId);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const stepState = async (stepId: string) =>
  (await db.pool.query<{ state: string; attempt: number }>("SELECT state, attempt FROM steps WHERE id = $1", [stepId])).rows[0];

function spawnRunner(id: string, leaseMs?: number): ChildProcess {
  const child = spawnRunnerProcess({ databaseUrl: db.url, id, stateDir: STATE_DIR, leaseMs, env: { CATCAFE_RUNNER_DETECT_SHELLS: "1" } });
  children.push(child);
  return child;
}

describe("runner", () => {
  it("executes a scheduled step and records start and completion once", async () => {
    await startRunner();
    const session = await newSession();
    const stepId = await scheduleStep(db.store, { sessionId: session, kind: "echo", input: { message: "hello" } }, { actor: testActor });
    await waitFor("completion", async () => (await stepState(stepId))?.state === "completed");
    const events = stepEvents(await db.store.readStream(session), stepId);
    expect(events.map((e) => e.type)).toEqual(["StepScheduled", "StepStarted", "StepCompleted"]);
    expect(events[2]!.data).toMatchObject({ attempt: 1, output: { echo: "hello" } });
    expect(events[1]!.metadata.actor.kind).toBe("runner");
  });

  it("a fan-out of 40 steps is one append (one statement, one transaction) and each runs exactly once", async () => {
    const session = await newSession();
    const before = await db.store.streamVersion(session);
    const ids = await scheduleSteps(
      db.store,
      session,
      Array.from({ length: 40 }, (_, i) => ({ kind: "echo", input: { message: `ballot ${i}` } })),
      { actor: testActor },
    );
    const scheduled = (await db.store.readStream(session)).filter((e) => e.type === "StepScheduled");
    expect(scheduled.map((e) => (e.data as { stepId: string }).stepId)).toEqual(ids);
    expect(new Set(scheduled.map((e) => e.txId)).size).toBe(1);
    expect(scheduled.map((e) => e.version)).toEqual(ids.map((_, i) => before! + 1 + i));
    const queued = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM steps WHERE id = ANY($1::uuid[])", [ids]);
    expect(queued.rows[0]!.n).toBe(40);
    await startRunner({ concurrency: 8 });
    await waitFor("all 40 completed", async () => {
      const r = await db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM steps WHERE id = ANY($1::uuid[]) AND state = 'completed'",
        [ids],
      );
      return r.rows[0]!.n === 40;
    });
    const events = await db.store.readStream(session);
    for (const id of ids) expect(stepEvents(events, id).map((e) => e.type)).toEqual(["StepScheduled", "StepStarted", "StepCompleted"]);
    // The claim builds StepStarted in SQL: it reads back through the catalog's schema (readStream
    // validates), with the catalog's summary and the registry's schema version.
    const started = await db.pool.query<{ event_id: string; summary: string; data: unknown; metadata: StoredEventMetadata }>(
      "SELECT event_id, summary, data, metadata FROM events WHERE stream_id = $1 AND type = 'StepStarted'",
      [session],
    );
    expect(started.rows).toHaveLength(40);
    for (const row of started.rows) {
      expect(row.summary).toBe(db.store.registry.summarize("StepStarted", row.data));
      expect(recordedMetadata(row.metadata, row.event_id).schemaVersion).toBe(db.store.registry.definition("StepStarted").version);
      // Stored as the store stores a lone event's metadata: the actor only.
      expect(row.metadata).toEqual({ actor: { kind: "runner", id: expect.any(String) } });
    }
  });

  it("registers itself with a heartbeat and marks itself stopped on shutdown", async () => {
    const runner = await startRunner();
    const row = await db.pool.query(
      "SELECT pid, stopped_at, heartbeat_at > now() - interval '15 seconds' AS fresh FROM runners WHERE id = $1",
      [runner.id],
    );
    expect(row.rows[0]).toMatchObject({ pid: process.pid, stopped_at: null, fresh: true });
    await runner.stop();
    const after = await db.pool.query("SELECT stopped_at FROM runners WHERE id = $1", [runner.id]);
    expect(after.rows[0].stopped_at).not.toBeNull();
  });

  it("stores the agent CLIs it detects on its machine on its row, in the background; a failed detection stores nothing", async () => {
    const found = [
      {
        shell: "claude",
        path: "/usr/bin/claude",
        version: "2.1.330",
        supported: true,
        capabilities: { nonInteractive: true },
        problems: [],
      },
    ];
    const runner = await startRunner({ detectShells: async () => found });
    await runner.shellsDetected;
    const row = await db.pool.query("SELECT shells, shells_detected_at IS NOT NULL AS detected FROM runners WHERE id = $1", [runner.id]);
    expect(row.rows[0]).toEqual({ shells: found, detected: true });
    const broken = await startRunner({
      detectShells: async () => {
        throw new Error("probe failed");
      },
    });
    await broken.shellsDetected;
    const none = await db.pool.query("SELECT shells FROM runners WHERE id = $1", [broken.id]);
    expect(none.rows[0].shells).toBeNull();
  });

  it("a runner killed with SIGKILL mid-step: another completes it, exactly once; the dead attempt's late result is rejected", async () => {
    await Promise.all(runners.map((r) => r.stop())); // only the child runners below may take this step
    const session = await newSession();
    const first = spawnRunner("doomed");
    const stepId = await scheduleStep(
      db.store,
      { sessionId: session, kind: "echo", input: { message: "survives", delayMs: 2_500 } },
      { actor: testActor },
    );
    await waitFor("the first runner to start the step", async () => {
      const events = stepEvents(await db.store.readStream(session), stepId);
      return events.some((e) => e.type === "StepStarted");
    });
    first.kill("SIGKILL");
    await new Promise((r) => first.once("exit", r));
    // The doomed runner's lease (1 s) decides when the step is taken over; the rescuer's own is
    // long, so that a loaded machine delaying its heartbeats cannot make it lose the step too.
    spawnRunner("rescuer", 20_000);
    await waitFor("completion by the second runner", async () => (await stepState(stepId))?.state === "completed", 30_000);

    const events = stepEvents(await db.store.readStream(session), stepId);
    const started = events.filter((e) => e.type === "StepStarted").map((e) => e.data as { attempt: number; runnerId: string });
    const completed = events.filter((e) => e.type === "StepCompleted");
    expect(started).toEqual([
      expect.objectContaining({ attempt: 1, runnerId: "doomed" }),
      expect.objectContaining({ attempt: 2, runnerId: "rescuer" }),
    ]);
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data).toMatchObject({ attempt: 2, output: { echo: "survives" } });

    const late = await recordStepOutcome(
      db.store,
      { id: stepId, attempt: 1 },
      { kind: "completed", output: { echo: "zombie" } },
      { kind: "runner", id: "doomed" },
    );
    expect(late).toBe(false);
    expect(stepEvents(await db.store.readStream(session), stepId)).toHaveLength(events.length);
  });

  it("four runners never run the same step: 300 steps, each started and completed exactly once", async () => {
    await Promise.all(runners.map((r) => r.stop()));
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
    const executions = new Map<string, number>();
    const counting: StepExecutor = async (step) => {
      executions.set(step.id, (executions.get(step.id) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, Math.random() * 3));
      return { ok: true };
    };
    await Promise.all(Array.from({ length: 4 }, () => startRunner({ executors: { count: counting }, concurrency: 3 })));
    const sessions = await Promise.all(Array.from({ length: 10 }, () => newSession()));
    const stepIds: string[] = [];
    await Promise.all(
      sessions.map(async (sessionId) => {
        for (let i = 0; i < 30; i++)
          stepIds.push(await scheduleStep(db.store, { sessionId, kind: "count", input: { i } }, { actor: testActor }));
      }),
    );
    await waitFor(
      "all steps completed",
      async () => {
        const r = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM steps WHERE id = ANY($1) AND state = 'completed'", [
          stepIds,
        ]);
        return Number(r.rows[0]!.n) === stepIds.length;
      },
      60_000,
    );
    expect(stepIds).toHaveLength(300);
    expect([...executions.values()].every((n) => n === 1)).toBe(true);
    expect(executions.size).toBe(300);
    const counts = await db.pool.query<{ type: string; n: string; distinct_steps: string }>(
      `SELECT type, count(*) AS n, count(DISTINCT data->>'stepId') AS distinct_steps FROM events
       WHERE stream_id = ANY($1) AND type IN ('StepStarted', 'StepCompleted') GROUP BY type ORDER BY type`,
      [sessions],
    );
    expect(counts.rows).toEqual([
      { type: "StepCompleted", n: "300", distinct_steps: "300" },
      { type: "StepStarted", n: "300", distinct_steps: "300" },
    ]);
    const byRunner = await db.pool.query(
      "SELECT count(DISTINCT data->>'runnerId') AS n FROM events WHERE stream_id = ANY($1) AND type = 'StepStarted'",
      [sessions],
    );
    expect(Number(byRunner.rows[0].n)).toBeGreaterThan(1);
  });

  it("retries a retryable failure with exponential backoff recorded in the events, then succeeds", async () => {
    await Promise.all(runners.map((r) => r.stop()));
    let calls = 0;
    const flaky: StepExecutor = async () => {
      calls++;
      if (calls < 3) throw new StepExecutionError("provider_network_error", `connection reset (call ${calls})`, true);
      return { ok: calls };
    };
    await startRunner({ executors: { flaky }, retryBaseMs: 100 });
    const session = await newSession();
    const stepId = await scheduleStep(db.store, { sessionId: session, kind: "flaky", input: {} }, { actor: testActor });
    await waitFor("completion after retries", async () => (await stepState(stepId))?.state === "completed");
    const events = stepEvents(await db.store.readStream(session), stepId);
    expect(events.map((e) => e.type)).toEqual([
      "StepScheduled",
      "StepStarted",
      "StepFailed",
      "StepStarted",
      "StepFailed",
      "StepStarted",
      "StepCompleted",
    ]);
    const failures = events
      .filter((e) => e.type === "StepFailed")
      .map((e) => e.data as { errorClass: string; retryAt: string; attempt: number });
    expect(failures.map((f) => f.errorClass)).toEqual(["provider_network_error", "provider_network_error"]);
    const delays = events
      .filter((e) => e.type === "StepFailed")
      .map((e) => Date.parse((e.data as { retryAt: string }).retryAt) - Date.parse(e.recordedAt));
    // retryAt = the database clock at the failure + 100 ms × 2^(attempt−1); recordedAt is that transaction's start.
    expect(delays[0]).toBeGreaterThanOrEqual(100);
    expect(delays[0]).toBeLessThan(150);
    expect(delays[1]).toBeGreaterThanOrEqual(200);
    expect(delays[1]).toBeLessThan(250);
  });

  it("does not retry a non-retryable failure, and classifies an unknown step kind as internal_error", async () => {
    await Promise.all(runners.map((r) => r.stop()));
    const broken: StepExecutor = async () => {
      throw new StepExecutionError("schema_invalid", "reviewer output is not JSON", false);
    };
    await startRunner({ executors: { broken } });
    const session = await newSession();
    const a = await scheduleStep(db.store, { sessionId: session, kind: "broken", input: {} }, { actor: testActor });
    const b = await scheduleStep(db.store, { sessionId: session, kind: "nonexistent", input: {} }, { actor: testActor });
    await waitFor("both failed", async () => (await stepState(a))?.state === "failed" && (await stepState(b))?.state === "failed");
    const events = await db.store.readStream(session);
    expect(
      stepEvents(events, a)
        .filter((e) => e.type === "StepFailed")
        .map((e) => e.data),
    ).toEqual([expect.objectContaining({ errorClass: "schema_invalid", retryAt: null })]);
    expect(stepEvents(events, b).find((e) => e.type === "StepFailed")?.data).toMatchObject({
      errorClass: "internal_error",
      message: expect.stringContaining('no executor for step kind "nonexistent"'),
    });
  });

  it("a lost runner is not the step's fault: a one-attempt step is taken over, and fails only after MAX_LOST_ATTEMPTS losses, through the workflow's reactor", async () => {
    await Promise.all(runners.map((r) => r.stop()));
    const session = await newSession();
    const stepId = await scheduleStep(
      db.store,
      { sessionId: session, kind: "echo", input: { message: "x" }, maxAttempts: 1 },
      { actor: testActor },
    );
    const reacted: string[] = [];
    const react = async (_tx: unknown, _store: unknown, _session: string, recorded: { type: string }[]) => {
      reacted.push(...recorded.map((e) => e.type));
    };
    for (let lost = 0; lost < MAX_LOST_ATTEMPTS + 1; lost++) {
      const claimed = await claimNextStep(db.store, { runnerId: `ghost-${lost}`, leaseMs: 30, reclaimBackoffMs: 0 });
      expect(claimed).toMatchObject({ id: stepId, attempt: lost + 1, reclaimed: lost > 0 });
      expect(await failExhaustedSteps(db.store, { kind: "runner", id: "sweeper" }, { react })).toBe(0);
      await new Promise((r) => setTimeout(r, 80));
    }
    // The last runner vanished too: nobody may take it over again; the sweeper fails it.
    expect(await claimNextStep(db.store, { runnerId: "other", leaseMs: 30, reclaimBackoffMs: 0 })).toBeNull();
    expect(await failExhaustedSteps(db.store, { kind: "runner", id: "sweeper" }, { react })).toBe(1);
    expect(reacted).toEqual(["StepFailed"]);
    expect(await stepState(stepId)).toEqual({ state: "failed", attempt: MAX_LOST_ATTEMPTS + 1 });
    const events = stepEvents(await db.store.readStream(session), stepId);
    // `reclaimed` is recorded only when true.
    expect(events.filter((e) => e.type === "StepStarted").map((e) => (e.data as { reclaimed?: boolean }).reclaimed)).toEqual([
      undefined,
      ...Array(MAX_LOST_ATTEMPTS).fill(true),
    ]);
    expect(events.find((e) => e.type === "StepFailed")?.data).toMatchObject({
      errorClass: "internal_error",
      retryAt: null,
      message: expect.stringContaining(`${MAX_LOST_ATTEMPTS + 1} runners in a row vanished`),
    });
  });

  it("on SIGTERM a runner finishes short steps and releases long ones for another runner", async () => {
    await Promise.all(runners.map((r) => r.stop()));
    const runner = await startRunner({ shutdownGraceMs: 300, concurrency: 2 });
    const session = await newSession();
    const quick = await scheduleStep(
      db.store,
      { sessionId: session, kind: "echo", input: { message: "quick", delayMs: 100 } },
      { actor: testActor },
    );
    const slow = await scheduleStep(
      db.store,
      { sessionId: session, kind: "echo", input: { message: "slow", delayMs: 10_000 } },
      { actor: testActor },
    );
    await waitFor(
      "both started",
      async () => (await stepState(quick))?.state === "running" && (await stepState(slow))?.state === "running",
    );
    await runner.stop();
    expect((await stepState(quick))?.state).toBe("completed");
    expect(await stepState(slow)).toEqual({ state: "pending", attempt: 1 });
    const released = stepEvents(await db.store.readStream(session), slow).find((e) => e.type === "StepReleased");
    expect(released?.data).toMatchObject({ attempt: 1, reason: "runner shutting down" });
  });
});
