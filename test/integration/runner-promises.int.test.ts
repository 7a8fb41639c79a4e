// Three promises the README makes about runners, each tested so that breaking it fails here
// (docs/testing.md: each of these survived a one-line mutation before):
// - attempt fencing: while attempt 2 holds a step, attempt 1's heartbeat and late result are
//   refused by the attempt check itself (not by the step having finished already);
// - LISTEN/NOTIFY wakes an idle runner: with its fallback poll a minute away, a scheduled step
//   still starts within moments;
// - the per-runner concurrency cap: the most steps running at once is the cap, never more.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { claimNextStep, heartbeatStep, recordStepOutcome, scheduleStep } from "../../server/runner/dispatch";
import type { StepExecutor } from "../../server/runner/executors";
import { Runner, type RunnerOptions } from "../../server/runner/runner";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
const runners: Runner[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
});

async function newSession(): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "promises", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

async function startRunner(options: Partial<RunnerOptions> & Pick<RunnerOptions, "executors">): Promise<Runner> {
  const pool = createPool(db.url, 8);
  const runner = new Runner(createAppEventStore(pool), pool, db.url, { leaseMs: 5_000, ...options });
  await runner.start();
  await runner.listeningOnce();
  runners.push(runner);
  return runner;
}

const stepRow = async (id: string) =>
  (await db.pool.query<{ state: string; attempt: number }>("SELECT state, attempt FROM steps WHERE id = $1", [id])).rows[0]!;

describe("attempt fencing with two live attempts", () => {
  it("attempt 1's heartbeat and late result are refused while attempt 2 holds the step; attempt 2's result is recorded", async () => {
    const sessionId = await newSession();
    const stepId = await scheduleStep(db.store, { sessionId, kind: "fenced", input: {} }, { actor: testActor });
    const first = await claimNextStep(db.store, { runnerId: "slow-runner", leaseMs: 100, reclaimBackoffMs: 0 });
    expect(first).toMatchObject({ id: stepId, attempt: 1 });
    await new Promise((r) => setTimeout(r, 250)); // attempt 1's lease runs out while it still works
    const second = await claimNextStep(db.store, { runnerId: "rescuer", leaseMs: 60_000, reclaimBackoffMs: 0 });
    expect(second).toMatchObject({ id: stepId, attempt: 2, reclaimed: true });
    expect(await stepRow(stepId)).toEqual({ state: "running", attempt: 2 });

    const before = await db.store.readStream(sessionId);
    // The step is still running (attempt 2): only the attempt number can refuse these.
    expect(await heartbeatStep(db.pool, { id: stepId, attempt: 1 }, 60_000)).toBe(false);
    const late = await recordStepOutcome(
      db.store,
      { id: stepId, attempt: 1 },
      { kind: "completed", output: { by: "attempt 1" } },
      {
        kind: "runner",
        id: "slow-runner",
      },
    );
    expect(late).toBe(false);
    expect(await db.store.readStream(sessionId)).toEqual(before);
    expect(await stepRow(stepId)).toEqual({ state: "running", attempt: 2 });

    expect(await heartbeatStep(db.pool, { id: stepId, attempt: 2 }, 60_000)).toBe(true);
    const done = await recordStepOutcome(
      db.store,
      { id: stepId, attempt: 2 },
      { kind: "completed", output: { by: "attempt 2" } },
      {
        kind: "runner",
        id: "rescuer",
      },
    );
    expect(done).toBe(true);
    const completed = (await db.store.readStream(sessionId)).filter((e) => e.type === "StepCompleted");
    expect(completed.map((e) => e.data)).toEqual([{ stepId, attempt: 2, output: { by: "attempt 2" } }]);
  });
});

describe("LISTEN/NOTIFY wakes an idle runner", () => {
  it("with the fallback poll a minute away, a scheduled step starts within moments", async () => {
    const started: number[] = [];
    const runner = await startRunner({
      pollMs: 60_000,
      executors: {
        wake: async () => {
          started.push(Date.now());
          return { ok: true };
        },
      },
    });
    // Let the runner go idle (its first sweep done, now waiting for a wake-up).
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 3; i++) {
      const sessionId = await newSession();
      const scheduledAt = Date.now();
      await scheduleStep(db.store, { sessionId, kind: "wake", input: {} }, { actor: testActor });
      const deadline = Date.now() + 10_000;
      while (started.length <= i && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(started.length, `step ${i} started`).toBe(i + 1);
      // Woken by the notification: nowhere near the minute the poll would take.
      expect(started[i]! - scheduledAt).toBeLessThan(5_000);
    }
    await runner.stop();
  });
});

describe("the per-runner concurrency cap", () => {
  it("a runner with concurrency 3 runs exactly 3 steps at once at most, and reaches 3", async () => {
    let running = 0;
    let most = 0;
    const slow: StepExecutor = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 150));
      running--;
      return { ok: true };
    };
    const runner = await startRunner({ concurrency: 3, executors: { slow } });
    const sessions = await Promise.all(Array.from({ length: 12 }, () => newSession()));
    const ids = await Promise.all(
      sessions.map((sessionId) => scheduleStep(db.store, { sessionId, kind: "slow", input: {} }, { actor: testActor })),
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const done = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM steps WHERE id = ANY($1) AND state = 'completed'", [ids]);
      if (Number(done.rows[0]!.n) === ids.length) break;
      if (Date.now() > deadline) throw new Error("the steps did not all complete");
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(most).toBe(3);
    await runner.stop();
  });
});
