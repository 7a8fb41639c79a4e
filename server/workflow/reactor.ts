// Connects the runner to the engine: when a step's result is recorded, the session's
// workflow decides what happens next inside the same transaction (a result and its
// consequences commit together, or not at all). Made for an engine composed with its
// extension and built-in workflows (server/task-engine.ts exports the application's).
import type { Tx } from "../db/pool";
import { getBlob } from "../events/blobs";
import { isWorkflowStepOutput } from "../events/step-contract";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import { stepOutcomeOf } from "../events/step-outcome";
import type { TaskCommand } from "./commands";
import { decideContext, definitionFor } from "./context";
import { decide } from "./decide";
import type { WorkflowDefinition } from "./definition";
import type { WorkflowExtension } from "./extension";
import { foldWith, type TaskState } from "./state";

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
  /** The decision on `command`, appended as the workflow's, caused by `outcome`; the events it appended. */
  async function decideAndAppend(
    tx: Tx,
    store: EventStore,
    sessionId: string,
    state: TaskState<S>,
    command: TaskCommand,
    outcome: RecordedEvent,
  ): Promise<NewEvent[]> {
    const events = decide(state, command, decideContext(definitionFor(state, builtins), extension));
    if (events.length === 0) return [];
    await store.appendInTx(tx, sessionId, state.version, events, {
      actor: WORKFLOW_ACTOR,
      correlationId: outcome.metadata.correlationId,
      causationId: outcome.eventId,
    });
    return events;
  }

  return {
    async reactToStepOutcome(tx, store, sessionId, recorded) {
      const outcome = stepOutcomeOf(recorded, { final: true });
      if (!outcome) return [];
      const state = foldWith(extension, await store.readStream(sessionId, { db: tx }));
      if (state.status !== "active") return [];
      let command: TaskCommand;
      if (outcome.type === "StepCompleted") {
        const { output } = outcome.data;
        // Only the workflow's own steps (agent, commands) have a say in the workflow.
        if (!isWorkflowStepOutput(output)) return [];
        const rawText = output.kind === "agent" ? (await getBlob(tx, output.raw.blob)).content.toString("utf8") : null;
        // What the extension reads besides the reply (a staged draft's JSON artifacts, for the rules).
        const artifactTexts: Record<string, string> = {};
        for (const { path, blob } of output.kind === "agent" ? extension.textsToRead(output) : []) {
          artifactTexts[path] = (await getBlob(tx, blob.blob)).content.toString("utf8");
        }
        command = { type: "StepSucceeded", stepId: outcome.data.stepId, attempt: outcome.data.attempt, output, rawText, artifactTexts };
      } else {
        command = {
          type: "StepGaveUp",
          stepId: outcome.data.stepId,
          attempt: outcome.data.attempt,
          errorClass: outcome.data.errorClass,
          message: outcome.data.message,
        };
      }
      return decideAndAppend(tx, store, sessionId, state, command, outcome);
    },

    async reactToReactionFailure(tx, store, sessionId, recorded, message) {
      const state = foldWith(extension, await store.readStream(sessionId, { db: tx }));
      if (state.status !== "active") return;
      const outcome = stepOutcomeOf(recorded, { final: false });
      if (!outcome) return;
      const command: TaskCommand = {
        type: "StepGaveUp",
        stepId: outcome.data.stepId,
        attempt: outcome.data.attempt,
        errorClass: "internal_error",
        message,
      };
      await decideAndAppend(tx, store, sessionId, state, command, outcome);
    },
  };
}
