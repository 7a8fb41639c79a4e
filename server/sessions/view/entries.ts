// The session view's read model, entry by entry: each recorded event becomes a compact,
// browser-safe `SessionEntry` whose `detail` carries what the page renders (discussion
// prose apart from verdicts, test results, failures with their class and a one-line
// diagnosis) and nothing it must not see (repository paths, agent configurations, step
// inputs). Large payloads stay behind their BlobRef and load only when opened (req E7).
// Pure: no I/O, so it runs alike for the first page load and for every live update.
import type { BlobRef } from "../../events/blobs";
import type { ErrorClass } from "../../errors";
import type { AppEvent } from "../../events/catalog";
import type { RecordedEvent } from "../../events/types";

/** What `parsed` agent output may hold: plain JSON. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

type DataOf<T extends AppEvent["type"]> = Extract<AppEvent, { type: T }>["data"];

export interface Failure {
  /** One of the error taxonomy's classes (req W10). */
  errorClass: ErrorClass | string;
  /** One line, however long the underlying message. */
  diagnosis: string;
}

export type EntryDetail =
  | { kind: "task_started"; workflow: string; mode: string; prompt: string; project: string; maxIterations: number }
  | { kind: "created"; title: string; workflow: string }
  | { kind: "forked"; parentId: string; atVersion: number; reason: string }
  | { kind: "state_changed"; from: string; to: string; reason: string | null }
  | { kind: "iteration"; iteration: number; reason: string }
  | {
      kind: "agent_output";
      stepId: string;
      attempt: number;
      role: string;
      agentId: string;
      phase: DataOf<"AgentOutputRecorded">["phase"];
      preview: string;
      raw: BlobRef;
      parsed: JsonValue | null;
      validationErrors: string[];
      simulated: boolean;
      usage: { inputTokens: number; outputTokens: number } | null;
    }
  | { kind: "agent_streamed"; stepId: string; text: string }
  | {
      kind: "commit";
      stepId: string;
      commit: string;
      parent: string;
      empty: boolean;
      changedFiles: DataOf<"WorkspaceCommitted">["changedFiles"];
      diff: BlobRef;
    }
  | {
      kind: "verdict";
      stepId: string;
      decision: "approve" | "changes_requested";
      modelDecision: "approve" | "changes_requested";
      override: string | null;
      summary: string;
      findings: DataOf<"ReviewVerdictRecorded">["findings"];
    }
  | { kind: "test_plan"; stepId: string; summary: string; commands: DataOf<"TestPlanRecorded">["commands"] }
  | ({ kind: "test_command" } & DataOf<"TestCommandRecorded">)
  | { kind: "task_spec"; stepId: string }
  | { kind: "execution_rejected"; stepId: string; reasons: string[] }
  | {
      kind: "step_scheduled";
      stepId: string;
      stepKind: string;
      role: string | null;
      state: string | null;
      phase: string | null;
      maxAttempts: number;
      timeoutMs: number;
    }
  | { kind: "step_started"; stepId: string; attempt: number; runnerId: string }
  | { kind: "step_completed"; stepId: string; attempt: number }
  | { kind: "step_failed"; stepId: string; attempt: number; errorClass: string; message: string; retryAt: string | null }
  | { kind: "step_released"; stepId: string; attempt: number; reason: string }
  | { kind: "step_cancelled"; stepId: string }
  | { kind: "rate_limited"; stepId: string; brain: string; waitMs: number }
  | { kind: "operator_message"; text: string }
  | { kind: "system_reply"; text: string }
  | { kind: "confirmed"; via: string }
  | { kind: "cancel_requested"; reason: string }
  | {
      kind: "finalized";
      outcome: string;
      reason: string | null;
      iterations: number;
      unresolved: string[];
      errorClass: string | null;
      diagnosis: string | null;
    }
  | { kind: "runtime_context"; runId: string; roles: Record<string, string> }
  /** A staged workflow's fact a reader should see (a person's edit, feedback or pass, a critique, a stop): shown by its summary. */
  | { kind: "pipeline"; type: string; alert: boolean }
  | { kind: "other" };

export interface SessionEntry {
  version: number;
  /** The stream that recorded it: an ancestor's id for what a fork inherited. */
  streamId: string;
  type: string;
  /** `user:<id>`, `runner:<id>`, `agent:<id>` or `system`. */
  actor: string;
  recordedAt: string;
  summary: string;
  detail: EntryDetail;
  /** Set on every failure, whatever its shape (req W11). */
  failure: Failure | null;
}

