// When a `prune_workspace` step has a final outcome, the session records what was removed
// (SessionPruned) or why it could not be (WorkspacePruneFailed), in the transaction of the outcome.
import type { Tx } from "../db/pool";
import { commandHandler, streamVersion } from "../events/command-handler";
import type { NewEvent } from "../events/types";
import type { ReactionFailure, StepReaction } from "../runner/step-kinds";
import type { PruneInput, PruneOutput } from "./steps";

export const PRUNE_ACTOR = { kind: "system", id: "workspace-cleanup" } as const;

/** The outcome as it was, appended in the transaction that recorded the step's (which holds the stream's lock). */
const pruneRecords = commandHandler(streamVersion);

export async function reactToPruneStep(tx: Tx, reaction: StepReaction<PruneInput, PruneOutput>): Promise<void> {
  const { store, sessionId, outcome } = reaction;
  const stepId = outcome.data.stepId;
  const event: NewEvent =
    outcome.type === "StepFailed"
      ? { type: "WorkspacePruneFailed", data: { stepId, message: outcome.data.message } }
      : {
          type: "SessionPruned",
          data: {
            stepId,
            requestedBy: reaction.step.input.requestedBy,
            worktree: outcome.data.output.worktree,
            ...(outcome.data.output.host ? { host: outcome.data.output.host } : {}),
            refsDeleted: outcome.data.output.refsDeleted,
          },
        };
  await pruneRecords.handle(store, sessionId, () => [event], { actor: PRUNE_ACTOR, causationId: outcome.eventId }, { tx });
}

/** When recording the outcome failed (a defect): recorded as failed, so no clean-up stays "asked" forever. */
export async function reactToPruneFailure(tx: Tx, reaction: ReactionFailure<PruneInput>, message: string): Promise<void> {
  const { store, sessionId, outcome } = reaction;
  await pruneRecords.handle(
    store,
    sessionId,
    () => [{ type: "WorkspacePruneFailed", data: { stepId: outcome.data.stepId, message } }],
    { actor: PRUNE_ACTOR, causationId: outcome.eventId },
    { tx },
  );
}
