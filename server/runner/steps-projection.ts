// Projection: the `steps` table, derived from Step* events, doubling as the dispatch
// queue. Its updates carry the fencing rule: a result is accepted only from the attempt
// that currently holds the step, otherwise the whole append transaction rolls back.
import { AppError } from "../errors";
import type { AppEvent } from "../events/catalog";
import type { Projection } from "../events/projection";
import type { RecordedEvent } from "../events/types";
import type { Tx } from "../db/pool";

export const STEPS_CHANNEL = "catcafe_steps";
/** Payload: the id of a step an operator cancelled; its runner aborts it at once. */
export const CANCEL_CHANNEL = "catcafe_cancel";

export class StaleAttemptError extends AppError {
  constructor(stepId: string, attempt: number, what: string) {
    super("CONFLICT", `step ${stepId}: ${what} from attempt ${attempt} rejected: that attempt no longer holds the step`, {
      stepId,
      attempt,
    });
  }
}

async function fenced(tx: Tx, stepId: string, attempt: number, what: string, text: string, values: unknown[]): Promise<void> {
  const r = await tx.query(text, values);
  if (r.rowCount !== 1) throw new StaleAttemptError(stepId, attempt, what);
}

export const stepsProjection: Projection = {
  name: "steps",
  handles: ["StepScheduled", "StepStarted", "StepCompleted", "StepFailed", "StepReleased", "StepCancelled"],
  tables: ["steps"],
  // The dispatcher extends leases by heartbeat; only the claim-time value is in events, so
  // a rebuild keeps the live value (rebuild.ts) rather than making running steps look expired.
  operationalColumns: { steps: ["lease_expires_at"] },
  async apply(tx, events, mode) {
    let scheduled = false;
    for (const e of events as (RecordedEvent & AppEvent)[]) {
      switch (e.type) {
        case "StepScheduled":
          await tx.query(
            `INSERT INTO steps (id, session_id, kind, input, state, attempt, max_attempts, timeout_ms, available_at, scheduled_at, backoff_ms)
             VALUES ($1, $2, $3, $4, 'pending', 0, $5, $6, COALESCE($7::timestamptz, $8::timestamptz), $8, COALESCE($9::int[], '{}'))`,
            [
              e.data.stepId,
              e.streamId,
              e.data.kind,
              JSON.stringify(e.data.input),
              e.data.maxAttempts,
              e.data.timeoutMs,
              e.data.availableAt ?? null,
              e.recordedAt,
              e.data.backoffMs ?? null,
            ],
          );
          scheduled = true;
          break;
        case "StepStarted":
          // The claim itself (claimNextStep appends this in the claiming transaction), live
          // and in a rebuild alike. `attempt < $2` rather than `= $2 - 1`: histories written
          // before claims were events may skip an attempt that died unrecorded.
          await fenced(
            tx,
            e.data.stepId,
            e.data.attempt,
            "start",
            `UPDATE steps SET state = 'running', attempt = $2, lease_owner = $3, lease_expires_at = $4,
                              lost = lost + CASE WHEN $5 THEN 1 ELSE 0 END
             WHERE id = $1 AND attempt < $2 AND state IN ('pending', 'running')`,
            [e.data.stepId, e.data.attempt, e.data.runnerId, e.data.leaseExpiresAt, e.data.reclaimed ?? false],
          );
          break;
        case "StepCompleted":
          await fenced(
            tx,
            e.data.stepId,
            e.data.attempt,
            "result",
            `UPDATE steps SET state = 'completed', finished_at = $3, lease_owner = NULL, lease_expires_at = NULL, error_class = NULL
             WHERE id = $1 AND attempt = $2 AND state = 'running'`,
            [e.data.stepId, e.data.attempt, e.recordedAt],
          );
          break;
        case "StepFailed":
          await fenced(
            tx,
            e.data.stepId,
            e.data.attempt,
            "failure",
            `UPDATE steps SET state = CASE WHEN $4::timestamptz IS NULL THEN 'failed'::step_state ELSE 'pending'::step_state END,
                              available_at = COALESCE($4::timestamptz, available_at),
                              finished_at = CASE WHEN $4::timestamptz IS NULL THEN $5::timestamptz END,
                              lease_owner = NULL, lease_expires_at = NULL, error_class = $3
             WHERE id = $1 AND attempt = $2 AND state = 'running'`,
            [e.data.stepId, e.data.attempt, e.data.errorClass, e.data.retryAt, e.recordedAt],
          );
          break;
        case "StepReleased":
          await fenced(
            tx,
            e.data.stepId,
            e.data.attempt,
            "release",
            `UPDATE steps SET state = 'pending', available_at = $3, lease_owner = NULL, lease_expires_at = NULL, released = released + 1
             WHERE id = $1 AND attempt = $2 AND state = 'running'`,
            [e.data.stepId, e.data.attempt, e.recordedAt],
          );
          scheduled = true;
          break;
        case "StepCancelled": {
          // Not fenced by attempt: a cancel wins over whichever attempt holds the step.
          const r = await tx.query(
            `UPDATE steps SET state = 'cancelled', finished_at = $2, lease_owner = NULL, lease_expires_at = NULL, error_class = 'cancelled'
             WHERE id = $1 AND state IN ('pending', 'running')`,
            [e.data.stepId, e.recordedAt],
          );
          if (r.rowCount === 1 && mode === "live") await tx.query("SELECT pg_notify($1, $2)", [CANCEL_CHANNEL, e.data.stepId]);
          break;
        }
        default:
          break;
      }
    }
    // Payload-free wake-up; Postgres folds identical notifications of one transaction.
    if (scheduled && mode === "live") await tx.query(`SELECT pg_notify('${STEPS_CHANNEL}', '')`);
  },
};
