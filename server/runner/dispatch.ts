// Step dispatch on Postgres: schedule, claim (an event, under an advisory lock; the attempt
// number is the fencing token), heartbeat, and record results only from the attempt holding
// the lease. Lost runners and shutdown releases are not charged to the step.
import type { Db, Queryable, Tx } from "../db/pool";
import { isConnectionError, withTransaction } from "../db/pool";
import type { ErrorClass } from "../errors";
import type { Actor } from "../events/catalog";
import type { AppendMetadata, NewEvent, RecordedEvent } from "../events/types";
import { DEFAULT_STEP_TIMEOUT_MS } from "../workflow/context";
import { timeOrderedId } from "../events/ids";
import { recordEventsAppended, recordStepPickup } from "../metrics/registry";
import { tracingOn } from "../tracing/sdk";
import type { OutcomeStep } from "../events/step-outcome";
import { notifyWatchersSql, type EventStore } from "../events/store";
import { STEPS_CHANNEL, StaleAttemptError } from "./steps-projection";

export interface ClaimedStep {
  id: string;
  sessionId: string;
  kind: string;
  input: unknown;
  attempt: number;
  maxAttempts: number;
  timeoutMs: number;
  /** Waits before the 2nd, 3rd, ... attempt (the last repeats); empty: the runner's default. */
  backoffMs: number[];
  leaseExpiresAt: string;
  /** True when this claim took the step over from a runner whose lease expired. */
  reclaimed: boolean;
  /** The trace the command that scheduled it ran in (its StepScheduled's metadata), read by the claim while tracing is on. */
  traceparent?: string;
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
  const { sessionId, ...step } = input;
  const [stepId] = await scheduleSteps(store, sessionId, [step], metadata);
  return stepId!;
}

/**
 * Schedules many steps of one session at once (a fan-out: a vote's ballots, parallel
 * stages): one append of their StepScheduled events, so one statement queues them all
 * (the steps projection's trigger) and one wake-up reaches the runners. Returns their ids.
 */
export async function scheduleSteps(
  store: EventStore,
  sessionId: string,
  steps: readonly Omit<ScheduleStepInput, "sessionId">[],
  metadata: AppendMetadata,
): Promise<string[]> {
  const ids = steps.map((s) => s.stepId ?? timeOrderedId());
  await store.append(
    sessionId,
    "any",
    steps.map((s, i) => ({
      type: "StepScheduled",
      data: {
        stepId: ids[i],
        kind: s.kind,
        input: s.input,
        timeoutMs: s.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
        maxAttempts: s.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      },
    })),
    metadata,
  );
  return ids;
}

export interface ClaimOptions {
  runnerId: string;
  leaseMs: number;
  /** Base delay before an expired lease is taken over, doubled per loss (capped at 30 s). */
  reclaimBackoffMs: number;
  /** What the runner can run; absent: anything (a runner that does not report it). */
  capabilities?: ClaimCapabilities;
}

/**
 * What a runner can run, as its claim passes it to `catcafe_pick_step` (docs/scaling.md,
 * "Which runner runs a step"); null in a field: not known, no step is refused for it.
 */
export interface ClaimCapabilities {
  /** The registered repoPaths it has clones of. */
  repos: readonly string[] | null;
  /** The agent CLI kinds it found supported. */
  clis: readonly string[] | null;
  labels: readonly string[];
}

/**
 * A step whose runner vanished is taken over at most this many times: a lost runner is not
 * the step's fault (test commands, with one attempt, are re-run too), but a step that
 * keeps killing its runner must end.
 */
export const MAX_LOST_ATTEMPTS = 10;

interface ClaimRow {
  id: string;
  session_id: string;
  kind: string;
  input: unknown;
  attempt: number;
  max_attempts: number;
  timeout_ms: number;
  backoff_ms: number[] | null;
  reclaimed: boolean;
  lease_expires_at: string;
  pickup_ms: number | null;
  traceparent: string | null;
}

