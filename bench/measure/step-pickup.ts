// step_pickup_ms: an idle in-process Runner (own pool, echo executor, concurrency 1) waits;
// steps are scheduled one at a time. Latency = scheduleStep() resolved (commit done) →
// the runner's onClaim hook, both by performance.now() in this process.
import crypto from "node:crypto";
import { performance } from "node:perf_hooks";
import { createPool } from "../../server/db/pool";
import { createAppEventStore } from "../../server/app-store";
import { scheduleStep } from "../../server/runner/dispatch";
import { builtinExecutors } from "../../server/runner/echo";
import { Runner } from "../../server/runner/runner";
import type { Measurement } from "../lib/context";
import { benchActor, createSessions } from "../lib/fixtures";
import { percentiles } from "../lib/percentiles";
import { sleep, waitUntil } from "../lib/timing";
import { countListeners } from "./single-append";

const STEPS = 300;
const WARMUP_STEPS = 10;
/** Pause after a step completes, so the runner is back to waiting when the next arrives. */
const SPACING_MS = 5;
const CLAIM_TIMEOUT_MS = 5_000;

export const stepPickup: Measurement = {
  name: "step_pickup",
  keys: ["step_pickup_ms"],
  async run(ctx) {
    const [session] = await createSessions(ctx.store, 1, "pickup");
    const claimed = new Map<string, number>();
    let onClaimed: ((stepId: string) => void) | null = null;
    const runnerPool = createPool(ctx.url, 4);
    const runner = new Runner(createAppEventStore(runnerPool), runnerPool, ctx.url, {
      id: `bench-runner-${crypto.randomBytes(3).toString("hex")}`,
      executors: builtinExecutors,
      concurrency: 1,
      onClaim: (step) => {
        claimed.set(step.id, performance.now());
        onClaimed?.(step.id);
      },
    });
    const latencies: number[] = [];
    let claimedBeforeCommitSeen = 0;
    await runner.start();
    try {
      await sleep(50); // let the runner reach its first wait
      ctx.note("notify_listeners_during_step_pickup", await countListeners(ctx.pool));
      for (let i = 0; i < WARMUP_STEPS + STEPS; i++) {
        const stepId = crypto.randomUUID();
        const claim = new Promise<number>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`step ${i} was not claimed within ${CLAIM_TIMEOUT_MS} ms`)), CLAIM_TIMEOUT_MS);
          onClaimed = (id) => {
            const at = claimed.get(id);
            if (id === stepId && at !== undefined) {
              clearTimeout(timer);
              resolve(at);
            }
          };
        });
        claim.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
        await scheduleStep(
          ctx.store,
          { sessionId: session!.id, kind: "echo", input: { message: `pickup ${i}`, delayMs: 0 }, stepId },
          { actor: benchActor },
        );
        const committedAt = performance.now();
        const claimedAt = await claim;
        if (i >= WARMUP_STEPS) {
          // The claim can land before our client has read the COMMIT reply.
          if (claimedAt < committedAt) claimedBeforeCommitSeen++;
          latencies.push(Math.max(0, claimedAt - committedAt));
        }
        await waitUntil(
          `step ${i} to complete`,
          async () => {
            const r = await ctx.pool.query<{ state: string }>("SELECT state FROM steps WHERE id = $1", [stepId]);
            return r.rows[0]?.state === "completed";
          },
          CLAIM_TIMEOUT_MS,
        );
        await sleep(SPACING_MS);
      }
    } finally {
      await runner.stop();
      await runnerPool.end();
    }
    const s = percentiles(latencies);
    ctx.note("step_pickup", {
      warmup_steps: WARMUP_STEPS,
      spacing_ms: SPACING_MS,
      p95: s.p95,
      mean: s.mean,
      over_100ms: latencies.filter((l) => l > 100).length,
      claimed_before_commit_reply: claimedBeforeCommitSeen,
    });
    return { step_pickup_ms: { p50: s.p50, p99: s.p99, n: s.n, max: s.max } };
  },
};
