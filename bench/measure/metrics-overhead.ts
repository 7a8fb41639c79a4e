// metrics_overhead: what recording the metrics (docs/operations.md, "Metrics") costs a step.
// An idle in-process Runner (own pool, echo executor, concurrency 1) runs steps scheduled one
// at a time; a step's round trip = scheduleStep() called → the runner's "step completed" log
// (claim, execution and the recorded result, with every metric the runner and the store record
// on the way). Blocks of steps alternate between recording on and off (setMetricsRecording:
// every record function returns at once), so drift hits both alike. ratio = on / off; target
// p50 within 10 %. Also the record functions alone, in nanoseconds per step.
import { performance } from "node:perf_hooks";
import { countStepOutcome, recordEventsAppended, recordStepPickup, setMetricsRecording } from "../../server/metrics/registry";
import type { Measurement } from "../lib/context";
import { alternatingRoundTrips, onOffFigures } from "../lib/step-round-trip";

const BLOCKS = 20;
const STEPS_PER_BLOCK = 15;

export const metricsOverhead: Measurement = {
  name: "metrics_overhead",
  keys: ["metrics_overhead"],
  async run(ctx) {
    const samples = await alternatingRoundTrips(ctx, "metrics", (on) => setMetricsRecording(on), BLOCKS, STEPS_PER_BLOCK);
    setMetricsRecording(true);
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
    const { figures, means } = onOffFigures(samples);
    ctx.note("metrics_overhead", { blocks: BLOCKS, steps_per_block: STEPS_PER_BLOCK, ...means });
    return { metrics_overhead: { ...figures, record_ns_per_step: recordNsPerStep } };
  },
};
