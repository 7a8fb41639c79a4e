// What a workflow extension adds to the generic engine (docs/workflows.md, "The engine and
// its extension"). The definition language names guards and output kinds whose meaning lies
// in what the steps produced (a stage's artifacts, a critic's findings, a triage's route):
// the engine leaves those to the extension, with the state slice they are read from. The
// application composes one extension with the engine (server/task-engine.ts: Forge's,
// server/forge/extension.ts); the engine reaches it through DecideContext, never by import.
import type { ErrorClass } from "../errors";
import type { ParsedOutput } from "../events/agent-outputs";
import type { BlobRef } from "../events/blobs";
import type { AgentStepOutput, StepInput } from "../events/step-contract";
import type { Emitted, TaskCommandOf } from "./commands";
import type { GuardName, StageSpec, StateSpec, StepSpec, WorkflowDefinition } from "./definition";
import type { ActiveTask, SliceFold } from "./state";

/** The guards the engine answers from its own fields; the others are the extension's. */
export type EngineGuard = "under_cap" | "at_cap" | "mode_proposal" | "mode_implementation" | "gate_on" | "gate_off";
/** A modify session and its change request's triage (`modifying`, `change_invalid`, `layer_*`). */
export type ExtensionGuard = Exclude<GuardName, EngineGuard>;

/** The output kinds the extension reads: a stage's draft, a critic's findings, a failed check's route. */
export type ExtensionOutputKind = "draft" | "critique" | "route";

/** A stage of the session's definition, by name. */
export interface Staged {
  name: string;
  spec: StageSpec;
}

/** A staged step's part of its input (the contract's `forge` field: the runner writes, guards and collects). */
export type StagedStepInput = NonNullable<StepInput["forge"]>;

/** What reading a step's output gives: the events that record it and the trigger it fires. */
export interface Interpretation {
  events: Emitted[];
  trigger: string;
  /** Why the output was rejected, when it was: carried into the outcome if the session ends. */
  failure?: { errorClass?: ErrorClass; diagnosis: string };
}

/** A step's output handed to the extension, with what the engine already made of it. */
export interface OutputReading<S> {
  state: ActiveTask<S>;
  stateSpec: Extract<StateSpec, { type: "step" }>;
  /** The stage the step's state belongs to, when it names one the definition has. */
  stage: Staged | null;
  command: TaskCommandOf<"StepSucceeded">;
  definition: WorkflowDefinition;
  /** The reply's text (the whole of it, else its preview). */
  text: string;
  /** AgentOutputRecorded for the reply: what it parsed into and its problems. */
  recordOutput(parsed: ParsedOutput | null, validationErrors: string[]): Emitted;
  /** WorkspaceCommitted for the step's commit, when there is one to record. */
  committed: Emitted[];
}

export interface WorkflowExtension<S> extends SliceFold<S> {
  /** The guards of the definition language whose answer is in the slice. */
  guards: Record<ExtensionGuard, (task: ActiveTask<S>) => boolean>;
  /** Reading the outputs of the kinds it owns. */
  outputs: Record<ExtensionOutputKind, (reading: OutputReading<S>) => Interpretation>;
  /**
   * The texts an output's reading needs besides the reply, by path (Forge: a draft's JSON
   * artifacts): the reactor reads them before deciding (StepSucceeded.artifactTexts).
   */
  textsToRead(output: AgentStepOutput): Array<{ path: string; blob: BlobRef }>;
  /** What a stage freezes as it completes (StageCompleted.artifacts). */
  frozen(task: ActiveTask<S>, stage: string): Array<{ path: string; hash: string }>;
  /** A staged step's part of its input: what the runner writes first, may let the agent write, and collects after. */
  stagedInput(task: ActiveTask<S>, stage: Staged, step: StepSpec): StagedStepInput;
  /** The commands a commands step runs when the slice names them; null: the test plan's. */
  commands(task: ActiveTask<S>): StepInput["commands"] | null;
  /** What a staged step's prompt says after its stage line. */
  prompt(task: ActiveTask<S>, stage: Staged, step: StepSpec): string[];
}
