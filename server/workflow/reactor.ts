// Connects the runner to the engine: when a step's result is recorded, the session's
// workflow decides what happens next inside the same transaction (a result and its
// consequences commit together, or not at all).
import type { Queryable, Tx } from "../db/pool";
import { getBlob } from "../events/blobs";
import { isWorkflowStepOutput } from "../events/step-contract";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import { stepOutcomeOf, type StepOutcome } from "../events/step-outcome";
import type { TaskCommand } from "./commands";
import { decideContext, definitionFor } from "./context";
import { decide } from "./decide";
import { taskCommands } from "./task-commands";

export const WORKFLOW_ACTOR = { kind: "system", id: "workflow" } as const;

/** The workflow's command for a step's final outcome (its output's texts read from their blobs), null when it has no say. */
async function commandOf(db: Queryable, outcome: StepOutcome): Promise<TaskCommand | null> {
  if (outcome.type === "StepFailed") {
    const { stepId, attempt, errorClass, message } = outcome.data;
    return { type: "StepGaveUp", stepId, attempt, errorClass, message };
  }
  const { output } = outcome.data;
  // Only the workflow's own steps (agent, commands) have a say in the workflow.
  if (!isWorkflowStepOutput(output)) return null;
  const rawText = output.kind === "agent" ? (await getBlob(db, output.raw.blob)).content.toString("utf8") : null;
  // A staged draft's JSON artifacts are read for the rules (markdown is stored, not read).
  const artifactTexts: Record<string, string> = {};
  for (const a of output.kind === "agent" ? (output.forge?.artifacts ?? []) : []) {
    if (a.path.endsWith(".json")) artifactTexts[a.path] = (await getBlob(db, a.blob.blob)).content.toString("utf8");
  }
  return { type: "StepSucceeded", stepId: outcome.data.stepId, attempt: outcome.data.attempt, output, rawText, artifactTexts };
}

/** The workflow's decision, appended as the workflow's, caused by `outcome`, in the outcome's transaction; what it appended. */
async function decideOn(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  outcome: RecordedEvent,
  command: (db: Queryable) => Promise<TaskCommand | null>,
): Promise<NewEvent[]> {
  const metadata = { actor: WORKFLOW_ACTOR, correlationId: outcome.metadata.correlationId, causationId: outcome.eventId };
  const handled = await taskCommands.handle(
    store,
    sessionId,
    async (state, at) => {
      // A session no longer running (finished, cancelled) has nothing to decide.
      if (state.status !== "active") return [];
      const decided = await command(at.db);
      return decided ? decide(state, decided, decideContext(definitionFor(state))) : [];
    },
    metadata,
    { tx },
  );
  return handled.events;
}

/** Called by the runner inside the transaction that recorded a step outcome; what the workflow appended. */
export async function reactToStepOutcome(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]): Promise<NewEvent[]> {
  const outcome = stepOutcomeOf(recorded, { final: true });
  if (!outcome) return [];
  return decideOn(tx, store, sessionId, outcome, (db) => commandOf(db, outcome));
}

/**
 * When reacting to a step's outcome failed (a defect, recorded by the runner with the
 * outcome in a transaction of its own): the session ends as if the step had given up, with
 * the reason, rather than waiting for a step nobody will schedule.
 */
export async function reactToReactionFailure(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  recorded: RecordedEvent[],
  message: string,
): Promise<void> {
  const outcome = stepOutcomeOf(recorded, { final: false });
  if (!outcome) return;
  const { stepId, attempt } = outcome.data;
  await decideOn(tx, store, sessionId, outcome, async () => ({
    type: "StepGaveUp",
    stepId,
    attempt,
    errorClass: "internal_error",
    message,
  }));
}
