// A step's round trip on an idle in-process Runner (own pool, echo executor, concurrency 1),
// steps scheduled one at a time: scheduleStep() called → the runner's "step completed" log
// (claim, execution and the recorded result). Blocks alternate between a feature on and off
// (`toggle`), so drift hits both alike: what the metrics_overhead and tracing_overhead
// measures compare.
import crypto from "node:crypto";
import { performance } from "node:perf_hooks";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { scheduleStep } from "../../server/runner/dispatch";
import { builtinExecutors } from "../../server/runner/echo";
import { Runner } from "../../server/runner/runner";
import type { BenchContext } from "./context";
import { benchActor, createSessions } from "./fixtures";
import { percentiles } from "./percentiles";
import { sleep } from "./timing";

const WARMUP_STEPS = 10;
const SPACING_MS = 2;
const TIMEOUT_MS = 5_000;

/** Round-trip samples in ms with the feature on and off, `blocks` blocks of `perBlock` steps, off first. */
export async function alternatingRoundTrips(
  ctx: BenchContext,
  label: string,
  toggle: (on: boolean) => Promise<void> | void,
  blocks: number,
  perBlock: number,
): Promise<{ on: number[]; off: number[] }> {
  const [session] = await createSessions(ctx.store, 1, label);
  let onCompleted: ((stepId: string) => void) | null = null;
  const runnerPool = createPool(ctx.url, 4);
  const runner = new Runner(createAppEventStore(runnerPool), runnerPool, ctx.url, {
    id: `bench-${label}-${crypto.randomBytes(3).toString("hex")}`,
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
    for (let b = 0; b < blocks; b++) {
      const mode = b % 2 === 0 ? "off" : "on";
      await toggle(mode === "on");
      for (let i = 0; i < perBlock; i++) {
        samples[mode].push(await roundTrip(b * perBlock + i));
        await sleep(SPACING_MS);
      }
    }
  } finally {
    await toggle(false);
    await runner.stop();
    await runnerPool.end();
  }
  return samples;
}

/** On against off: each side's p50 and p99, their ratios (3 decimals) and the samples' count; the means for the notes. */
export function onOffFigures(samples: { on: number[]; off: number[] }) {
  const on = percentiles(samples.on);
  const off = percentiles(samples.off);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    figures: {
      on_p50_ms: on.p50,
      off_p50_ms: off.p50,
      ratio_p50: round(on.p50 / off.p50),
      on_p99_ms: on.p99,
      off_p99_ms: off.p99,
      ratio_p99: round(on.p99 / off.p99),
      n: on.n + off.n,
    },
    means: { on_mean: on.mean, off_mean: off.mean },
  };
}
