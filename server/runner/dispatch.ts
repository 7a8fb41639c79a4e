// Step dispatch on Postgres: schedule, claim with SKIP LOCKED (the attempt number is the
// fencing token), heartbeat, and record results only from the attempt holding the lease.
import crypto from "node:crypto";
import type { Db, Tx } from "../db/pool";
import { withTransaction } from "../db/pool";
import { isAppError, type ErrorClass } from "../errors";
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import type { AppendMetadata, RecordedEvent } from "../events/types";
import { DEFAULT_STEP_TIMEOUT_MS } from "../workflow/context";
import { StaleAttemptError } from "./steps-projection";

export interface ClaimedStep {
  id: string;
  sessionId: string;
  kind: string;
  input: unknown;
  attempt: number;
  maxAttempts: number;
  timeoutMs: number;
  leaseExpiresAt: string;
  /** True when this claim took the step over from a runner whose lease expired. */
  reclaimed: boolean;
}

interface StepRow {
  id: string;
  session_id: string;
  kind: string;
  input: unknown;
  attempt: number;
  max_attempts: number;
  timeout_ms: number;
  lease_expires_at: Date;
}

export interface ScheduleStepInput {
  sessionId: string;
  kind: string;
  input: unknown;
  timeoutMs?: number;
  maxAttempts?: number;
  stepId?: string;
}

export const DEFAULT_MAX_ATTEMPTS = 3;

/** Appends StepScheduled; the steps projection queues it and wakes runners on commit. */
export async function scheduleStep(store: EventStore, input: ScheduleStepInput, metadata: AppendMetadata): Promise<string> {
  const stepId = input.stepId ?? crypto.randomUUID();
  await store.append(
    input.sessionId,
    "any",
    [
      {
        type: "StepScheduled",
        data: {
          stepId,
          kind: input.kind,
          input: input.input,
          timeoutMs: input.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
          maxAttempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        },
      },
    ],
    metadata,
  );
  return stepId;
}

function toClaimed(row: StepRow, reclaimed: boolean): ClaimedStep {
  return {
    id: row.id,
    sessionId: row.session_id,
    kind: row.kind,
    input: row.input,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    leaseExpiresAt: row.lease_expires_at.toISOString(),
    reclaimed,
  };
}

export interface ClaimOptions {
  runnerId: string;
  leaseMs: number;
  /** Base delay before an expired lease is taken over, doubled per attempt (capped at 30 s). */
  reclaimBackoffMs: number;
}

/**
 * Claims the oldest available pending step, else a step whose lease expired (after a
 * backoff). Leases are measured by the database clock, never the runner's.
 */
export async function claimNextStep(pool: Db, opts: ClaimOptions): Promise<ClaimedStep | null> {
  const pending = await pool.query<StepRow>({
    name: "catcafe_claim_pending",
    text: `UPDATE steps s SET state = 'running', attempt = s.attempt + 1, lease_owner = $1,
                              lease_expires_at = now() + $2 * interval '1 millisecond'
           FROM (SELECT id FROM steps WHERE state = 'pending' AND available_at <= now()
                 ORDER BY available_at LIMIT 1 FOR UPDATE SKIP LOCKED) c
           WHERE s.id = c.id
           RETURNING s.id, s.session_id, s.kind, s.input, s.attempt, s.max_attempts, s.timeout_ms, s.lease_expires_at`,
    values: [opts.runnerId, opts.leaseMs],
  });
  if (pending.rows[0]) return toClaimed(pending.rows[0], false);
  const expired = await pool.query<StepRow>({
    name: "catcafe_claim_expired",
    text: `UPDATE steps s SET attempt = s.attempt + 1, lease_owner = $1,
                              lease_expires_at = now() + $2 * interval '1 millisecond'
           FROM (SELECT id FROM steps
                 WHERE state = 'running' AND attempt < max_attempts
                   AND lease_expires_at + LEAST($3 * power(2, attempt - 1), 30000) * interval '1 millisecond' <= now()
                 ORDER BY lease_expires_at LIMIT 1 FOR UPDATE SKIP LOCKED) c
           WHERE s.id = c.id
           RETURNING s.id, s.session_id, s.kind, s.input, s.attempt, s.max_attempts, s.timeout_ms, s.lease_expires_at`,
    values: [opts.runnerId, opts.leaseMs, opts.reclaimBackoffMs],
  });
  return expired.rows[0] ? toClaimed(expired.rows[0], true) : null;
}

