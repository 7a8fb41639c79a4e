// When a `deliver` step has an outcome, the session records what the delivery did
// (DeliveryCompleted) or why it could not (DeliveryFailed, with its class), in the same
// transaction as the outcome.
import type { Tx } from "../db/pool";
import type { AppEvent } from "../events/catalog";
import { DELIVERY_PROBLEM_CLASSES } from "../events/delivery-catalog";
import type { EventStore } from "../events/store";
import type { NewEvent, RecordedEvent } from "../events/types";
import { DELIVER_STEP, ZDeliverInput, ZDeliverOutput } from "./steps";

export const DELIVERY_ACTOR = { kind: "system", id: "delivery" } as const;

type Outcome = RecordedEvent & Extract<AppEvent, { type: "StepCompleted" | "StepFailed" }>;

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

/** The delivery's record of a step outcome; false when the step is not a delivery. */
export async function reactToDeliveryStep(tx: Tx, store: EventStore, sessionId: string, recorded: RecordedEvent[]): Promise<boolean> {
  const outcome = (recorded as (RecordedEvent & AppEvent)[]).find(
    (e): e is Outcome => e.type === "StepCompleted" || (e.type === "StepFailed" && e.data.retryAt === null),
  );
  if (!outcome) return false;
  const row = await tx.query<{ kind: string; input: unknown }>("SELECT kind, input FROM steps WHERE id = $1", [outcome.data.stepId]);
  if (row.rows[0]?.kind !== DELIVER_STEP) return false;
  const input = ZDeliverInput.parse(row.rows[0].input);
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
    const output = ZDeliverOutput.parse(outcome.data.output);
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
  const version = (await tx.query<{ version: number }>("SELECT version FROM streams WHERE id = $1", [sessionId])).rows[0]!.version;
  await store.appendInTx(tx, sessionId, version, [event], { actor: DELIVERY_ACTOR, causationId: outcome.eventId });
  return true;
}