/** Milliseconds in UTC with a Z, as Date.toISOString writes them (the event's schema wants an ISO time). */
const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * The claim in one statement (no transaction around it): `catcafe_pick_step` (migration
 * 20261126085841) picks a step that can be taken (pending first, oldest first; else one
 * whose lease expired long enough ago) under a transaction advisory lock, re-read after the
 * lock so that a step another runner took meanwhile is passed over; then its StepStarted is
 * appended, whose trigger moves the step to running with the new attempt
 * (./steps-projection.ts). Advisory locks rather than FOR UPDATE: the session stream's row
 * must be the statement's first write (see EventStore.appendInTx). Should the step still
 * have changed under us, the trigger's fence refuses it (StaleAttemptError) and the whole
 * statement rolls back. The event is built here in SQL; its shape and summary are the
 * catalog's StepStarted (runner.int reads it back through the registry), its metadata stored as
 * the store stores a lone event's (storedMetadata in ../events/types.ts: no correlation of its own,
 * no empty causation, no default version);
 * `reclaimed` only when true (absent is false), as every byte of a step's events is WAL.
 * $1 reclaim backoff, $2 max lost, $3 lease ms, $4 runner id, $5 StepStarted's schema version,
 * $6 the event's id (time-ordered, see timeOrderedId); $7 the registered repoPaths the runner
 * has clones of, $8 the agent CLIs it has (NULL: any), $9 its labels: the pick
 * (migration 20261129024922) passes over steps that need what the runner lacks and steps it
 * released as unable. `pickup_ms` reads the row as the statement's snapshot saw it (the trigger's
 * change is not visible to it): since when the step was claimable, for the pickup histogram.
 */
const CLAIM_SQL = `WITH pick AS MATERIALIZED (SELECT * FROM catcafe_pick_step($1, $2, $4, $7, $8, $9)),
  bump AS (
    UPDATE streams s SET version = s.version + 1, updated_at = now() FROM pick WHERE s.id = pick.session_id
    RETURNING s.version, to_char((now() + $3 * interval '1 millisecond') AT TIME ZONE 'UTC', ${ISO_MS}) AS lease_expires_at),
  ins AS (
    INSERT INTO events (event_id, stream_id, version, type, summary, data, metadata)
    SELECT $6::uuid, pick.session_id, bump.version, 'StepStarted',
           'Step started (attempt ' || pick.attempt || ') on runner ' || $4::text,
           jsonb_build_object('stepId', pick.id, 'attempt', pick.attempt, 'runnerId', $4::text, 'leaseExpiresAt', bump.lease_expires_at)
             || CASE WHEN pick.reclaimed THEN '{"reclaimed": true}'::jsonb ELSE '{}'::jsonb END,
           jsonb_build_object('actor', jsonb_build_object('kind', 'runner', 'id', $4::text))
             || CASE WHEN $5::int = 1 THEN '{}'::jsonb ELSE jsonb_build_object('schemaVersion', $5::int) END
    FROM pick, bump RETURNING stream_id)
  SELECT pick.id, pick.session_id, pick.kind, pick.input, pick.attempt, pick.max_attempts, pick.timeout_ms, pick.backoff_ms,
         pick.reclaimed, bump.lease_expires_at, ${notifyWatchersSql("ins.stream_id")} AS notified,
         (SELECT extract(epoch FROM clock_timestamp() - s.available_at)::float8 * 1000 FROM steps s
          WHERE s.id = pick.id AND s.state = 'pending') AS pickup_ms,
         CASE WHEN $10::boolean THEN
           (SELECT e.metadata->>'traceparent' FROM events e
            WHERE e.type = 'StepScheduled' AND e.metadata ? 'traceparent' AND e.data->>'stepId' = pick.id::text
              AND e.stream_id = pick.session_id LIMIT 1)
         END AS traceparent
  FROM pick, bump, ins`;

/**
 * Takes one step that can be taken and records the claim as its StepStarted event, in one
 * statement: every claim is an event, so a rebuild reproduces the queue exactly, and the
 * work starts one commit after it was scheduled. Leases use the database clock.
 */