/** Extends the lease; false means this attempt lost the step (abort the work). */
export async function heartbeatStep(pool: Db, step: { id: string; attempt: number }, leaseMs: number): Promise<boolean> {
  const r = await pool.query({
    name: "catcafe_heartbeat_step",
    text: `UPDATE steps SET lease_expires_at = now() + $3 * interval '1 millisecond'
           WHERE id = $1 AND attempt = $2 AND state = 'running'`,
    values: [step.id, step.attempt, leaseMs],
  });
  return r.rowCount === 1;
}

/** Runs inside the outcome's transaction (e.g. the workflow deciding the next step). */
export type OutcomeReactor = (tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]) => Promise<void>;

export type StepOutcome =
  | { kind: "started" }
  | { kind: "completed"; output: unknown }
  | { kind: "failed"; errorClass: ErrorClass; message: string; retryable: boolean; retryAfterMs?: number }
  | { kind: "released"; reason: string };

/** Backoff before retrying a failed attempt: 1 s, 2 s, 4 s, ... (capped at 60 s). */
export function retryDelayMs(attempt: number, baseMs = 1000): number {
  return Math.min(baseMs * 2 ** (attempt - 1), 60_000);
}

/** The backoff, or the provider's Retry-After when that is longer. */
export function retryWaitMs(attempt: number, baseMs?: number, retryAfterMs?: number): number {
  return Math.max(retryDelayMs(attempt, baseMs), retryAfterMs ?? 0);
}

/**
 * Records what happened to an attempt, in one transaction with the fencing check.
 * Returns false (and records nothing) when the attempt no longer holds the step.
 */
export async function recordStepOutcome(
  store: EventStore,
  step: { id: string; attempt: number },
  outcome: StepOutcome,
  actor: Actor,
  options: { retryBaseMs?: number; react?: OutcomeReactor } = {},
): Promise<boolean> {
  try {
    await withTransaction(store.pool, async (tx) => {
      const row = await tx.query<{ session_id: string; max_attempts: number; lease_expires_at: Date | null; now: Date }>(
        "SELECT session_id, max_attempts, lease_expires_at, now() AS now FROM steps WHERE id = $1",
        [step.id],
      );
      const current = row.rows[0];
      if (!current) throw new StaleAttemptError(step.id, step.attempt, outcome.kind);
      const data = { stepId: step.id, attempt: step.attempt };
      const event = (() => {
        switch (outcome.kind) {
          case "started":
            return {
              type: "StepStarted",
              data: { ...data, runnerId: actor.id, leaseExpiresAt: (current.lease_expires_at ?? current.now).toISOString() },
            };
          case "completed":
            return { type: "StepCompleted", data: { ...data, output: outcome.output } };
          case "failed": {
            const retry = outcome.retryable && step.attempt < current.max_attempts;
            const retryAt = retry
              ? new Date(current.now.getTime() + retryWaitMs(step.attempt, options.retryBaseMs, outcome.retryAfterMs)).toISOString()
              : null;
            return { type: "StepFailed", data: { ...data, errorClass: outcome.errorClass, message: outcome.message, retryAt } };
          }
          case "released":
            return { type: "StepReleased", data: { ...data, reason: outcome.reason } };
        }
      })();
      const recorded = await store.appendInTx(tx, current.session_id, "any", [event], { actor });
      await options.react?.(tx, store, current.session_id, recorded.events);
    });
    return true;
  } catch (err) {
    if (err instanceof StaleAttemptError || isAppError(err, "NOT_FOUND")) return false;
    throw err;
  }
}

/** Steps whose runner vanished on their last allowed attempt are failed, not retried forever. */
export async function failExhaustedSteps(store: EventStore, actor: Actor): Promise<number> {
  const rows = await store.pool.query<{ id: string; attempt: number; max_attempts: number }>(
    `SELECT id, attempt, max_attempts FROM steps
     WHERE state = 'running' AND attempt >= max_attempts AND lease_expires_at < now()
     LIMIT 100`,
  );
  let failed = 0;
  for (const r of rows.rows) {
    const ok = await recordStepOutcome(
      store,
      { id: r.id, attempt: r.attempt },
      {
        kind: "failed",
        errorClass: "internal_error",
        message: `runner lost: the lease of attempt ${r.attempt} of ${r.max_attempts} expired`,
        retryable: false,
      },
      actor,
    );
    if (ok) failed++;
  }
  return failed;
}
