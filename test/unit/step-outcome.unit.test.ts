// Which of the events recorded with a step's result the reactions take as its outcome
// (server/events/step-outcome.ts): a completion, or a failure; `final` leaves out a failure that
// will be retried, so that the workflow only hears of a step that gave up.
import { describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../server/events/types";
import { stepOutcomeOf } from "../../server/events/step-outcome";

let position = 0;
function recorded(type: string, data: Record<string, unknown>): RecordedEvent {
  position++;
  return {
    position,
    txId: 1,
    eventId: `00000000-0000-7000-8000-${String(position).padStart(12, "0")}`,
    streamId: "s-outcome",
    version: position,
    type,
    data,
    metadata: { actor: { kind: "runner", id: "r" }, correlationId: "c", causationId: null, schemaVersion: 1 },
    recordedAt: "2026-11-26T00:00:00.000Z",
  };
}

const completed = recorded("StepCompleted", { stepId: "a", attempt: 1, output: { ok: true } });
const retried = recorded("StepFailed", {
  stepId: "a",
  attempt: 1,
  errorClass: "timeout",
  message: "slow",
  retryAt: "2026-11-26T00:00:01.000Z",
});
const gaveUp = recorded("StepFailed", { stepId: "a", attempt: 3, errorClass: "timeout", message: "slow", retryAt: null });
const other = recorded("SessionStateChanged", { from: "a", to: "b" });

describe("stepOutcomeOf", () => {
  it("takes a completion, final or not", () => {
    expect(stepOutcomeOf([other, completed], { final: true })).toBe(completed);
    expect(stepOutcomeOf([other, completed], { final: false })).toBe(completed);
  });

  it("takes a failure that will not be retried, final or not", () => {
    expect(stepOutcomeOf([gaveUp], { final: true })).toBe(gaveUp);
    expect(stepOutcomeOf([gaveUp], { final: false })).toBe(gaveUp);
  });

  it("leaves out a failure that will be retried when only a final outcome counts, and takes it otherwise", () => {
    expect(stepOutcomeOf([retried], { final: true })).toBeUndefined();
    expect(stepOutcomeOf([retried], { final: false })).toBe(retried);
    expect(stepOutcomeOf([retried, gaveUp], { final: true })).toBe(gaveUp);
  });

  it("takes the first outcome among the events, and none where there is none", () => {
    expect(stepOutcomeOf([completed, gaveUp], { final: true })).toBe(completed);
    expect(stepOutcomeOf([other], { final: false })).toBeUndefined();
    expect(stepOutcomeOf([], { final: true })).toBeUndefined();
  });
});
