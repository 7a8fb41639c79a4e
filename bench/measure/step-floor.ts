// step_cost_floor: what a step costs at the least when each step is two events, measured
// beside graphile-worker on the same PostgreSQL in alternating rounds. It locates the gap in
// runner_peers: how much of a step's WAL and CPU the two events themselves take (the floor no
// queue design can go under while the claim and the result are events, req E1, docs/scaling.md),
// and how much the steps projection adds on top of them.
//
// Per round, 2,000 steps on sessions of their own, 4 writers at once, each step two
// statements without a transaction around them (an append's own shape: bump the stream row,
// insert the event):
//   - bare_appends: a StepStarted-sized and a StepCompleted-sized event under types no
//     projection handles and the registry does not know (no trigger runs; these sessions are
//     read by nothing else, and this measurement runs last);
//   - projected_appends: the real StepStarted and StepCompleted of steps scheduled before
//     the window, so the steps projection's trigger moves each step to running, then completed;
//   - graphile_worker: 2,000 no-op jobs added before the window, drained by an in-process
//     worker of concurrency 4;
//   - start_with_result: one event per step that carries the start and the result together
//     (Temporal's shape, which records an activity's start with its completion), under a type
//     nothing projects: what writing them together would save, measured as an option only
//     (docs/scaling.md, "Writing a step's start with its result").
// With a step's start and its result two events (req E1, E3), bare_appends is the floor.
// Not in any of them: the claim's pick, the runner, BEGIN/COMMIT around the result (those
// are the rest of runner_peers' figure). Counted as in runner_peers: statements from
// pg_stat_statements, WAL from pg_current_wal_lsn after a VACUUM and a CHECKPOINT, CPU from
// /proc (the bench process, and PostgreSQL with all its children).
import crypto from "node:crypto";
import { performance } from "node:perf_hooks";
import { v7 as timeOrderedUuid } from "uuid";
import { createPool } from "../../server/db/pool";
import { storedMetadata } from "../../server/events/types";
import type { Measurement } from "../lib/context";
import { benchActor, createSessions } from "../lib/fixtures";
import { median, round } from "../lib/percentiles";
import { PgCounters, type WindowCounters } from "../lib/pg-counters";
import { processCpuMs } from "../lib/proc-cpu";
import type { BenchReportFigures } from "../lib/report";
import { waitUntil } from "../lib/timing";
import { NOOP_KIND, scheduleNoopSteps } from "../peers/catcafe-steps";
import {
  addNoopJobs,
  GRAPHILE_NOOP_TASK,
  graphileUtils,
  migrateGraphileWorker,
  noopJobsLeft,
  noopTask,
  startGraphileWorker,
} from "../peers/graphile-worker";

const STEPS = 2_000;
const WRITERS = 4;
const ROUNDS = 2;
const RUN_TIMEOUT_MS = 60_000;
const RUNNER_ID = "bench-floor-000000-000000";

/** One event appended as EventStore.append writes it, in one statement: $1 stream, $2 event id, $3 type, $4 summary, $5 data, $6 metadata. */
const APPEND_SQL = `WITH bump AS (UPDATE streams SET version = version + 1, updated_at = now() WHERE id = $1 RETURNING version)
  INSERT INTO events (event_id, stream_id, version, type, summary, data, metadata)
  SELECT $2, $1, bump.version, $3, $4, $5, $6 FROM bump`;

type FloorSystem = "bare_appends" | "projected_appends" | "graphile_worker" | "start_with_result";

interface Window {
  perSecond: number;
  statements: number;
  walBytes: number;
  clientCpuMsPer1000: number;
  postgresCpuMsPer1000: number;
}