export async function claimNextStep(store: EventStore, opts: ClaimOptions, db: Queryable = store.pool): Promise<ClaimedStep | null> {
  for (let tries = 0; tries < 3; tries++) {
    let row: ClaimRow | undefined;
    try {
      const claimed = await store.refusedByProjection(() =>
        db.query<ClaimRow>({
          name: "catcafe_claim_step",
          text: CLAIM_SQL,
          values: [
            opts.reclaimBackoffMs,
            MAX_LOST_ATTEMPTS,
            opts.leaseMs,
            opts.runnerId,
            store.registry.definition("StepStarted").version,
            timeOrderedId(),
            opts.capabilities?.repos ?? null,
            opts.capabilities?.clis ?? null,
            opts.capabilities?.labels ?? [],
            tracingOn(),
          ],
        }),
      );
      row = claimed.rows[0];
    } catch (err) {
      // Another runner took it since this statement's snapshot: look again.
      if (err instanceof StaleAttemptError) continue;
      throw err;
    }
    if (!row) return null;
    // The claim is an append too (StepStarted), made here in SQL rather than by the store.
    recordEventsAppended([{ category: "step", type: "StepStarted" }]);
    if (row.pickup_ms !== null) recordStepPickup(row.kind, Math.max(0, row.pickup_ms) / 1000);
    return {
      id: row.id,
      sessionId: row.session_id,
      kind: row.kind,
      input: row.input,
      attempt: row.attempt,
      maxAttempts: row.max_attempts,
      timeoutMs: row.timeout_ms,
      backoffMs: row.backoff_ms ?? [],
      leaseExpiresAt: row.lease_expires_at,
      reclaimed: row.reclaimed,
      ...(row.traceparent ? { traceparent: row.traceparent } : {}),
    };
  }
  return null;
}

/**
 * The outcome transaction's first statement: steps it schedules do not NOTIFY in it
 * (catcafe_apply_step_event, migration 20261129094500); {@link wakeStepRunners} rings after its
 * COMMIT instead. A transaction that NOTIFYs takes a database-wide lock at commit and holds it
 * through its WAL flush: every result that scheduled its session's next step committed one at
 * a time (docs/scaling.md, "LangGraph side by side").
 */
const WAKE_AFTER_COMMIT = {
  name: "catcafe_steps_wake_after_commit",
  text: "SELECT set_config('catcafe.steps_wake', 'after_commit', true)",
};

/**
 * Wakes idle runners (the steps channel's payload-free doorbell) in a transaction of its own
 * that writes nothing and, being only a doorbell, waits for no WAL flush (a NOTIFY gives its
 * transaction an id, whose commit would otherwise be flushed under the NOTIFY lock). Sent
 * right behind an outcome's COMMIT on the same connection, so it rings after the steps it
 * announces are visible. Lost with its connection, the runners' fallback poll finds them.
 */
