// Connects the runner to the engine: when a step's result is recorded, the session's
// workflow decides what happens next inside the same transaction (a result and its
// consequences commit together, or not at all), through the command handler
// (events/command-handler.ts) on the state read from the nearest snapshot. Made for an engine
// composed with its extension and built-in workflows (server/task-engine.ts exports the
// application's).
import type { Queryable, Tx } from "../db/pool";
import { getBlob } from "../events/blobs";
import { commandHandler, foldedState } from "../events/command-handler";
import { isWorkflowStepOutput } from "../events/step-contract";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import { stepOutcomeOf, type StepOutcome } from "../events/step-outcome";
import type { TaskCommand } from "./commands";
import { decideContext, definitionFor } from "./context";
import { decide } from "./decide";
import type { WorkflowDefinition } from "./definition";
import type { WorkflowExtension } from "./extension";
import { taskFoldOf } from "./task-fold";

export const WORKFLOW_ACTOR = { kind: "system", id: "workflow" } as const;

export interface WorkflowReactor {
  /** Called by the runner inside the transaction that recorded a step outcome; what the workflow appended. */
  reactToStepOutcome(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]): Promise<NewEvent[]>;
  /**
   * When reacting to a step's outcome failed (a defect, recorded by the runner with the
   * outcome in a transaction of its own): the session ends as if the step had given up, with
   * the reason, rather than waiting for a step nobody will schedule.
   */
  reactToReactionFailure(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[], message: string): Promise<void>;
}

/** The reactor of the engine with `extension` and the `builtins` workflows. */
export function workflowReactor<S>(
  extension: WorkflowExtension<S>,
  builtins: Readonly<Record<string, WorkflowDefinition>>,
): WorkflowReactor {
  const tasks = commandHandler(foldedState(taskFoldOf(extension)));

  /** The workflow's command for a step's final outcome (the texts it reads loaded from their blobs), null when it has no say. */
  async function commandOf(db: Queryable, outcome: StepOutcome): Promise<TaskCommand | null> {
    if (outcome.type === "StepFailed") {
      const { stepId, attempt, errorClass, message } = outcome.data;
      return { type: "StepGaveUp", stepId, attempt, errorClass, message };
    }
    const { output } = outcome.data;
    // Only the workflow's own steps (agent, commands) have a say in the workflow.
    if (!isWorkflowStepOutput(output)) return null;
    const rawText = output.kind === "agent" ? (await getBlob(db, output.raw.blob)).content.toString("utf8") : null;
    // What the extension reads besides the reply (a staged draft's JSON artifacts, for the rules).
    const artifactTexts: Record<string, string> = {};
    for (const { path, blob } of output.kind === "agent" ? extension.textsToRead(output) : []) {
      artifactTexts[path] = (await getBlob(db, blob.blob)).content.toString("utf8");
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
    const handled = await tasks.handle(
      store,
      sessionId,
      async (state, at) => {
        // A session no longer running (finished, cancelled) has nothing to decide.
        if (state.status !== "active") return [];
        const decided = await command(at.db);
        return decided ? decide(state, decided, decideContext(definitionFor(state, builtins), extension)) : [];
      },
      metadata,
      { tx },
    );
    return handled.events;
  }

  return {
    async reactToStepOutcome(tx, store, sessionId, recorded) {
      const outcome = stepOutcomeOf(recorded, { final: true });
      if (!outcome) return [];
      return decideOn(tx, store, sessionId, outcome, (db) => commandOf(db, outcome));
    },

    async reactToReactionFailure(tx, store, sessionId, recorded, message) {
      const outcome = stepOutcomeOf(recorded, { final: false });
      if (!outcome) return;
      const { stepId, attempt } = outcome.data;
      const gaveUp: TaskCommand = { type: "StepGaveUp", stepId, attempt, errorClass: "internal_error", message };
      await decideOn(tx, store, sessionId, outcome, async () => gaveUp);
    },
  };
}