export const stepFloor: Measurement = {
  name: "step_floor",
  keys: ["step_cost_floor"],
  async run(ctx) {
    await migrateGraphileWorker(ctx.url);
    const sessions = await createSessions(ctx.store, STEPS, "step-floor");
    const utils = await graphileUtils(ctx.url);
    const counters = await PgCounters.open(ctx.url);
    // Opened after the counters, so that their statements are counted.
    const writers = createPool(ctx.url, WRITERS + 2, { applicationName: "bench-floor" });
    // The metadata a runner's event carries, as the store stores it (its size matters).
    const metadata = () =>
      JSON.stringify(
        storedMetadata({
          actor: { kind: "runner", id: RUNNER_ID },
          correlationId: crypto.randomUUID(),
          causationId: null,
          schemaVersion: 1,
        }),
      );
    const append = (streamId: string, type: string, summary: string, data: unknown) =>
      writers.query({
        name: "bench_floor_append",
        text: APPEND_SQL,
        values: [streamId, timeOrderedUuid(), type, summary, JSON.stringify(data), metadata()],
      });
    /** The two events of every step, WRITERS at a time; `stepOf` gives the step id of a session (projected) or a fresh one. */
    const twoEventsPerStep = async (types: [string, string], stepOf: (sessionId: string) => string) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          while (next < sessions.length) {
            const sessionId = sessions[next++]!.id;
            const stepId = stepOf(sessionId);
            const leaseExpiresAt = new Date(Date.now() + 60_000).toISOString();
            await append(sessionId, types[0], `Step started (attempt 1) on runner ${RUNNER_ID}`, {
              stepId,
              attempt: 1,
              runnerId: RUNNER_ID,
              leaseExpiresAt,
              reclaimed: false,
            });
            await append(sessionId, types[1], "Step completed (attempt 1)", { stepId, attempt: 1, output: { remaining: 0 } });
          }
        }),
      );
    };

    /** One event per step, its start and its result together, WRITERS at a time. */
    const oneEventPerStep = async () => {
      let next = 0;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          while (next < sessions.length) {
            const sessionId = sessions[next++]!.id;
            const leaseExpiresAt = new Date(Date.now() + 60_000).toISOString();
            await append(sessionId, "BenchFloorRan", `Step ran (attempt 1) on runner ${RUNNER_ID}`, {
              stepId: crypto.randomUUID(),
              attempt: 1,
              runnerId: RUNNER_ID,
              leaseExpiresAt,
              reclaimed: false,
              output: { remaining: 0 },
            });
          }
        }),
      );
    };

    const measure = async (prepare: () => Promise<void>, work: () => Promise<void>): Promise<Window> => {
      await counters.checkpoint();
      await prepare();
      const end = await counters.begin();
      const cpu = processCpuMs(process.pid);
      const t0 = performance.now();
      await work();
      const elapsed = performance.now() - t0;
      const clientCpu = processCpuMs(process.pid) - cpu;
      const c: WindowCounters = await end();
      return {
        perSecond: (STEPS * 1000) / elapsed,
        statements: c.statements / STEPS,
        walBytes: c.walBytes / STEPS,
        clientCpuMsPer1000: (clientCpu * 1000) / STEPS,
        postgresCpuMsPer1000: (c.postgresCpuMs * 1000) / STEPS,
      };
    };

    const systems: Record<FloorSystem, () => Promise<Window>> = {
      bare_appends: () =>
        measure(
          async () => {},
          () => twoEventsPerStep(["BenchFloorStarted", "BenchFloorCompleted"], () => crypto.randomUUID()),
        ),
      projected_appends: async () => {
        const stepIds = new Map<string, string>();
        return measure(
          async () => {
            await scheduleNoopSteps(
              ctx.store,
              sessions.map((s) => ({ sessionId: s.id, remaining: 0 })),
              benchActor,
              8,
            );
            const pending = await ctx.pool.query<{ id: string; session_id: string }>(
              "SELECT id, session_id FROM steps WHERE kind = $1 AND state = 'pending'",
              [NOOP_KIND],
            );
            for (const row of pending.rows) stepIds.set(row.session_id, row.id);
            if (stepIds.size !== sessions.length) throw new Error(`step_floor: ${stepIds.size} pending steps, expected ${sessions.length}`);
          },
          () => twoEventsPerStep(["StepStarted", "StepCompleted"], (sessionId) => stepIds.get(sessionId)!),
        );
      },
      start_with_result: () =>
        measure(
          async () => {},
          () => oneEventPerStep(),
        ),
      graphile_worker: async () => {
        const pool = createPool(ctx.url, WRITERS + 4, { applicationName: "bench-floor-graphile" });
        try {
          return await measure(
            () => addNoopJobs(utils, STEPS, 0),
            async () => {
              const worker = await startGraphileWorker(pool, WRITERS, { [GRAPHILE_NOOP_TASK]: noopTask });
              let completed = 0;
              worker.events.on("job:complete", () => {
                completed++;
              });
              await waitUntil("step_floor: graphile-worker's jobs", async () => completed >= STEPS, RUN_TIMEOUT_MS, 2);
              await worker.stop();
              await waitUntil(
                "step_floor: graphile-worker's queue empty",
                async () => (await noopJobsLeft(counters.connection)) === 0,
                RUN_TIMEOUT_MS,
                2,
              );
            },
          );
        } finally {
          await pool.end();
        }
      },
    };

    const order: FloorSystem[] = ["bare_appends", "projected_appends", "graphile_worker", "start_with_result"];
    const rounds: Record<FloorSystem, Window[]> = { bare_appends: [], projected_appends: [], graphile_worker: [], start_with_result: [] };
    try {
      for (let r = 0; r < ROUNDS; r++) {
        for (const name of r % 2 === 0 ? order : [...order].reverse()) rounds[name].push(await systems[name]());
      }
    } finally {
      await writers.end().catch(() => {});
      await counters.close();
      await Promise.resolve(utils.release()).catch(() => {});
    }
    ctx.note("step_floor", { steps: STEPS, writers: WRITERS, rounds: ROUNDS, per_round: rounds });

    const med = (name: FloorSystem, pick: (w: Window) => number) => median(rounds[name].map(pick));
    const figure = (name: FloorSystem) => ({
      per_s: round(
        med(name, (w) => w.perSecond),
        0,
      ),
      statements_per_step: round(
        med(name, (w) => w.statements),
        2,
      ),
      wal_bytes_per_step: round(
        med(name, (w) => w.walBytes),
        0,
      ),
      cpu_ms_per_1000: {
        client: round(
          med(name, (w) => w.clientCpuMsPer1000),
          0,
        ),
        postgres: round(
          med(name, (w) => w.postgresCpuMsPer1000),
          0,
        ),
      },
    });
    const cpu = (name: FloorSystem) => med(name, (w) => w.clientCpuMsPer1000 + w.postgresCpuMsPer1000);
    const wal = (name: FloorSystem) => med(name, (w) => w.walBytes);
    const result: BenchReportFigures["step_cost_floor"] = {
      bare_appends: figure("bare_appends"),
      projected_appends: figure("projected_appends"),
      graphile_worker: figure("graphile_worker"),
      start_with_result: figure("start_with_result"),
      start_with_result_vs_bare: {
        wal: round(wal("start_with_result") / wal("bare_appends"), 2),
        cpu: round(cpu("start_with_result") / cpu("bare_appends"), 2),
      },
      wal_ratio_bare: round(wal("bare_appends") / wal("graphile_worker"), 2),
      wal_ratio_projected: round(wal("projected_appends") / wal("graphile_worker"), 2),
      cpu_ratio_bare: round(cpu("bare_appends") / cpu("graphile_worker"), 2),
      cpu_ratio_projected: round(cpu("projected_appends") / cpu("graphile_worker"), 2),
    };
    return { step_cost_floor: result };
  },
};
