// The workflow engine as a pure decider (the Decider pattern): `evolveWith` folds a
// session's events into TaskState (state.ts), `decide` turns a command (operator action or
// step result) into new events by walking the session's workflow definition (decide.ts, with
// transition.ts, interpret.ts and prompt.ts). No I/O, no clock, no random ids: those come in
// through `DecideContext` (context.ts), so every transition is reproducible from the log.
// Generic in its extension's slice `S` (extension.ts): the application composes the engine
// with Forge's extension and the built-in workflows in server/task-engine.ts, and every
// caller outside the engine takes it from there.
export type { DecideContext, Emitted, TaskCommand, TaskCommandOf } from "./commands";
export { decideContext, definitionFor } from "./context";
export { decide, hasConfirmSignal, requireActive } from "./decide";
export type {
  EngineGuard,
  ExtensionGuard,
  ExtensionOutputKind,
  Interpretation,
  OutputReading,
  Staged,
  StagedStepInput,
  WorkflowExtension,
} from "./extension";
export { workflowReactor, WORKFLOW_ACTOR, type WorkflowReactor } from "./reactor";
export {
  applyEmitted,
  evolveWith,
  foldWith,
  initialTaskState,
  noStages,
  noUsage,
  outcomeOf,
  startedTask,
  type ActiveTask,
  type FinishedTask,
  type NoTask,
  type PersonNeeded,
  type SliceFold,
  type Stages,
  type StartedTask,
  type StepRef,
  type TaskConfig,
  type TaskState,
  type Usage,
} from "./state";
export { taskFoldOf, TASK_FOLD_VERSION } from "./task-fold";
