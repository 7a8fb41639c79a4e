// Cat Cafe's side of the runner comparison: the no-op step (its executor returns at once),
// the reactor that schedules a session's next step in the outcome's transaction (as the
// workflow does), how the bench schedules a batch of them, and what is left to do.
import type pg from "pg";
import type { Actor } from "../../server/events/catalog";
import { timeOrderedId } from "../../server/events/ids";
import type { EventStore } from "../../server/events/store";
import type { NewEvent } from "../../server/events/types";
import { DEFAULT_MAX_ATTEMPTS, scheduleStep, scheduleSteps, type OutcomeReactor } from "../../server/runner/dispatch";
import type { StepExecutor } from "../../server/runner/executors";
import { DEFAULT_STEP_TIMEOUT_MS } from "../../server/workflow/context";

export const NOOP_KIND = "bench_noop";
const chainActor: Actor = { kind: "system", id: "bench-chain" };

/** A no-op step's input: how many more steps its session runs after this one. */
export interface NoopInput {
  remaining: number;
}

export interface NoopStep {
  sessionId: string;
  remaining: number;
}

/** Returns at once; the output carries `remaining` so that the reactor reads nothing. */
export const noopExecutor: StepExecutor = async (step) => ({ remaining: (step.input as NoopInput).remaining });

function stepScheduled(remaining: number): NewEvent {
  return {
    type: "StepScheduled",
    data: {
      stepId: timeOrderedId(),
      kind: NOOP_KIND,
      input: { remaining } satisfies NoopInput,
      timeoutMs: DEFAULT_STEP_TIMEOUT_MS,
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
    },
  };
}

/** In the outcome's transaction: the session's next step, while it has any left. */
export const chainReactor: OutcomeReactor = async (tx, store, sessionId, recorded) => {
  const completed = recorded.find((e) => e.type === "StepCompleted");
  const remaining = (completed?.data as { output?: Partial<NoopInput> } | undefined)?.output?.remaining ?? 0;
  if (remaining > 0) await store.appendInTx(tx, sessionId, "any", [stepScheduled(remaining - 1)], { actor: chainActor });
};

/**
 * How a batch of steps on sessions of their own is scheduled: one `scheduleStep` (one append,
 * one statement) per step, since an append is per stream. Many steps of ONE session (a
 * fan-out) are one append: {@link scheduleNoopFanout}.
 */
export const SCHEDULE_API = "scheduleStep per session (one statement each)";

/** A fan-out: `perSession` steps on each session, each session's in one append (`scheduleSteps`). */
export async function scheduleNoopFanout(
  store: EventStore,
  sessionIds: readonly string[],
  perSession: number,
  actor: Actor,
): Promise<void> {
  for (const sessionId of sessionIds) {
    await scheduleSteps(
      store,
      sessionId,
      Array.from({ length: perSession }, () => ({ kind: NOOP_KIND, input: { remaining: 0 } satisfies NoopInput })),
      { actor },
    );
  }
}

export async function scheduleNoopSteps(store: EventStore, steps: readonly NoopStep[], actor: Actor, callers = 1): Promise<void> {
  // `callers` > 1: that many callers at once, each scheduling its share one after the other
  // (only to fill a queue faster where the scheduling itself is not measured).
  let next = 0;
  const caller = async () => {
    while (next < steps.length) {
      const s = steps[next++]!;
      await scheduleStep(
        store,
        { sessionId: s.sessionId, kind: NOOP_KIND, input: { remaining: s.remaining } satisfies NoopInput },
        { actor },
      );
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
}

/** No-op steps not finished yet (pending or running). */
export async function noopStepsLeft(db: pg.Pool | pg.ClientBase): Promise<number> {
  const r = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM steps WHERE kind = $1 AND state IN ('pending', 'running')", [
    NOOP_KIND,
  ]);
  return r.rows[0]!.n;
}

/** Cancels whatever no-op steps a failed run left, so that no later runner picks them up. */
export async function cancelNoopSteps(store: EventStore, actor: Actor): Promise<number> {
  const r = await store.pool.query<{ id: string; session_id: string }>(
    "SELECT id, session_id FROM steps WHERE kind = $1 AND state IN ('pending', 'running')",
    [NOOP_KIND],
  );
  for (const row of r.rows) await store.append(row.session_id, "any", [{ type: "StepCancelled", data: { stepId: row.id } }], { actor });
  return r.rowCount ?? 0;
}
