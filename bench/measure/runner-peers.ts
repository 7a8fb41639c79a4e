// runner_peers: Cat Cafe's step dispatch beside graphile-worker 0.17 on the same PostgreSQL,
// in alternating rounds, each system's consumers in worker processes of their own
// (../peers/worker-process.ts) so that their CPU can be told apart from the bench's.
// Per round and system: 4 processes are started and warmed up, then
//   - 2,000 no-op steps, one per session, are scheduled at once while no consumer runs
//     (bulk_schedule_ms: one addJobs call; Cat Cafe: see SCHEDULE_API), and drained by 1
//     process of concurrency 4;
//   - 200 sessions of 10 steps each, every next step scheduled when the previous completes
//     (Cat Cafe: in the outcome's transaction, through the Runner's `react`; graphile-worker:
//     the task adds the next job), drained by 1 process;
//   - 2,000 steps again with 2 and then 4 processes (runner_scaling).
// A measured window runs from the consumers being told to start to the last step committed
// (the queue checked empty); it begins with pg_stat_statements reset and the WAL position,
// the server's CPU and the workers' CPU noted (a VACUUM and a CHECKPOINT precede
// each batch's scheduling). See docs/scaling.md.
import { performance } from "node:perf_hooks";
import type { BenchContext, Measurement } from "../lib/context";
import { benchActor, createSessions } from "../lib/fixtures";
import { median, round } from "../lib/percentiles";
import { PgCounters, type WindowCounters } from "../lib/pg-counters";
import type { BenchReportFigures } from "../lib/report";
import { waitUntil } from "../lib/timing";
import { cancelNoopSteps, noopStepsLeft, SCHEDULE_API, scheduleNoopFanout, scheduleNoopSteps } from "../peers/catcafe-steps";
import { addNoopJobs, graphileUtils, migrateGraphileWorker, noopJobsLeft } from "../peers/graphile-worker";
import { WorkerFleet } from "../peers/worker-fleet";
import type { WorkerSystem } from "../peers/worker-process";

const STEPS = 2_000;
const CHAIN = 10;
const CONCURRENCY = 4;
const PROCESSES = [1, 2, 4] as const;
const ROUNDS = 2;
const WARMUP_SESSIONS = 40;
/** The fan-out figure: STEPS steps as FANOUT_SESSIONS sessions of STEPS / FANOUT_SESSIONS steps each (one append per session). */
const FANOUT_SESSIONS = 20;
const RUN_TIMEOUT_MS = 60_000;

/** Callers filling Cat Cafe's queue where the time it takes is not a figure (its API has no bulk call). */
const FILL_CALLERS = 8;

interface System {
  name: WorkerSystem;
  /**
   * Schedules `heads` steps (each on a session of its own) that chain `remaining` more;
   * `timed`: this is the bulk_schedule_ms sample, scheduled as the API offers it.
   */
  schedule(heads: number, remaining: number, timed: boolean): Promise<void>;
  /** Cat Cafe only: STEPS steps as a fan-out on FANOUT_SESSIONS sessions (timed, then drained by one process). */
  fanout?(): Promise<void>;
  left(counters: PgCounters): Promise<number>;
}

interface Run {
  workers: number;
  steps: number;
  scheduleMs: number;
  perSecond: number;
  workerCpuMs: number;
  counters: WindowCounters;
}

interface RoundResult {
  oneRunPerProcesses: Run[];
  chained: Run;
  fanoutMs: number | null;
}

async function drain(
  system: System,
  fleet: WorkerFleet,
  counters: PgCounters,
  workers: number,
  heads: number,
  remaining: number,
  timed = false,
): Promise<Run> {
  const steps = heads * (remaining + 1);
  await counters.checkpoint();
  const s = performance.now();
  await system.schedule(heads, remaining, timed);
  const scheduleMs = performance.now() - s;
  const target = fleet.finished() + steps;
  const end = await counters.begin();
  const cpu = fleet.cpuMs(workers);
  const t0 = performance.now();
  await fleet.start(workers);
  await fleet.waitFinished(target, RUN_TIMEOUT_MS);
  await waitUntil(`${system.name}: the queue to be empty`, async () => (await system.left(counters)) === 0, RUN_TIMEOUT_MS, 1);
  const elapsedMs = performance.now() - t0;
  const workerCpuMs = fleet.cpuMs(workers) - cpu;
  const c = await end();
  await fleet.stop(workers);
  return { workers, steps, scheduleMs, perSecond: (steps * 1000) / elapsedMs, workerCpuMs, counters: c };
}

