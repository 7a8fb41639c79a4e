// Projection: the `steps` table, derived from Step* events, doubling as the dispatch
// queue. Its updates carry the fencing rule: a result is accepted only from the attempt
// that currently holds the step, otherwise the whole append rolls back.
//
// It is applied by the database (migration 20261126085841_live_notify_and_steps_in_database):
// a trigger on `events` runs `catcafe_apply_step_event` for each appended Step* event inside
// the append statement, so a step's claim, result or schedule is one statement, not an
// append plus an update (docs/scaling.md). A rebuild calls the same function for every recorded
// Step* event. A refusal is SQLSTATE CCS01, turned here into StaleAttemptError.
import type pg from "pg";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import type { Projection } from "../events/projection";

export const STEPS_CHANNEL = "catcafe_steps";
/** Payload: the id of a step an operator cancelled; its runner aborts it at once. */
export const CANCEL_CHANNEL = "catcafe_cancel";

/** The SQLSTATE `catcafe_apply_step_event` raises when an attempt no longer holds its step. */
const REFUSED = "CCS01";

export class StaleAttemptError extends AppError {
  constructor(stepId: string, attempt: number, what: string) {
    super("CONFLICT", `step ${stepId}: ${what} from attempt ${attempt} rejected: that attempt no longer holds the step`, {
      stepId,
      attempt,
    });
  }
}

/** The database's refusal of a Step* event as a StaleAttemptError; null for any other error. */
export function staleAttemptOf(err: unknown): StaleAttemptError | null {
  const db = err as pg.DatabaseError | undefined;
  if (db?.code !== REFUSED) return null;
  const detail = JSON.parse(db.detail ?? "{}") as { stepId?: string; attempt?: number; what?: string };
  return new StaleAttemptError(detail.stepId ?? "?", detail.attempt ?? 0, detail.what ?? "event");
}

const HANDLED = ["StepScheduled", "StepStarted", "StepCompleted", "StepFailed", "StepReleased", "StepCancelled"] as const;

export const stepsProjection: Projection = {
  name: "steps",
  handles: HANDLED,
  tables: ["steps"],
  // The dispatcher extends leases by heartbeat; only the claim-time value is in events, so
  // a rebuild keeps the live value (rebuild.ts) rather than making running steps look expired.
  operationalColumns: { steps: ["lease_expires_at"] },
  inDatabase: { refusal: staleAttemptOf },
  async apply(tx, events, mode) {
    // Live, the trigger has applied these already; only a rebuild gets here.
    if (mode === "live") return;
    const steps = events.filter((e) => (HANDLED as readonly string[]).includes(e.type));
    if (steps.length === 0) return;
    try {
      await tx.query(
        `SELECT catcafe_apply_step_event(e.type, e.stream_id, e.data, e.recorded_at, false)
         FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::timestamptz[]) WITH ORDINALITY AS e(type, stream_id, data, recorded_at, n)
         ORDER BY e.n`,
        [steps.map((e) => e.type), steps.map((e) => e.streamId), steps.map((e) => JSON.stringify(e.data)), steps.map((e) => e.recordedAt)],
      );
    } catch (err) {
      throw staleAttemptOf(err) ?? err;
    }
  },
};

/** Steps waiting and running, by kind: the queue's depth, read at scrape time (docs/operations.md, "Metrics"). */
export async function stepsQueueDepth(db: Queryable): Promise<{ kind: string; pending: number; running: number }[]> {
  const { rows } = await db.query<{ kind: string; pending: number; running: number }>({
    name: "catcafe_steps_queue_depth",
    text: `SELECT kind, count(*) FILTER (WHERE state = 'pending')::int AS pending, count(*) FILTER (WHERE state = 'running')::int AS running
           FROM steps WHERE finished_at IS NULL GROUP BY kind`,
  });
  return rows;
}
