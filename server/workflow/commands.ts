// What the workflow decider is asked to do (operator actions and step results), and what
// it needs besides the state: the definition, and ids and limits from outside, so every
// decision is reproducible from the log (no clock, no random ids inside `decide`).
import type { ErrorClass } from "../errors";
import type { AppEvent, AppEventOf, Budget } from "../events/catalog";
import type { BlobRef } from "../events/blobs";
import type { StepOutput } from "../events/step-contract";
import type { NewEvent } from "../events/types";
import type { WorkflowDefinition } from "./definition";
import type { TaskConfig } from "./state";

export type TaskCommand =
  | { type: "StartTask"; title: string; config: TaskConfig }
  /** Fires the definition's start trigger: after StartTask, or in a rerun fork. */
  | { type: "Begin" }
  | { type: "Confirm"; via: AppEventOf<"OperatorConfirmed">["data"]["via"] }
  | { type: "FollowUp"; text: string }
  | { type: "Cancel"; reason: string }
  | {
      type: "StepSucceeded";
      stepId: string;
      attempt: number;
      output: StepOutput;
      rawText: string | null;
      /** A staged workflow's draft: the text of each JSON artifact it wrote (the rules read them). */
      artifactTexts?: Record<string, string>;
    }
  | { type: "StepGaveUp"; stepId: string; attempt: number; errorClass: ErrorClass; message: string }
  /** A person's edit of a stage's draft at its gate (the blob already stored). */
  | { type: "EditArtifact"; path: string; content: string; hash: string; blob: BlobRef; baseHash: string | null }
  | { type: "PassGate" }
  | { type: "GiveFeedback"; text: string }
  /** A person's answer when the pipeline stopped for one: retry, guidance (then retry), abort. */
  | { type: "Choose"; choice: "retry" | "guidance" | "abort"; text?: string }
  /** Enters `state` (again): what a fork, a revert or a modify does right after SessionForked. */
  | { type: "Continue"; state: string; reason: string; iterate: boolean }
  /** An interrupted session (cancelled, failed, out of budget) enters `state` again, the one whose work stopped. */
  | { type: "Resume"; state: string; budget?: Budget };

export type TaskCommandOf<T extends TaskCommand["type"]> = Extract<TaskCommand, { type: T }>;

export interface DecideContext {
  definition: WorkflowDefinition;
  newId: () => string;
  /** Attempts per agent step (1 + retries with backoff for retryable failures). */
  maxAttempts: number;
  stepTimeoutMs: number;
  /** The clock, for the wall-time budget (absent: no time has passed). */
  now?: () => number;
}

/** An event the decider emits, typed by the catalog. */
export type Emitted = NewEvent & AppEvent;
