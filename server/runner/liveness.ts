// Runner liveness, decided in one place: a runner is live while it has not stopped and its
// last heartbeat is less than RUNNER_LIVENESS_MS old by the *database* clock (`now()`), the
// clock runners heartbeat with, so a web server with a skewed clock judges alike. Health
// (`/api/health`), the page header, the dashboard and `runners.list` all read runners here,
// with whether each runs agents sandboxed; the runner process itself (./runner.ts) writes
// their rows.
import type pg from "pg";
import type { Queryable } from "../db/pool";
import type { UnservedProject } from "./capabilities";

/** A runner whose heartbeat is older than this is not counted as live. */
export const RUNNER_LIVENESS_MS = 15_000;

/** Runners are listed while heard from in the last day: one killed with -9 never marks itself stopped. */
export const RUNNER_LISTED_FOR_MS = 24 * 60 * 60 * 1000;

/** A runner dead (stopped, or silent) this long is forgotten (forgetDeadRunners): a week. */
export const DEAD_RUNNERS_KEPT_MS = 7 * 24 * 60 * 60 * 1000;

/** `$1`: the window in milliseconds. */
export const HEARD_WITHIN_SQL = `r.stopped_at IS NULL AND r.heartbeat_at > now() - make_interval(secs => $1::double precision / 1000)`;

/**
 * Whether a runner runs agents and test commands in the bubblewrap sandbox, as it found at
 * registration (server/process/sandbox.ts): `{ on: false, reason }` says why not. The one
 * shape of it in /api/health, runners.list / runners.live, the dashboard and the CLI.
 */
export interface RunnerSandbox {
  on: boolean;
  reason: string | null;
}

export interface RunnerInfo {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: Date;
  heartbeatAt: Date;
  live: boolean;
  /** Agent CLIs this runner found on its machine at start (null until detected). */
  shells: unknown;
  shellsDetectedAt: Date | null;
  /** null: not reported (a runner older than the record of it). */
  sandbox: RunnerSandbox | null;
  /** CATCAFE_RUNNER_LABELS. */
  labels: string[];
  /** Registered projects it cannot serve, with the reason (null: not reported; docs/scaling.md). */
  unservedProjects: UnservedProject[] | null;
}

export interface RunnerList {
  /** The database clock the liveness was judged by. */
  now: Date;
  runners: RunnerInfo[];
}

export async function countLiveRunners(db: Queryable): Promise<number> {
  const result = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runners r WHERE ${HEARD_WITHIN_SQL}`, [RUNNER_LIVENESS_MS]);
  return result.rows[0]?.n ?? 0;
}

interface RunnerRow {
  now: Date;
  id: string | null;
  host: string;
  pid: number;
  version: string;
  started_at: Date;
  heartbeat_at: Date;
  live: boolean;
  shells: unknown;
  shells_detected_at: Date | null;
  sandbox_on: boolean | null;
  sandbox_reason: string | null;
  labels: string[] | null;
  unserved_repos: UnservedProject[] | null;
  capabilities_at: Date | null;
}

/**
 * Runners not stopped, oldest first: the live ones only, or every one heard from in the
 * last day (each marked live or not). One round trip, with the clock it was judged by.
 */
export async function listRunners(db: Queryable, options: { liveOnly?: boolean } = {}): Promise<RunnerList> {
  const result = await db.query<RunnerRow>(
    `WITH clock AS (SELECT now() AS now)
     SELECT clock.now, r.id, r.host, r.pid, r.version, r.started_at, r.heartbeat_at, r.shells, r.shells_detected_at,
            r.sandbox_on, r.sandbox_reason, r.labels, r.unserved_repos, r.capabilities_at, r.heartbeat_at > clock.now - make_interval(secs => $2::double precision / 1000) AS live
     FROM clock LEFT JOIN runners r ON ${HEARD_WITHIN_SQL}
     ORDER BY r.started_at, r.id`,
    [options.liveOnly ? RUNNER_LIVENESS_MS : RUNNER_LISTED_FOR_MS, RUNNER_LIVENESS_MS],
  );
  const now = result.rows[0]?.now ?? new Date();
  const runners = result.rows.flatMap((r): RunnerInfo[] =>
    r.id === null
      ? []
      : [
          {
            id: r.id,
            host: r.host,
            pid: r.pid,
            version: r.version,
            startedAt: r.started_at,
            heartbeatAt: r.heartbeat_at,
            live: r.live,
            shells: r.shells ?? null,
            shellsDetectedAt: r.shells_detected_at,
            sandbox: r.sandbox_on === null ? null : { on: r.sandbox_on, reason: r.sandbox_on ? null : r.sandbox_reason },
            labels: r.labels ?? [],
            unservedProjects: r.capabilities_at ? (r.unserved_repos ?? []) : null,
          },
        ],
  );
  return { now, runners };
}

/** Whether the runner process `pid` on `host` is registered and not stopped (`npm start` waits for its own). */
export async function isRunnerRegistered(db: Queryable | pg.Client, host: string, pid: number): Promise<boolean> {
  const result = await db.query("SELECT 1 FROM runners WHERE host = $1 AND pid = $2 AND stopped_at IS NULL", [host, pid]);
  return Boolean(result.rowCount);
}

/**
 * A step's lease, handed over at once when the runner holding it is no longer live (killed,
 * its machine gone): the step is then claimed by the next runner instead of when the lease
 * expires. The attempt stays fenced, so a late result of the dead attempt is still refused.
 */
export async function releaseOrphanedLease(
  db: Queryable,
  stepId: string,
): Promise<{ state: "running" | "released" | "queued" | "done"; attempt: number; liveRunners: number }> {
  const r = await db.query<{ state: string; attempt: number; released: boolean }>(
    `WITH step AS (
       SELECT s.id, s.state, s.attempt, s.lease_owner,
              EXISTS (SELECT 1 FROM runners r WHERE r.id = s.lease_owner AND ${HEARD_WITHIN_SQL}) AS owner_live
       FROM steps s WHERE s.id = $2
     ), released AS (
       UPDATE steps SET lease_expires_at = LEAST(steps.lease_expires_at, now())
       FROM step WHERE steps.id = step.id AND step.state = 'running' AND step.lease_owner IS NOT NULL AND NOT step.owner_live
         AND steps.attempt = step.attempt
       RETURNING steps.id
     )
     SELECT step.state, step.attempt, EXISTS (SELECT 1 FROM released) AS released FROM step`,
    [RUNNER_LIVENESS_MS, stepId],
  );
  const row = r.rows[0];
  const liveRunners = await countLiveRunners(db);
  if (!row) return { state: "done", attempt: 0, liveRunners };
  const state = row.released ? "released" : row.state === "running" ? "running" : row.state === "pending" ? "queued" : "done";
  return { state, attempt: row.attempt, liveRunners };
}

/**
 * Forgets runners dead for more than `olderThanMs` by the database clock (stopped, or not heard
 * from, that long ago): each restart adds a row, so without this the table only grows
 * (docs/operations.md, "Worktrees on every host"). The Runners page lists the last day's only,
 * and events keep the runner ids they name; a runner still holding a step's lease is kept.
 * The ids forgotten.
 */
export async function forgetDeadRunners(db: Queryable, olderThanMs: number): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `DELETE FROM runners r
     WHERE COALESCE(r.stopped_at, r.heartbeat_at) < now() - make_interval(secs => $1::double precision / 1000)
       AND r.heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)
       AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.finished_at IS NULL AND s.lease_owner = r.id AND s.state = 'running')
     RETURNING r.id`,
    [olderThanMs],
  );
  return result.rows.map((r) => r.id).sort();
}
