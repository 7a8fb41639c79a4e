// What every runner of the application executes and how results are reacted to: the workflow
// steps (agents, test commands), the conversations' steps (agent calls, mode timers) and
// deliveries (push, pull request, merge),
// each outcome decided on in its own transaction by the workflow or the conversation it
// belongs to. The runner process (runner/main.ts) and the tests' runners are composed here.
import type { Db } from "./db/pool";
import type { EventStore } from "./events/store";
import type { RecordedEvent } from "./events/types";
import type { Tx } from "./db/pool";
import { conversationExecutors } from "./conversations/steps";
import { reactToConversationFailure, reactToConversationStep } from "./conversations/reactor";
import { reactToDeliveryStep } from "./delivery/reactor";
import { DELIVER_STEP, deliveryExecutor } from "./delivery/steps";
import type { StepExecutor } from "./runner/executors";
import { workflowExecutors } from "./runner/workflow-executors";
import { reactToReactionFailure, reactToStepOutcome } from "./workflow/reactor";

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

/** A step's outcome decided on by its conversation, recorded by its delivery, else decided on by its session's workflow. */
export async function reactToAppStep(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]): Promise<void> {
  if (await reactToConversationStep(tx, store, sessionId, recorded)) return;
  if (await reactToDeliveryStep(tx, store, sessionId, recorded)) return;
  await reactToStepOutcome(tx, store, sessionId, recorded);
}

/** When reacting failed (a defect): the conversation's call fails, else the workflow's step gives up. */
export async function reactToAppFailure(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  recorded: RecordedEvent[],
  message: string,
): Promise<void> {
  if (await reactToConversationFailure(tx, store, sessionId, recorded, message)) return;
  await reactToReactionFailure(tx, store, sessionId, recorded, message);
}