async function oneRound(ctx: BenchContext, system: System, counters: PgCounters): Promise<RoundResult> {
  const fleet = await WorkerFleet.spawn(system.name, ctx.url, Math.max(...PROCESSES), CONCURRENCY);
  try {
    await drain(system, fleet, counters, fleet.size, WARMUP_SESSIONS, CHAIN - 1); // warm-up: every process, both paths
    const runs: Run[] = [];
    let chained: Run | null = null;
    for (const workers of PROCESSES) {
      runs.push(await drain(system, fleet, counters, workers, STEPS, 0, workers === 1));
      if (workers === 1) chained = await drain(system, fleet, counters, 1, STEPS / CHAIN, CHAIN - 1);
    }
    let fanoutMs: number | null = null;
    if (system.fanout) {
      await counters.checkpoint();
      const s = performance.now();
      await system.fanout();
      fanoutMs = performance.now() - s;
      await fleet.start(1);
      await waitUntil(`${system.name}: the fan-out to be drained`, async () => (await system.left(counters)) === 0, RUN_TIMEOUT_MS, 5);
      await fleet.stop(1);
    }
    const line = (r: Run) => `${r.workers}p ${Math.round(r.perSecond)}/s`;
    ctx.log(`runner_peers: ${system.name}: ${runs.map(line).join(", ")}; chained ${Math.round(chained!.perSecond)}/s`);
    return { oneRunPerProcesses: runs, chained: chained!, fanoutMs };
  } finally {
    await fleet.close();
  }
}

const perStep = (r: Run) => ({
  statements: r.counters.statements / r.steps,
  statementsWithoutTxControl: r.counters.statementsWithoutTxControl / r.steps,
  walBytes: r.counters.walBytes / r.steps,
  workerCpuMsPer1000: (r.workerCpuMs * 1000) / r.steps,
  postgresCpuMsPer1000: (r.counters.postgresCpuMs * 1000) / r.steps,
});

function summarize(rounds: Record<WorkerSystem, RoundResult[]>): Partial<BenchReportFigures> {
  const med = (sys: WorkerSystem, pick: (r: RoundResult) => number) => median(rounds[sys].map(pick));
  const pair = (pick: (r: RoundResult) => number, digits = 1) => {
    const catcafe = round(med("catcafe", pick), digits);
    const graphile = round(med("graphile_worker", pick), digits);
    return { catcafe, graphile_worker: graphile, ratio: round(med("catcafe", pick) / med("graphile_worker", pick), 3) };
  };
  const single = (r: RoundResult) => r.oneRunPerProcesses[0]!;
  const modes = { one_per_session: single, ten_per_session: (r: RoundResult) => r.chained };
  const each = <T>(f: (mode: (r: RoundResult) => Run) => T) => ({
    one_per_session: f(modes.one_per_session),
    ten_per_session: f(modes.ten_per_session),
  });
  const cpu = (mode: (r: RoundResult) => Run) => {
    const side = (sys: WorkerSystem) => ({
      worker: round(
        med(sys, (r) => perStep(mode(r)).workerCpuMsPer1000),
        0,
      ),
      postgres: round(
        med(sys, (r) => perStep(mode(r)).postgresCpuMsPer1000),
        0,
      ),
    });
    const total = (sys: WorkerSystem) => med(sys, (r) => perStep(mode(r)).workerCpuMsPer1000 + perStep(mode(r)).postgresCpuMsPer1000);
    return {
      catcafe: side("catcafe"),
      graphile_worker: side("graphile_worker"),
      ratio: round(total("catcafe") / total("graphile_worker"), 3),
    };
  };
  const scaling = (sys: WorkerSystem) => {
    const perS = PROCESSES.map((_, i) => med(sys, (r) => r.oneRunPerProcesses[i]!.perSecond));
    return { per_s: perS.map((v) => Math.round(v)), ratio_to_1: perS.map((v) => round(v / perS[0]!, 3)) };
  };
  // The timed bulk schedule of 2,000 steps: the one before the 1-process run, in each round.
  const bulk = (sys: WorkerSystem) => med(sys, (r) => r.oneRunPerProcesses[0]!.scheduleMs);
  return {
    step_throughput_per_s: each((mode) => pair((r) => mode(r).perSecond, 0)),
    step_statements_per_step: each((mode) => ({
      ...pair((r) => perStep(mode(r)).statements, 2),
      catcafe_without_begin_commit: round(
        med("catcafe", (r) => perStep(mode(r)).statementsWithoutTxControl),
        2,
      ),
      graphile_worker_without_begin_commit: round(
        med("graphile_worker", (r) => perStep(mode(r)).statementsWithoutTxControl),
        2,
      ),
    })),
    step_wal_bytes_per_step: each((mode) => pair((r) => perStep(mode(r)).walBytes, 0)),
    step_cpu_ms_per_1000: each(cpu),
    bulk_schedule_ms: {
      steps: STEPS,
      catcafe: round(bulk("catcafe"), 1),
      graphile_worker: round(bulk("graphile_worker"), 1),
      ratio: round(bulk("catcafe") / bulk("graphile_worker"), 2),
      catcafe_api: SCHEDULE_API,
      catcafe_fanout: round(
        med("catcafe", (r) => r.fanoutMs ?? Number.NaN),
        1,
      ),
      fanout_ratio: round(med("catcafe", (r) => r.fanoutMs ?? Number.NaN) / bulk("graphile_worker"), 2),
      fanout_shape: `${FANOUT_SESSIONS} sessions x ${STEPS / FANOUT_SESSIONS} steps, one scheduleSteps append each`,
    },
    runner_scaling: { processes: [...PROCESSES], catcafe: scaling("catcafe"), graphile_worker: scaling("graphile_worker") },
  };
}

