// What every runner of the application executes and how results are reacted to: the workflow
// steps (agents, test commands), the conversations' steps (agent calls, mode timers) and
// deliveries (push, pull request, merge),
// each outcome decided on in its own transaction by the workflow or the conversation it
// belongs to. The runner process (runner/main.ts) and the tests' runners are composed here.
import { isConnectionError, type Db } from "./db/pool";
import { logger } from "./log";
import type { EventStore } from "./events/store";
import type { RecordedEvent } from "./events/types";
import type { Tx } from "./db/pool";
import { conversationExecutors } from "./conversations/steps";
import { CONVERSATION_STEPS, reactToConversationFailure, reactToConversationStep } from "./conversations/reactor";
import { isWorkflowStepOutput } from "./events/step-contract";
import { stepOutcomeOf, type OutcomeStep, type StepOutcome } from "./events/step-outcome";
import { reactToDeliveryFailure, reactToDeliveryStep } from "./delivery/reactor";
import { deliverOnApproval } from "./delivery/service";
import { DELIVER_STEP, deliveryExecutor } from "./delivery/steps";
import type { StepExecutor } from "./runner/executors";
import { workflowExecutors } from "./runner/workflow-executors";
import { reactToReactionFailure, reactToStepOutcome } from "./task-engine";

export interface AppExecutorDeps {
  pool: Db;
  store: EventStore;
  workspacesRoot: string;
  repositoryPath?: (repoPath: string) => string;
}

/** The executors of the workflow's, the conversations' and the deliveries' steps. */
export function appExecutors(deps: AppExecutorDeps): Record<string, StepExecutor> {
  return { ...workflowExecutors(deps), ...conversationExecutors(deps), [DELIVER_STEP]: deliveryExecutor(deps) };
}

/**
 * The step of an outcome, when it is not the workflow's: a workflow step's completion says so
 * itself (its output's kind), so the hot path reads nothing more; anything else (a
 * conversation's step, a delivery, a failure) is looked up once in the steps table.
 */
async function stepOf(tx: Tx, outcome: StepOutcome): Promise<OutcomeStep | null> {
  if (outcome.type === "StepCompleted" && isWorkflowStepOutput(outcome.data.output)) return null;
  const row = await tx.query<OutcomeStep>("SELECT kind, input FROM steps WHERE id = $1", [outcome.data.stepId]);
  return row.rows[0] ?? null;
}

/** A step's outcome decided on by its conversation, recorded by its delivery, else decided on by its session's workflow. */
export async function reactToAppStep(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]): Promise<void> {
  const outcome = stepOutcomeOf(recorded, { final: true });
  const step = outcome ? await stepOf(tx, outcome) : null;
  if (outcome && step && CONVERSATION_STEPS.includes(step.kind)) return reactToConversationStep(tx, store, sessionId, outcome, step);
  if (outcome && step?.kind === DELIVER_STEP) return reactToDeliveryStep(tx, store, sessionId, outcome, step);
  const appended = await reactToStepOutcome(tx, store, sessionId, recorded);
  if (appended.some((e) => e.type === "SessionFinalized")) await deliverIfAuto(tx, store, sessionId);
}

/**
 * A session that just finished approved is delivered when its project says so, in the same
 * transaction. Under a savepoint: a defect in the delivery never undoes the session's ending
 * (it is logged, and an operator can still deliver by hand).
 */
async function deliverIfAuto(tx: Tx, store: EventStore, sessionId: string): Promise<void> {
  await tx.query("SAVEPOINT auto_delivery");
  try {
    await deliverOnApproval(tx, store, sessionId);
    await tx.query("RELEASE SAVEPOINT auto_delivery");
  } catch (err) {
    await tx.query("ROLLBACK TO SAVEPOINT auto_delivery");
    if (isConnectionError(err)) throw err;
    logger.error({ err: String(err), sessionId }, "could not deliver an approved session automatically");
  }
}

/** When reacting failed (a defect): the conversation's call fails, the delivery fails, else the workflow's step gives up. */
export async function reactToAppFailure(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  recorded: RecordedEvent[],
  message: string,
): Promise<void> {
  const outcome = stepOutcomeOf(recorded, { final: false });
  const step = outcome ? await stepOf(tx, outcome) : null;
  if (outcome && step && CONVERSATION_STEPS.includes(step.kind))
    return reactToConversationFailure(tx, store, sessionId, outcome, step, message);
  if (outcome && step?.kind === DELIVER_STEP) return reactToDeliveryFailure(tx, store, sessionId, outcome, step, message);
  await reactToReactionFailure(tx, store, sessionId, recorded, message);
}
