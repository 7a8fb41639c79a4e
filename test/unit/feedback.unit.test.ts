// The feedback history and the list of the events that hold feedback (lib/feedback.ts, which
// the session page watches to read the history again) name the same events.
import { describe, expect, it } from "vitest";
import { FEEDBACK_EVENT_TYPES } from "../../lib/feedback";
import type { RecordedEvent } from "../../server/events/types";
import { FEEDBACK_HISTORY_TYPES, feedbackHistory } from "../../server/sessions/feedback";

const event = (version: number, type: string, data: unknown): RecordedEvent => ({
  position: version,
  txId: 1,
  eventId: `e${version}`,
  streamId: "s-1",
  version,
  type,
  data,
  metadata: { actor: { kind: "user", id: "u1" }, correlationId: "c", causationId: null, schemaVersion: 1 },
  recordedAt: "2026-11-26T00:00:00.000Z",
});

const finding = { severity: "major", file: "a.js", message: "m", id: "f-1" };
const SAMPLES: Record<string, unknown> = {
  OperatorMessagePosted: { text: "hi" },
  FeedbackGiven: { stage: "prd", iteration: 1, source: "person", severity: "normal", text: "shorter" },
  ChangeRequested: { text: "add --lines" },
  ReviewVerdictRecorded: { findings: [finding] },
  CritiqueRecorded: { stage: "prd", findings: [finding] },
  AgentOutputRecorded: { agentId: "a", role: "coder" },
  SessionStateChanged: { from: "a", to: "b" },
  IterationStarted: { iteration: 2 },
  StageStarted: { stage: "design" },
  StageReopened: { stage: "prd" },
};

describe("feedback events", () => {
  it("each listed type gives an entry of the history, and the others none", () => {
    for (const [type, data] of Object.entries(SAMPLES)) {
      const listed = FEEDBACK_EVENT_TYPES.includes(type);
      expect(feedbackHistory([event(1, type, data)]).length > 0, type).toBe(listed);
    }
    expect(FEEDBACK_EVENT_TYPES.every((t) => t in SAMPLES)).toBe(true);
  });

  it("the types a long session's reader asks for give the same history as the whole session", () => {
    // Every sample, then each again: iterations, stages and agents place the later feedback.
    const types = Object.keys(SAMPLES);
    const all = [...types, ...types.toReversed()].map((type, i) => event(i + 1, type, SAMPLES[type]));
    const typed = all.filter((e) => FEEDBACK_HISTORY_TYPES.includes(e.type));
    expect(typed.length).toBeLessThan(all.length);
    expect(feedbackHistory(typed)).toEqual(feedbackHistory(all));
    expect(feedbackHistory(all).map((f) => [f.source, f.stage, f.iteration, f.by])).toContainEqual(["review", "design", 2, "agent:a"]);
  });
});
