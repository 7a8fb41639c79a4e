// A step's outcome as the reactions read it: the StepCompleted or StepFailed of an attempt just
// recorded, and the step it belongs to (its kind and input: the claimed step's, or its row's).
import type { AppEvent } from "./catalog";
import type { RecordedEvent } from "./types";

export type StepOutcome = RecordedEvent & Extract<AppEvent, { type: "StepCompleted" | "StepFailed" }>;

export interface OutcomeStep {
  kind: string;
  input: unknown;
}

/** The attempt's outcome among `recorded`: its completion, or a failure (`final`: one that will not be retried). */
export function stepOutcomeOf(recorded: readonly RecordedEvent[], options: { final: boolean }): StepOutcome | undefined {
  return (recorded as (RecordedEvent & AppEvent)[]).find(
    (e): e is StepOutcome => e.type === "StepCompleted" || (e.type === "StepFailed" && (!options.final || e.data.retryAt === null)),
  );
}