const DIAGNOSIS_CHARS = 240;

/** The first non-empty line of `text`, shortened to fit one line. */
export function oneLine(text: string, max = DIAGNOSIS_CHARS): string {
  const line =
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function actorOf(event: RecordedEvent): string {
  const actor = event.metadata.actor;
  return actor.kind === "system" ? "system" : `${actor.kind}:${actor.id}`;
}

/** What a scheduled step's input says about who runs it; the rest of the input stays on the server. */
function stepInputFacts(input: unknown): { role: string | null; state: string | null; phase: string | null } {
  const record = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return { role: str(record.role), state: str(record.state), phase: str(record.phase) };
}

/** AgentOutputStreamed is optional (a live-output feature may record it): read it defensively. */
function streamedText(data: unknown): { stepId: string; text: string } {
  const record = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
  const text = [record.text, record.chunk, record.delta].find((v): v is string => typeof v === "string") ?? "";
  return { stepId: typeof record.stepId === "string" ? record.stepId : "", text };
}

function detailOf(event: RecordedEvent): EntryDetail {
  const e = event as RecordedEvent & AppEvent;
  switch (e.type) {
    case "SessionCreated":
      return { kind: "created", title: e.data.title, workflow: e.data.workflow };
    case "SessionForked":
      return { kind: "forked", parentId: e.data.parentId, atVersion: e.data.atVersion, reason: e.data.reason };
    case "TaskStarted":
      return {
        kind: "task_started",
        workflow: e.data.workflow,
        mode: e.data.mode,
        prompt: e.data.prompt,
        project: e.data.project.name,
        maxIterations: e.data.maxIterations,
      };
    case "SessionStateChanged":
      return { kind: "state_changed", from: e.data.from, to: e.data.to, reason: e.data.reason ?? null };
    case "IterationStarted":
      return { kind: "iteration", iteration: e.data.iteration, reason: e.data.reason };
    case "AgentOutputRecorded":
      return {
        kind: "agent_output",
        stepId: e.data.stepId,
        attempt: e.data.attempt,
        role: e.data.role,
        agentId: e.data.agentId,
        phase: e.data.phase,
        preview: e.data.preview,
        raw: e.data.raw,
        parsed: (e.data.parsed ?? null) as JsonValue | null,
        validationErrors: e.data.validationErrors,
        simulated: e.data.simulated,
        usage: e.data.usage ?? null,
      };
    case "WorkspaceCommitted":
      return {
        kind: "commit",
        stepId: e.data.stepId,
        commit: e.data.commit,
        parent: e.data.parent,
        empty: e.data.empty,
        changedFiles: e.data.changedFiles,
        diff: e.data.diff,
      };
    case "ReviewVerdictRecorded":
      return {
        kind: "verdict",
        stepId: e.data.stepId,
        decision: e.data.decision,
        modelDecision: e.data.modelDecision,
        override: e.data.override,
        summary: e.data.summary,
        findings: e.data.findings,
      };
    case "TestPlanRecorded":
      return { kind: "test_plan", stepId: e.data.stepId, summary: e.data.summary, commands: e.data.commands };
    case "TestCommandRecorded":
      return { kind: "test_command", ...e.data };
    case "TaskSpecRecorded":
      return { kind: "task_spec", stepId: e.data.stepId };
    case "ExecutionRejected":
      return { kind: "execution_rejected", stepId: e.data.stepId, reasons: e.data.reasons };
    case "StepScheduled":
      return {
        kind: "step_scheduled",
        stepId: e.data.stepId,
        stepKind: e.data.kind,
        ...stepInputFacts(e.data.input),
        maxAttempts: e.data.maxAttempts,
        timeoutMs: e.data.timeoutMs,
      };
    case "StepStarted":
      return { kind: "step_started", stepId: e.data.stepId, attempt: e.data.attempt, runnerId: e.data.runnerId };
    case "StepCompleted":
      return { kind: "step_completed", stepId: e.data.stepId, attempt: e.data.attempt };
    case "StepFailed":
      return {
        kind: "step_failed",
        stepId: e.data.stepId,
        attempt: e.data.attempt,
        errorClass: e.data.errorClass,
        message: e.data.message,
        retryAt: e.data.retryAt,
      };
    case "StepReleased":
      return { kind: "step_released", stepId: e.data.stepId, attempt: e.data.attempt, reason: e.data.reason };
    case "StepCancelled":
      return { kind: "step_cancelled", stepId: e.data.stepId };
    case "RateLimitWaited":
      return { kind: "rate_limited", stepId: e.data.stepId, brain: e.data.brain, waitMs: e.data.waitMs };
    case "OperatorMessagePosted":
      return { kind: "operator_message", text: e.data.text };
    case "SystemReplied":
      return { kind: "system_reply", text: e.data.text };
    case "OperatorConfirmed":
      return { kind: "confirmed", via: e.data.via };
    case "CancelRequested":
      return { kind: "cancel_requested", reason: e.data.reason };
    case "SessionFinalized":
      return {
        kind: "finalized",
        outcome: e.data.outcome,
        reason: e.data.reason,
        iterations: e.data.iterations,
        unresolved: e.data.unresolved,
        errorClass: e.data.errorClass,
        diagnosis: e.data.diagnosis,
      };
    case "RuntimeContextRecorded":
      return {
        kind: "runtime_context",
        runId: e.data.runId,
        roles: Object.fromEntries(Object.entries(e.data.roles).map(([role, a]) => [role, a.agentId])),
      };
    case "ArtifactEdited":
    case "FeedbackGiven":
    case "GatePassed":
    case "CritiqueRecorded":
    case "PersonChose":
    case "ArtifactDraftHeld":
    case "StageCompleted":
    case "StageReopened":
    case "ProgressRecorded":
    case "CheckRouted":
      return { kind: "pipeline", type: e.type, alert: false };
    case "PersonNeeded":
    case "ArtifactWriteRefused":
    case "ForgeWarning":
    case "BudgetExhausted":
      return { kind: "pipeline", type: e.type, alert: true };
    default:
      if ((event.type as string) === "AgentOutputStreamed") return { kind: "agent_streamed", ...streamedText(event.data) };
      return { kind: "other" };
  }
}

/** The error class and one-line diagnosis of an entry that records a failure, else null. */
export function failureOf(detail: EntryDetail): Failure | null {
  switch (detail.kind) {
    case "step_failed":
      return { errorClass: detail.errorClass, diagnosis: oneLine(detail.message) };
    case "finalized":
      return detail.errorClass
        ? { errorClass: detail.errorClass, diagnosis: oneLine(detail.diagnosis ?? detail.reason ?? detail.outcome) }
        : null;
    case "test_command": {
      if (detail.passed) return null;
      if (detail.status === "refused")
        return { errorClass: detail.errorClass ?? "command_refused", diagnosis: oneLine(`refused: ${detail.reason ?? "not allowed"}`) };
      const said = oneLine(tellingLine(detail.stderrTail) || tellingLine(detail.stdoutTail), 160);
      const exit =
        detail.exitCode === null ? (detail.reason ?? "no exit code") : `exit ${detail.exitCode}, expected ${detail.expectedExitCode}`;
      return { errorClass: detail.errorClass ?? "command_failed", diagnosis: oneLine(`${exit}${said ? ` — ${said}` : ""}`) };
    }
    case "agent_output":
      if (detail.validationErrors.length === 0) return null;
      return {
        errorClass: "schema_invalid",
        diagnosis: oneLine(
          `${detail.role} output rejected: ${detail.validationErrors[0]}${detail.validationErrors.length > 1 ? ` (+${detail.validationErrors.length - 1} more)` : ""}`,
        ),
      };
    case "execution_rejected":
      return { errorClass: "tool_error", diagnosis: oneLine(`execution rejected: ${detail.reasons.join("; ")}`) };
    default:
      return null;
  }
}

/**
 * The line of a command's output that best says why it failed: a TAP "not ok" line (the
 * first failing test), else the last line mentioning a failure or an error, else the last.
 */
function tellingLine(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => /^not ok\b/i.test(l)) ?? lines.findLast((l) => /\b(fail(ed|ure|s)?|error)\b/i.test(l)) ?? lines.at(-1) ?? "";
}

export function toSessionEntry(event: RecordedEvent, summarize: (type: string, data: unknown) => string): SessionEntry {
  const detail = detailOf(event);
  return {
    version: event.version,
    streamId: event.streamId,
    type: event.type,
    actor: actorOf(event),
    recordedAt: event.recordedAt,
    summary: summarizeSafely(summarize, event),
    detail,
    failure: failureOf(detail),
  };
}

function summarizeSafely(summarize: (type: string, data: unknown) => string, event: RecordedEvent): string {
  try {
    return summarize(event.type, event.data);
  } catch {
    return event.type;
  }
}
