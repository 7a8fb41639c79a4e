// When a `deliver` step has an outcome, the session records what the delivery did
// (DeliveryCompleted) or why it could not (DeliveryFailed, with its class), in the same
// transaction as the outcome.
import type { Tx } from "../db/pool";
import { DELIVERY_PROBLEM_CLASSES } from "../events/delivery-catalog";
import { commandHandler, streamVersion } from "../events/command-handler";
import type { NewEvent } from "../events/types";
import type { ReactionFailure, StepReaction } from "../runner/step-kinds";
import type { DeliverInput, DeliverOutput } from "./steps";

export const DELIVERY_ACTOR = { kind: "system", id: "delivery" } as const;

/** A delivery's outcome as it was, appended in the transaction that recorded its step's (which holds the stream's lock). */
const deliveryRecords = commandHandler(streamVersion);

/** Where a delivery's step gave up, as its problem class. */
const GAVE_UP: Record<string, "rate_limited" | "api_unavailable" | "internal_error"> = {
  provider_rate_limit: "rate_limited",
  provider_network_error: "api_unavailable",
  timeout: "api_unavailable",
};

/** A retried problem's class: its tag (`[target_moved] …`), else by the step's error class. */
function gaveUpClass(errorClass: string, message: string): (typeof DELIVERY_PROBLEM_CLASSES)[number] {
  const tag = /^\[([a-z_]+)\] /.exec(message)?.[1];
  const tagged = DELIVERY_PROBLEM_CLASSES.find((c) => c === tag);
  return tagged ?? GAVE_UP[errorClass] ?? "internal_error";
}

/** The delivery's record of the final outcome of its `deliver` step. */
export async function reactToDeliveryStep(tx: Tx, reaction: StepReaction<DeliverInput, DeliverOutput>): Promise<void> {
  const { store, sessionId, outcome } = reaction;
  const input = reaction.step.input;
  const stepId = outcome.data.stepId;
  let event: NewEvent;
  if (outcome.type === "StepFailed") {
    event = {
      type: "DeliveryFailed",
      data: {
        stepId,
        method: input.method,
        errorClass: gaveUpClass(outcome.data.errorClass, outcome.data.message),
        message: outcome.data.message,
        files: [],
      },
    };
  } else {
    const output = outcome.data.output;
    event = output.ok
      ? {
          type: "DeliveryCompleted",
          data: {
            stepId,
            method: input.method,
            branch: input.branch,
            commit: input.commit,
            pushed: output.pushed,
            merged: output.merged,
            pullRequest: output.pullRequest,
          },
        }
      : {
          type: "DeliveryFailed",
          data: { stepId, method: input.method, errorClass: output.errorClass, message: output.message, files: output.files },
        };
  }
  await deliveryRecords.handle(store, sessionId, () => [event], { actor: DELIVERY_ACTOR, causationId: outcome.eventId }, { tx });
}

/** When recording a delivery's outcome failed (a defect): it is recorded as failed, so no delivery stays "running". */
export async function reactToDeliveryFailure(tx: Tx, reaction: ReactionFailure<DeliverInput>, message: string): Promise<void> {
  const { store, sessionId, outcome } = reaction;
  // DeliveryFailed names the method, which only the input knows.
  const input = reaction.step.input;
  if (!input) throw new Error(`step ${reaction.step.id} has no valid delivery input: its failure cannot be recorded`);
  const data = { stepId: outcome.data.stepId, method: input.method, errorClass: "internal_error" as const, message, files: [] };
  await deliveryRecords.handle(
    store,
    sessionId,
    () => [{ type: "DeliveryFailed", data }],
    { actor: DELIVERY_ACTOR, causationId: outcome.eventId },
    { tx },
  );
}
