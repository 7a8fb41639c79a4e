// When a conversation's step has an outcome, the conversation decides what follows in the
// same transaction: a reply is recorded and the mode in force decides the next calls; a call
// that gave up is recorded as failed (the mode hears an empty reply); a timer tells the mode
// its deadline passed. A result and its consequences commit together, or not at all.
import type { Tx } from "../db/pool";
import type { AppEvent } from "../events/catalog";
import { getBlob } from "../events/blobs";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import type { ConversationCommand } from "../modes/conversation";
import { actOnConversationInTx, CALL_STEP, TIMER_STEP } from "./record";
import { ZCallStepOutput, ZTimerInput } from "./steps";

export const CONVERSATION_ACTOR = { kind: "system", id: "conversation" } as const;

type Outcome = RecordedEvent & Extract<AppEvent, { type: "StepCompleted" | "StepFailed" }>;

function finalOutcome(recorded: RecordedEvent[]): Outcome | undefined {
  return (recorded as (RecordedEvent & AppEvent)[]).find(
    (e): e is Outcome => e.type === "StepCompleted" || (e.type === "StepFailed" && e.data.retryAt === null),
  );
}

async function conversationStep(tx: Tx, stepId: string): Promise<{ kind: string; input: unknown } | null> {
  const row = await tx.query<{ kind: string; input: unknown }>("SELECT kind, input FROM steps WHERE id = $1", [stepId]);
  const step = row.rows[0];
  return step && (step.kind === CALL_STEP || step.kind === TIMER_STEP) ? step : null;
}

/** The conversation's reaction to a step's outcome; false when the step is not a conversation's. */
export async function reactToConversationStep(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]): Promise<boolean> {
  const outcome = finalOutcome(recorded);
  if (!outcome) return false;
  const step = await conversationStep(tx, outcome.data.stepId);
  if (!step) return false;
  let command: ConversationCommand | null = null;
  if (step.kind === TIMER_STEP) {
    if (outcome.type === "StepCompleted") command = { type: "Timeout", token: ZTimerInput.parse(step.input).token };
  } else if (outcome.type === "StepCompleted") {
    const output = ZCallStepOutput.parse(outcome.data.output);
    const text = (await getBlob(tx, output.raw.blob)).content.toString("utf8");
    command = { type: "Reply", callId: outcome.data.stepId, text };
  } else {
    command = { type: "CallFailed", callId: outcome.data.stepId, errorClass: outcome.data.errorClass, message: outcome.data.message };
  }
  if (command) {
    await actOnConversationInTx(tx, store, sessionId, command, {
      actor: CONVERSATION_ACTOR,
      ...(outcome.metadata.correlationId ? { correlationId: outcome.metadata.correlationId } : {}),
      causationId: outcome.eventId,
    });
  }
  return true;
}

/**
 * When reacting failed (a defect): the call is recorded as failed with the reason, so the
 * conversation does not wait for a reply nobody will record; false when not a conversation's.
 */
export async function reactToConversationFailure(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  recorded: RecordedEvent[],
  message: string,
): Promise<boolean> {
  const outcome = (recorded as (RecordedEvent & AppEvent)[]).find(
    (e): e is Outcome => e.type === "StepCompleted" || e.type === "StepFailed",
  );
  if (!outcome) return false;
  const step = await conversationStep(tx, outcome.data.stepId);
  if (!step) return false;
  if (step.kind === CALL_STEP) {
    await actOnConversationInTx(
      tx,
      store,
      sessionId,
      { type: "CallFailed", callId: outcome.data.stepId, errorClass: "internal_error", message },
      { actor: CONVERSATION_ACTOR, causationId: outcome.eventId },
    );
  }
  return true;
}