export async function wakeStepRunners(db: Queryable): Promise<void> {
  await db
    .query({
      name: "catcafe_wake_step_runners",
      text: `SELECT set_config('synchronous_commit', 'off', true), pg_notify('${STEPS_CHANNEL}', '')`,
    })
    .catch(() => {});
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

/**
 * Runs inside the outcome's transaction (e.g. the workflow deciding the next step). `step` is
 * the kind and input of the step the outcome belongs to, so that the reaction can be looked up
 * by kind (./step-kinds.ts) without reading the row again.
 */
export type OutcomeReactor = (tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[], step: OutcomeStep) => Promise<void>;

/**
 * What the reactor does when reacting failed (a defect, not a stale attempt): decide as if
 * the step had given up with `message`, in a transaction of its own with the outcome, so
 * the session ends visibly instead of waiting for a step that nobody will schedule.
 */
export type ReactionFallback = (
  tx: Tx,
  store: EventStore,
  sessionId: string,
  recorded: RecordedEvent[],
  message: string,
  step: OutcomeStep,
) => Promise<void>;

export type StepOutcome =
  | { kind: "completed"; output: unknown }
  | { kind: "failed"; errorClass: ErrorClass; message: string; retryable: boolean; retryAfterMs?: number; unrunnable?: true }
  | { kind: "released"; reason: string; unable?: { runnerId: string; host: string; missing: string } };

/** The runner's default backoff before retrying a failed attempt: 1 s, 2 s, 4 s, ... (capped at 60 s). */
export function retryDelayMs(attempt: number, baseMs = 1000): number {
  return Math.min(baseMs * 2 ** (attempt - 1), 60_000);
}

export interface RetryPolicy {
  /** The runner's default backoff base, for steps scheduled without their own backoff. */
  baseMs?: number;
  /** The step's own waits (its session's settings): the wait after attempt n is [n - 1], the last repeats. */
  backoffMs?: readonly number[];
  /** A provider's Retry-After: waited when longer than the backoff. */
  retryAfterMs?: number;
}

/** The wait after `attempt` failed: the step's backoff or the runner's, or the provider's Retry-After when that is longer. */
export function retryWaitMs(attempt: number, policy: RetryPolicy = {}): number {
  const own = policy.backoffMs?.length ? policy.backoffMs[Math.min(attempt, policy.backoffMs.length) - 1]! : undefined;
  return Math.max(own ?? retryDelayMs(attempt, policy.baseMs), policy.retryAfterMs ?? 0);
}

export interface RecordOptions {
  retryBaseMs?: number;
  react?: OutcomeReactor;
  onReactionError?: ReactionFallback;
  /** Record only if the step's lease has expired (the sweeper's check, repeated in the transaction). */
  onlyIfExpired?: boolean;
  /** Issued on the outcome's connection right behind its COMMIT (see TransactionOptions.behind): the runner's next claim. */
  behind?: (db: Tx) => Promise<void>;
}

/**
 * The attempt an outcome is recorded for. A claimed step (ClaimedStep) also brings its session,
 * kind and input: its completion then needs nothing from the step's row.
 */
export interface OutcomeAttempt {
  id: string;
  attempt: number;
  sessionId?: string;
  kind?: string;
  input?: unknown;
}

/**
 * Records what happened to an attempt, in one transaction with the fencing check.
 * Returns false (and records nothing) when the attempt no longer holds the step; any other
 * error is thrown (the caller retries while the database is away).
 */
export async function recordStepOutcome(
  store: EventStore,
  step: OutcomeAttempt,
  outcome: StepOutcome,
  actor: Actor,
  options: RecordOptions = {},
): Promise<boolean> {
  const record = (outcome: StepOutcome, reaction: "react" | { fallback: string }) => {
    // Steps the reaction schedules wake the runners after the COMMIT, not in it (wakeStepRunners).
    let scheduled = false;
    return withTransaction(
      store.pool,
      async (tx) => {
        // Pipelined with BEGIN, before the first append: no round trip of its own.
        const deferred = tx.query(WAKE_AFTER_COMMIT);
        deferred.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
        const unwatch = store.watchAppends(tx, (events) => {
          if (events.some((e) => e.type === "StepScheduled")) scheduled = true;
        });
        try {
          await react(tx);
        } finally {
          unwatch();
        }
        await deferred;
      },
      {
        behind: async (db) => {
          // The wake first, then the runner's next claim, both right behind the COMMIT.
          const woken = scheduled ? wakeStepRunners(db) : undefined;
          await options.behind?.(db);
          await woken;
        },
      },
    );

    async function react(tx: Tx): Promise<void> {
      let sessionId: string;
      let kindAndInput: OutcomeStep;
      let event: NewEvent;
      if (outcome.kind === "completed" && step.sessionId && step.kind !== undefined && !options.onlyIfExpired) {
        // A completion from the runner holding the step needs nothing from its row: the
        // append's fence (the trigger) checks the attempt.
        sessionId = step.sessionId;
        kindAndInput = { kind: step.kind, input: step.input };
        event = { type: "StepCompleted", data: { stepId: step.id, attempt: step.attempt, output: outcome.output } };
      } else {
        // Anything else reads the row first: its session, its kind and input (for the
        // reaction), and what a retry needs.
        const current = (
          await tx.query<StepRetryFacts & OutcomeStep & { session_id: string }>(
            `SELECT session_id, kind, input, max_attempts, backoff_ms, attempt - lost - released AS charged, now() AS now FROM steps
               WHERE id = $1 AND ($2::boolean IS NOT TRUE OR lease_expires_at < now())`,
            [step.id, options.onlyIfExpired ?? false],
          )
        ).rows[0];
        if (!current) throw new StaleAttemptError(step.id, step.attempt, outcome.kind);
        sessionId = current.session_id;
        kindAndInput = { kind: current.kind, input: current.input };
        event = outcomeEvent(step, outcome, current, options.retryBaseMs);
      }
      const recorded = await store.appendInTx(tx, sessionId, "any", [event], { actor });
      if (reaction === "react") {
        await options.react?.(tx, store, sessionId, recorded.events, kindAndInput).catch((err: unknown) => {
          throw err instanceof StaleAttemptError || isConnectionError(err) ? err : new ReactionError(err);
        });
      } else await options.onReactionError?.(tx, store, sessionId, recorded.events, reaction.fallback, kindAndInput);
    }
  };
  let failure: ReactionError;
  try {
    await record(outcome, "react");
    return true;
  } catch (err) {
    if (err instanceof StaleAttemptError) return false;
    if (!(err instanceof ReactionError) || !options.onReactionError) throw err;
    failure = err;
  }
  // The step ends with the fallback: a failure is recorded as final, so that no retry runs
  // for a session that, given up, no longer waits for it.
  const final: StepOutcome = outcome.kind === "failed" ? { ...outcome, retryable: false } : outcome;
  try {
    await record(final, { fallback: failure.message });
    return true;
  } catch (err) {
    if (err instanceof StaleAttemptError) return false;
    throw err;
  }
}

/** What the step's row says about retrying it: its attempts charged so far (lost and released ones are not), its limit and backoff, the database's time. */
interface StepRetryFacts {
  max_attempts: number;
  backoff_ms: number[] | null;
  charged: number;
  now: Date;
}

function outcomeEvent(
  step: { id: string; attempt: number },
  outcome: StepOutcome,
  current: StepRetryFacts,
  retryBaseMs?: number,
): NewEvent {
  const data = { stepId: step.id, attempt: step.attempt };
  switch (outcome.kind) {
    case "completed":
      return { type: "StepCompleted", data: { ...data, output: outcome.output } };
    case "failed": {
      // Attempts lost with their runner or released at shutdown are not the step's fault.
      const retry = outcome.retryable && current.charged < current.max_attempts;
      const retryAt = retry
        ? new Date(
            current.now.getTime() +
              retryWaitMs(current.charged, {
                baseMs: retryBaseMs,
                backoffMs: current.backoff_ms ?? [],
                retryAfterMs: outcome.retryAfterMs,
              }),
          ).toISOString()
        : null;
      return {
        type: "StepFailed",
        data: {
          ...data,
          errorClass: outcome.errorClass,
          message: outcome.message,
          retryAt,
          ...(outcome.unrunnable ? { unrunnable: true } : {}),
        },
      };
    }
    case "released":
      return { type: "StepReleased", data: { ...data, reason: outcome.reason, ...(outcome.unable ? { unable: outcome.unable } : {}) } };
  }
}

/** Thrown by a reactor that failed for a reason other than fencing: the fallback takes over. */
export class ReactionError extends Error {
  constructor(readonly cause: unknown) {
    super(`the workflow could not react to the step's outcome: ${String((cause as Error)?.message ?? cause)}`);
  }
}

/**
 * Steps whose runner vanished once too often ({@link MAX_LOST_ATTEMPTS}) fail for good,
 * through the reactor: the workflow's step_failed transition ends the session visibly.
 */
export async function failExhaustedSteps(store: EventStore, actor: Actor, options: RecordOptions = {}): Promise<number> {
  const rows = await store.pool.query<{ id: string; attempt: number; lost: number }>(
    `SELECT id, attempt, lost FROM steps WHERE finished_at IS NULL AND state = 'running' AND lost >= $1 AND lease_expires_at < now() LIMIT 100`,
    [MAX_LOST_ATTEMPTS],
  );
  let failed = 0;
  for (const r of rows.rows) {
    const outcome = {
      kind: "failed" as const,
      errorClass: "internal_error" as const,
      message: `runner lost: ${r.lost + 1} runners in a row vanished while holding this step`,
      retryable: false,
    };
    if (await recordStepOutcome(store, { id: r.id, attempt: r.attempt }, outcome, actor, { ...options, onlyIfExpired: true })) failed++;
  }
  return failed;
}

/**
 * Appends progress of an attempt (streamed output, a rate-limit wait) only while that
 * attempt still holds the step: nothing from a superseded attempt, or after the session's
 * step ended (cancelled, finalized), reaches the session. False when refused.
 */
export async function appendWhileHeld(
  store: EventStore,
  step: { id: string; attempt: number; sessionId: string },
  events: NewEvent[],
  metadata: AppendMetadata,
): Promise<boolean> {
  try {
    await withTransaction(store.pool, async (tx) => {
      // The append first: the stream lock must be the transaction's first write.
      await store.appendInTx(tx, step.sessionId, "any", events, metadata);
      const held = await tx.query("SELECT 1 FROM steps WHERE id = $1 AND attempt = $2 AND state = 'running'", [step.id, step.attempt]);
      if (held.rowCount !== 1) throw new StaleAttemptError(step.id, step.attempt, events[0]?.type ?? "progress");
    });
    return true;
  } catch (err) {
    if (err instanceof StaleAttemptError) return false;
    throw err;
  }
}

/** Whether `step`'s attempt still holds it (running, this attempt): a check, not a lock. */
export async function holdsStep(db: Queryable, step: { id: string; attempt: number }): Promise<boolean> {
  const held = await db.query("SELECT 1 FROM steps WHERE id = $1 AND attempt = $2 AND state = 'running'", [step.id, step.attempt]);
  return held.rowCount === 1;
}
