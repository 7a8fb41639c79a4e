// When a conversation's step has an outcome, the conversation decides what follows in the
// same transaction: a reply is recorded and the mode in force decides the next calls; a call
// that gave up is recorded as failed (the mode hears an empty reply); a timer tells the mode
// its deadline passed. A result and its consequences commit together, or not at all.
import type { Tx } from "../db/pool";
import { getBlob } from "../events/blobs";
import type { EventStore } from "../events/store";
import type { OutcomeStep, StepOutcome } from "../events/step-outcome";
import type { ConversationCommand } from "../modes/conversation";
import { CALL_STEP, conversationCommands, conversationDecision, TIMER_STEP } from "./record";
import { ZCallStepOutput, ZTimerInput } from "./steps";

export const CONVERSATION_ACTOR = { kind: "system", id: "conversation" } as const;

/** The step kinds a conversation's reaction takes. */
export const CONVERSATION_STEPS: readonly string[] = [CALL_STEP, TIMER_STEP];

/** The conversation's reaction to the final outcome of one of its steps (a call or a timer). */
export async function reactToConversationStep(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  outcome: StepOutcome,
  step: OutcomeStep,
): Promise<void> {
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
    const metadata = { actor: CONVERSATION_ACTOR, correlationId: outcome.metadata.correlationId, causationId: outcome.eventId };
    await conversationCommands.handle(store, sessionId, conversationDecision(command), metadata, { tx });
  }
}

/**
 * When reacting failed (a defect): the call is recorded as failed with the reason, so the
 * conversation does not wait for a reply nobody will record.
 */
export async function reactToConversationFailure(
  tx: Tx,
  store: EventStore,
  sessionId: string,
  outcome: StepOutcome,
  step: OutcomeStep,
  message: string,
): Promise<void> {
  if (step.kind === CALL_STEP) {
    const failed = { type: "CallFailed" as const, callId: outcome.data.stepId, errorClass: "internal_error", message };
    await conversationCommands.handle(
      store,
      sessionId,
      conversationDecision(failed),
      { actor: CONVERSATION_ACTOR, causationId: outcome.eventId },
      { tx },
    );
  }
}
