// Connects the runner to the engine: when a step's result is recorded, the session's
// workflow decides what happens next inside the same transaction (a result and its
// consequences commit together, or not at all).
import crypto from "node:crypto";
import type { Tx } from "../db/pool";
import { AppError } from "../errors";
import type { AppEvent } from "../events/catalog";
import { getBlob } from "../events/blobs";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import { DEFAULT_STEP_TIMEOUT_MS } from "../runner/dispatch";
import { BUILTIN_WORKFLOWS } from "./builtin";
import type { WorkflowDefinition } from "./definition";
import { decide, foldTask, type DecideContext, type StepOutput, type TaskCommand, type TaskState } from "./engine";

export const WORKFLOW_ACTOR = { kind: "system", id: "workflow" } as const;
/** One attempt plus three retries (1 s, 2 s, 4 s) for retryable agent failures. */
export const AGENT_STEP_MAX_ATTEMPTS = 4;

export function definitionFor(state: TaskState): WorkflowDefinition {
  const id = state.config?.workflow;
  const def = id ? BUILTIN_WORKFLOWS[id] : undefined;
  if (!def) throw new AppError("INTERNAL", `unknown workflow "${id}"`);
  return def;
}

export function decideContext(definition: WorkflowDefinition): DecideContext {
  return { definition, newId: () => crypto.randomUUID(), maxAttempts: AGENT_STEP_MAX_ATTEMPTS, stepTimeoutMs: DEFAULT_STEP_TIMEOUT_MS };
}

/** Called by the runner inside the transaction that recorded a step outcome. */
export async function reactToStepOutcome(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]): Promise<void> {
  const outcome = (recorded as (RecordedEvent & AppEvent)[]).find(
    (e) => e.type === "StepCompleted" || (e.type === "StepFailed" && e.data.retryAt === null),
  );
  if (!outcome) return;
  const state = foldTask(await store.readStream(sessionId, { db: tx }));
  if (state.status !== "active") return;
  let command: TaskCommand;
  if (outcome.type === "StepCompleted") {
    const output = outcome.data.output as unknown as StepOutput;
    const rawText = output.kind === "agent" ? (await getBlob(tx, output.raw.blob)).content.toString("utf8") : null;
    command = { type: "StepSucceeded", stepId: outcome.data.stepId, attempt: outcome.data.attempt, output, rawText };
  } else if (outcome.type === "StepFailed") {
    command = {
      type: "StepGaveUp",
      stepId: outcome.data.stepId,
      attempt: outcome.data.attempt,
      errorClass: outcome.data.errorClass,
      message: outcome.data.message,
    };
  } else {
    return;
  }
  const events = decide(state, command, decideContext(definitionFor(state)));
  if (events.length === 0) return;
  await store.appendInTx(tx, sessionId, state.version, events, {
    actor: WORKFLOW_ACTOR,
    correlationId: outcome.metadata.correlationId,
    causationId: outcome.eventId,
  });
}
