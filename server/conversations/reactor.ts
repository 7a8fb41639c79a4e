// When a conversation's step has an outcome, the conversation decides what follows in the
// same transaction: a reply is recorded and the mode in force decides the next calls; a call
// that gave up is recorded as failed (the mode hears an empty reply); a timer tells the mode
// its deadline passed. A result and its consequences commit together, or not at all.
import type { Tx } from "../db/pool";
import { getBlob } from "../events/blobs";
import type { ConversationCommand } from "../modes/conversation";
import type { ReactionFailure, StepReaction } from "../runner/step-kinds";
import { conversationCommands, conversationDecision } from "./record";
import type { CallStepOutput, ConversationCallInput, TimerInput, TimerStepOutput } from "./steps";

export const CONVERSATION_ACTOR = { kind: "system", id: "conversation" } as const;

/** The conversation's reaction to the final outcome of one of its calls: the reply, or the call failed. */
export async function reactToCall(tx: Tx, reaction: StepReaction<ConversationCallInput, CallStepOutput>): Promise<void> {
  const { outcome } = reaction;
  let command: ConversationCommand;
  if (outcome.type === "StepCompleted") {
    const text = (await getBlob(tx, outcome.data.output.raw.blob)).content.toString("utf8");
    command = { type: "Reply", callId: outcome.data.stepId, text };
  } else {
    command = { type: "CallFailed", callId: outcome.data.stepId, errorClass: outcome.data.errorClass, message: outcome.data.message };
  }
  await decideOn(tx, reaction, command);
}

/** The conversation's reaction to a timer that came due: the mode hears its deadline passed (a timer that failed says nothing). */
export async function reactToTimer(tx: Tx, reaction: StepReaction<TimerInput, TimerStepOutput>): Promise<void> {
  if (reaction.outcome.type === "StepCompleted") await decideOn(tx, reaction, { type: "Timeout", token: reaction.step.input.token });
}

/** The conversation's decision, in the outcome's transaction (which holds the stream's lock), caused by the outcome. */
async function decideOn(
  tx: Tx,
  { store, sessionId, outcome }: Pick<StepReaction<unknown, unknown>, "store" | "sessionId" | "outcome">,
  command: ConversationCommand,
): Promise<void> {
  const metadata = { actor: CONVERSATION_ACTOR, correlationId: outcome.metadata.correlationId, causationId: outcome.eventId };
  await conversationCommands.handle(store, sessionId, conversationDecision(command), metadata, { tx });
}

/**
 * When reacting to a call failed (a defect): the call is recorded as failed with the reason, so
 * the conversation does not wait for a reply nobody will record.
 */
export async function reactToCallFailure(tx: Tx, reaction: ReactionFailure<ConversationCallInput>, message: string): Promise<void> {
  await decideOn(tx, reaction, { type: "CallFailed", callId: reaction.outcome.data.stepId, errorClass: "internal_error", message });
}
