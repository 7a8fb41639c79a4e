// metrics_overhead: what recording the metrics (docs/operations.md, "Metrics") costs a step.
// An idle in-process Runner (own pool, echo executor, concurrency 1) runs steps scheduled one
// at a time; a step's round trip = scheduleStep() called → the runner's "step completed" log
// (claim, execution and the recorded result, with every metric the runner and the store record
// on the way). Blocks of steps alternate between recording on and off (setMetricsRecording:
// every record function returns at once), so drift hits both alike. ratio = on / off; target
// p50 within 10 %. Also the record functions alone, in nanoseconds per step.
import crypto from "node:crypto";
import { performance } from "node:perf_hooks";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { countStepOutcome, recordEventsAppended, recordStepPickup, setMetricsRecording } from "../../server/metrics/registry";
import { scheduleStep } from "../../server/runner/dispatch";
import { builtinExecutors } from "../../server/runner/echo";
import { Runner } from "../../server/runner/runner";
import type { Measurement } from "../lib/context";
import { benchActor, createSessions } from "../lib/fixtures";
import { percentiles } from "../lib/percentiles";
import { sleep } from "../lib/timing";

const BLOCKS = 20;
const STEPS_PER_BLOCK = 15;
const WARMUP_STEPS = 10;
const SPACING_MS = 2;
const TIMEOUT_MS = 5_000;

export const metricsOverhead: Measurement = {
  name: "metrics_overhead",
  keys: ["metrics_overhead"],
  async run(ctx) {
    const [session] = await createSessions(ctx.store, 1, "metrics");
    let onCompleted: ((stepId: string) => void) | null = null;
    const runnerPool = createPool(ctx.url, 4);
    const runner = new Runner(createAppEventStore(runnerPool), runnerPool, ctx.url, {
      id: `bench-metrics-${crypto.randomBytes(3).toString("hex")}`,
      executors: builtinExecutors,
      concurrency: 1,
      log: (msg, fields) => {
        if (msg === "step completed") onCompleted?.(String(fields?.stepId));
      },
    });
    const roundTrip = async (i: number): Promise<number> => {
      const stepId = crypto.randomUUID();
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`step ${i} did not complete within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
        onCompleted = (id) => {
          if (id !== stepId) return;
          clearTimeout(timer);
          resolve();
        };
      });
      const t = performance.now();
      await scheduleStep(
        ctx.store,
        { sessionId: session!.id, kind: "echo", input: { message: `m ${i}`, delayMs: 0 }, stepId },
        { actor: benchActor },
      );
      await done;
      return performance.now() - t;
    };
    const samples = { on: [] as number[], off: [] as number[] };
    await runner.start();
    try {
      await sleep(50);
      for (let i = 0; i < WARMUP_STEPS; i++) await roundTrip(-i);
      for (let b = 0; b < BLOCKS; b++) {
        const mode = b % 2 === 0 ? "off" : "on";
        setMetricsRecording(mode === "on");
        for (let i = 0; i < STEPS_PER_BLOCK; i++) {
          samples[mode].push(await roundTrip(b * STEPS_PER_BLOCK + i));
          await sleep(SPACING_MS);
        }
      }
    } finally {
      setMetricsRecording(true);
      await runner.stop();
      await runnerPool.end();
    }
    // The record functions alone: what one step records (a pickup, its three events, an outcome).
    const N = 100_000;
    const t = performance.now();
    for (let i = 0; i < N; i++) {
      recordStepPickup("echo", 0.002);
      recordEventsAppended([{ category: "step", type: "StepScheduled" }]);
      recordEventsAppended([{ category: "step", type: "StepStarted" }]);
      recordEventsAppended([{ category: "step", type: "StepCompleted" }]);
      countStepOutcome("echo", "completed", null, 0.004);
    }
    const recordNsPerStep = Math.round(((performance.now() - t) * 1e6) / N);
    const on = percentiles(samples.on);
    const off = percentiles(samples.off);
    const round = (n: number) => Math.round(n * 1000) / 1000;
    ctx.note("metrics_overhead", { blocks: BLOCKS, steps_per_block: STEPS_PER_BLOCK, on_mean: on.mean, off_mean: off.mean });
    return {
      metrics_overhead: {
        on_p50_ms: on.p50,
        off_p50_ms: off.p50,
        ratio_p50: round(on.p50 / off.p50),
        on_p99_ms: on.p99,
        off_p99_ms: off.p99,
        ratio_p99: round(on.p99 / off.p99),
        n: on.n + off.n,
        record_ns_per_step: recordNsPerStep,
      },
    };
  },
};
