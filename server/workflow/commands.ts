// What the workflow decider is asked to do (operator actions and step results), and what
// it needs besides the state: the definition, the extension (extension.ts), and ids and
// limits from outside, so every decision is reproducible from the log (no clock, no random
// ids inside `decide`). An extension's own commands (Forge's edit of a draft) are decided
// by the extension and routed where the engine is composed (server/task-engine.ts).
import type { ErrorClass } from "../errors";
import type { AppEvent, AppEventOf, Budget } from "../events/catalog";
import type { StepOutput } from "../events/step-contract";
import type { NewEvent } from "../events/types";
import type { WorkflowDefinition } from "./definition";
import type { WorkflowExtension } from "./extension";
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
      /** The texts the extension reads besides the reply, by path (WorkflowExtension.textsToRead: a draft's JSON artifacts). */
      artifactTexts?: Record<string, string>;
    }
  | { type: "StepGaveUp"; stepId: string; attempt: number; errorClass: ErrorClass; message: string }
  | { type: "PassGate" }
  | { type: "GiveFeedback"; text: string }
  /** A person's answer when the pipeline stopped for one: retry, guidance (then retry), abort. */
  | { type: "Choose"; choice: "retry" | "guidance" | "abort"; text?: string }
  /** Enters `state` (again): what a fork, a revert or a modify does right after SessionForked. */
  | { type: "Continue"; state: string; reason: string; iterate: boolean }
  /** An interrupted session (cancelled, failed, out of budget) enters `state` again, the one whose work stopped. */
  | { type: "Resume"; state: string; budget?: Budget };

export type TaskCommandOf<T extends TaskCommand["type"]> = Extract<TaskCommand, { type: T }>;

/** `S`: the slice of the extension the engine runs with. */
export interface DecideContext<S> {
  definition: WorkflowDefinition;
  extension: WorkflowExtension<S>;
  newId: () => string;
  /** Attempts per agent step (1 + retries with backoff for retryable failures). */
  maxAttempts: number;
  stepTimeoutMs: number;
  /** The clock, for the wall-time budget (absent: no time has passed). */
  now?: () => number;
}

/** An event the decider emits, typed by the catalog. */
export type Emitted = NewEvent & AppEvent;
