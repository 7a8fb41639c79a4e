// pickup_vs_peer_ms: scheduling commit → the work starts, Cat Cafe beside graphile-worker on
// the same PostgreSQL, in alternating rounds. Cat Cafe: an idle in-process Runner (own pool,
// concurrency 1, LISTEN/NOTIFY wake-up); the time runs from scheduleStep() resolved (its
// COMMIT done) to the step's executor being entered. graphile-worker: an idle in-process
// worker (concurrency 1, its default LISTEN wake-up); from addJob() resolved (committed) to
// the task function being entered. One step at a time, each after the previous completed
// and a short pause, so that both wait idle when the next arrives.
import crypto from "node:crypto";
import { performance } from "node:perf_hooks";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { scheduleStep } from "../../server/runner/dispatch";
import { Runner } from "../../server/runner/runner";
import type { Measurement } from "../lib/context";
import { benchActor, createSessions } from "../lib/fixtures";
import { percentiles, round } from "../lib/percentiles";
import { sleep } from "../lib/timing";
import { graphileUtils, migrateGraphileWorker, startGraphileWorker } from "../peers/graphile-worker";

const ROUNDS = 4;
const STEPS_PER_ROUND = 50;
const WARMUP_STEPS = 10;
/** Pause after a step completed, so the consumer is back to waiting when the next arrives. */
const SPACING_MS = 10;
const STEP_TIMEOUT_MS = 5_000;
const CATCAFE_KIND = "bench_pickup";
const GRAPHILE_TASK = "bench_pickup";

/** Resolves when `id` is reported through `signal`; rejects after a timeout. */
class Arrivals {
  private readonly waiting = new Map<string, (at: number) => void>();
  private readonly seen = new Map<string, number>();
  arrive(id: string, at: number) {
    const w = this.waiting.get(id);
    if (w) w(at);
    else this.seen.set(id, at);
  }
  wait(id: string, what: string): Promise<number> {
    const early = this.seen.get(id);
    if (early !== undefined) return Promise.resolve(early);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} ${id}: not within ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
      this.waiting.set(id, (at) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(at);
      });
    });
  }
}

export const pickupVsPeer: Measurement = {
  name: "pickup_vs_peer",
  keys: ["pickup_vs_peer_ms"],
  async run(ctx) {
    const [session] = await createSessions(ctx.store, 1, "pickup-peer");
    await migrateGraphileWorker(ctx.url);

    // Cat Cafe: entered = the executor's first line; done = the outcome committed.
    const ccEntered = new Arrivals();
    const ccDone = new Arrivals();
    const runnerPool = createPool(ctx.url, 4);
    const runner = new Runner(createAppEventStore(runnerPool), runnerPool, ctx.url, {
      id: `bench-pickup-peer-${crypto.randomBytes(3).toString("hex")}`,
      executors: {
        [CATCAFE_KIND]: async (step) => {
          ccEntered.arrive(step.id, performance.now());
          return {};
        },
      },
      concurrency: 1,
      log: (msg, fields) => {
        if (msg === "step completed") ccDone.arrive(String(fields?.stepId), performance.now());
      },
    });
    // graphile-worker: entered = the task function's first line; done = job:complete.
    const gwEntered = new Arrivals();
    const gwDone = new Arrivals();
    const gwPool = createPool(ctx.url, 4);
    const utils = await graphileUtils(ctx.url);
    const worker = await startGraphileWorker(gwPool, 1, {
      [GRAPHILE_TASK]: async (payload) => {
        gwEntered.arrive((payload as { id: string }).id, performance.now());
      },
    });
    worker.events.on("job:complete", ({ job }) => gwDone.arrive((job.payload as { id: string }).id, performance.now()));

    const catcafeOnce = async (): Promise<number> => {
      const stepId = crypto.randomUUID();
      await scheduleStep(ctx.store, { sessionId: session!.id, kind: CATCAFE_KIND, input: {}, stepId }, { actor: benchActor });
      const committedAt = performance.now();
      const enteredAt = await ccEntered.wait(stepId, "Cat Cafe step");
      await ccDone.wait(stepId, "Cat Cafe step outcome");
      return enteredAt - committedAt;
    };
    const graphileOnce = async (): Promise<number> => {
      const id = crypto.randomUUID();
      await utils.addJob(GRAPHILE_TASK, { id });
      const committedAt = performance.now();
      const enteredAt = await gwEntered.wait(id, "graphile-worker job");
      await gwDone.wait(id, "graphile-worker job completion");
      return enteredAt - committedAt;
    };
    const series = async (once: () => Promise<number>, count: number, into: number[] | null) => {
      for (let i = 0; i < count; i++) {
        const latency = await once();
        into?.push(latency);
        await sleep(SPACING_MS);
      }
    };

    const catcafe: number[] = [];
    const graphile: number[] = [];
    try {
      await runner.start();
      await sleep(50); // both reach their first wait
      await series(catcafeOnce, WARMUP_STEPS, null);
      await series(graphileOnce, WARMUP_STEPS, null);
      for (let r = 0; r < ROUNDS; r++) {
        // Alternate who goes first, so that a slow patch of the machine hits both alike.
        const order = r % 2 === 0 ? [catcafeOnce, graphileOnce] : [graphileOnce, catcafeOnce];
        for (const once of order) await series(once, STEPS_PER_ROUND, once === catcafeOnce ? catcafe : graphile);
      }
    } finally {
      await runner.stop();
      await worker.stop().catch(() => {});
      await Promise.resolve(utils.release()).catch(() => {});
      await runnerPool.end().catch(() => {});
      await gwPool.end().catch(() => {});
    }
    const cc = percentiles(catcafe.map((l) => Math.max(0, l)));
    const gw = percentiles(graphile.map((l) => Math.max(0, l)));
    ctx.note("pickup_vs_peer", {
      rounds: ROUNDS,
      steps_per_round: STEPS_PER_ROUND,
      spacing_ms: SPACING_MS,
      catcafe: cc,
      graphile_worker: gw,
      entered_before_commit_reply: { catcafe: catcafe.filter((l) => l < 0).length, graphile_worker: graphile.filter((l) => l < 0).length },
    });
    return {
      pickup_vs_peer_ms: {
        catcafe: { p50: cc.p50, p99: cc.p99, n: cc.n },
        graphile_worker: { p50: gw.p50, p99: gw.p99, n: gw.n },
        ratio_p50: round(cc.p50 / gw.p50, 2),
        ratio_p99: round(cc.p99 / gw.p99, 2),
      },
    };
  },
};