export const runnerPeers: Measurement = {
  name: "runner_peers",
  keys: [
    "step_throughput_per_s",
    "step_statements_per_step",
    "step_wal_bytes_per_step",
    "step_cpu_ms_per_1000",
    "bulk_schedule_ms",
    "runner_scaling",
  ],
  async run(ctx) {
    await migrateGraphileWorker(ctx.url);
    const sessions = await createSessions(ctx.store, STEPS, "runner-peers");
    const fanoutSessions = await createSessions(ctx.store, FANOUT_SESSIONS, "runner-peers-fanout");
    const utils = await graphileUtils(ctx.url);
    const counters = await PgCounters.open(ctx.url);
    const catcafe: System = {
      name: "catcafe",
      schedule: (heads, remaining, timed) =>
        scheduleNoopSteps(
          ctx.store,
          sessions.slice(0, heads).map((s) => ({ sessionId: s.id, remaining })),
          benchActor,
          timed ? 1 : FILL_CALLERS,
        ),
      fanout: () =>
        scheduleNoopFanout(
          ctx.store,
          fanoutSessions.map((s) => s.id),
          STEPS / FANOUT_SESSIONS,
          benchActor,
        ),
      left: (c) => noopStepsLeft(c.connection),
    };
    const graphile: System = {
      name: "graphile_worker",
      schedule: (heads, remaining) => addNoopJobs(utils, heads, remaining),
      left: (c) => noopJobsLeft(c.connection),
    };
    const rounds: Record<WorkerSystem, RoundResult[]> = { catcafe: [], graphile_worker: [] };
    try {
      for (let r = 0; r < ROUNDS; r++) {
        // Alternate who goes first, so that a slow patch of the machine hits both alike.
        for (const system of r % 2 === 0 ? [catcafe, graphile] : [graphile, catcafe]) {
          rounds[system.name].push(await oneRound(ctx, system, counters));
        }
      }
    } finally {
      const cancelled = await cancelNoopSteps(ctx.store, benchActor).catch(() => 0);
      if (cancelled > 0) ctx.log(`runner_peers: cancelled ${cancelled} no-op steps left by a failed run`);
      await counters.close();
      await Promise.resolve(utils.release()).catch(() => {});
    }
    const last = (sys: WorkerSystem) => rounds[sys].at(-1)!;
    const topOf = (run: Run) => run.counters.top.map((t) => ({ per_step: round(t.calls / run.steps, 3), query: t.query.slice(0, 140) }));
    ctx.note("runner_peers", {
      rounds: ROUNDS,
      steps: STEPS,
      chain: CHAIN,
      concurrency_per_process: CONCURRENCY,
      catcafe_schedule_api: SCHEDULE_API,
      counted:
        "statements: pg_stat_statements calls with track=top (client statements, BEGIN/COMMIT included) in the worker window, the bench's control connection excluded; WAL: pg_current_wal_lsn diff, a VACUUM and a CHECKPOINT before each batch is scheduled; CPU: /proc utime+stime of the worker processes and of the postmaster with all its children",
      per_round: Object.fromEntries(
        Object.entries(rounds).map(([sys, rs]) => [
          sys,
          rs.map((r) => ({
            per_s: r.oneRunPerProcesses.map((x) => Math.round(x.perSecond)),
            chained_per_s: Math.round(r.chained.perSecond),
            bulk_schedule_ms: Math.round(r.oneRunPerProcesses[0]!.scheduleMs),
            one_per_session: perStep(r.oneRunPerProcesses[0]!),
            ten_per_session: perStep(r.chained),
          })),
        ]),
      ),
      top_statements_one_per_session: {
        catcafe: topOf(last("catcafe").oneRunPerProcesses[0]!),
        graphile_worker: topOf(last("graphile_worker").oneRunPerProcesses[0]!),
      },
      top_statements_ten_per_session: { catcafe: topOf(last("catcafe").chained), graphile_worker: topOf(last("graphile_worker").chained) },
    });
    return summarize(rounds);
  },
};
