// A session's feedback history (req F5–F8, E4): every piece of feedback its events hold
// (lib/feedback.ts lists their types), in order — a person's follow-ups, gate feedback and guidance, a change request, and the
// reviewers' and critics' findings — with who gave it, when, and where in the work. Pure: a
// function of the events (fork-inherited ones included), shown on the session page and
// written to the export as feedback_history.json.
import { actorLabel, type AppEvent } from "../events/catalog";
import type { RecordedEvent } from "../events/types";
import { FEEDBACK_EVENT_TYPES } from "../../lib/feedback";

export interface FeedbackEntry {
  version: number;
  at: string;
  /** operator: a follow-up; gate: feedback at a stage's gate; guidance: after a stop; change: a modify request; review / critic: an agent's findings. */
  source: "operator" | "gate" | "guidance" | "change" | "review" | "critic";
  by: string;
  stage: string | null;
  iteration: number;
  severity: "normal" | "critical" | "blocking" | "major" | "minor" | "nit" | null;
  text: string;
}

/**
 * Every type {@link feedbackHistory} reads: the feedback itself (lib/feedback.ts) and what
 * places it (iteration, stage, the agent whose output a verdict judged). A reader of a long
 * session reads only these (`readStream`'s `types`); the history is the same.
 */
export const FEEDBACK_HISTORY_TYPES: readonly string[] = [
  ...FEEDBACK_EVENT_TYPES,
  "IterationStarted",
  "StageStarted",
  "StageReopened",
  "AgentOutputRecorded",
];

export function feedbackHistory(events: readonly RecordedEvent[]): FeedbackEntry[] {
  const out: FeedbackEntry[] = [];
  let iteration = 1;
  let stage: string | null = null;
  // The engine records a verdict; the agent whose output it is gave the findings.
  let agent = "agent";
  for (const recorded of events) {
    const e = recorded as RecordedEvent & AppEvent;
    const base = { version: e.version, at: e.recordedAt, by: actorLabel(e.metadata.actor), stage, iteration };
    switch (e.type) {
      case "IterationStarted":
        iteration = e.data.iteration;
        break;
      case "StageStarted":
      case "StageReopened":
        stage = e.data.stage;
        iteration = e.type === "StageStarted" ? 1 : iteration;
        break;
      case "AgentOutputRecorded":
        agent = `agent:${e.data.agentId}`;
        break;
      case "OperatorMessagePosted":
        out.push({ ...base, source: "operator", severity: null, text: e.data.text });
        break;
      case "FeedbackGiven":
        out.push({
          ...base,
          source: e.data.source === "guidance" ? "guidance" : "gate",
          stage: e.data.stage,
          iteration: e.data.iteration,
          severity: e.data.severity,
          text: e.data.text,
        });
        break;
      case "ChangeRequested":
        out.push({ ...base, source: "change", severity: null, text: e.data.text });
        break;
      case "ReviewVerdictRecorded":
        for (const f of e.data.findings)
          out.push({
            ...base,
            by: agent,
            source: "review",
            severity: f.severity,
            text: `${f.file}${f.line ? `:${f.line}` : ""}: ${f.message}`,
          });
        break;
      case "CritiqueRecorded":
        for (const f of e.data.findings)
          out.push({ ...base, by: agent, source: "critic", stage: e.data.stage, severity: f.severity, text: `${f.id}: ${f.message}` });
        break;
      default:
        break;
    }
  }
  return out;
}
