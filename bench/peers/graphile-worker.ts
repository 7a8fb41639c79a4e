// graphile-worker 0.17's side of the runner comparison, on the bench's own PostgreSQL: its
// schema, a worker with the no-op task (which adds the session's next job itself, through
// helpers.addJob, as graphile-worker applications chain work), bulk adds through addJobs,
// and what is left in its queue. Default settings otherwise: LISTEN-based wake-up,
// prepared statements, no local queue and no batched completion.
import type pg from "pg";
import { Logger, makeWorkerUtils, run, runMigrations, type Runner, type Task, type WorkerUtils } from "graphile-worker";
import type { NoopInput } from "./catcafe-steps";

export const GRAPHILE_NOOP_TASK = "bench_noop";

/** Errors only: the default logger prints a line per job, which would be measured too. */
export const quietLogger = new Logger(() => (level, message) => {
  if (level === "error") process.stderr.write(`[graphile-worker] ${message}\n`);
});

/** Installs (or upgrades) graphile-worker's schema; do it once before any worker starts. */
export async function migrateGraphileWorker(url: string): Promise<void> {
  await runMigrations({ connectionString: url, logger: quietLogger });
}

/** The no-op task: returns at once, after adding its session's next job while any are left. */
export const noopTask: Task = async (payload, helpers) => {
  const { remaining } = payload as NoopInput;
  if (remaining > 0) await helpers.addJob(GRAPHILE_NOOP_TASK, { remaining: remaining - 1 } satisfies NoopInput);
};

export function startGraphileWorker(pgPool: pg.Pool, concurrency: number, taskList: Record<string, Task>): Promise<Runner> {
  return run({ pgPool, concurrency, noHandleSignals: true, logger: quietLogger, taskList });
}

export function graphileUtils(url: string): Promise<WorkerUtils> {
  return makeWorkerUtils({ connectionString: url, logger: quietLogger });
}

/** Adds `count` no-op jobs in one call (addJobs: one statement). */
export async function addNoopJobs(utils: WorkerUtils, count: number, remaining: number): Promise<void> {
  await utils.addJobs(
    Array.from({ length: count }, () => ({ identifier: GRAPHILE_NOOP_TASK, payload: { remaining } satisfies NoopInput })),
  );
}

/** Jobs of the no-op task still in the queue (graphile-worker deletes a job when it completes). */
export async function noopJobsLeft(db: pg.Pool | pg.ClientBase): Promise<number> {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j
     JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = $1`,
    [GRAPHILE_NOOP_TASK],
  );
  return r.rows[0]!.n;
}
