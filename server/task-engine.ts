// The application's task engine: the generic workflow engine (server/workflow) with the
// built-in workflows. Every caller outside the engine (tasks, sessions, export, delivery,
// the runners' reaction, the API, config) takes the engine from here.
export {
  decide,
  evolve,
  foldTask,
  hasConfirmSignal,
  initialTaskState,
  outcomeOf,
  startedTask,
  taskFold,
  TASK_FOLD_VERSION,
  type ActiveTask,
  type DecideContext,
  type Emitted,
  type FinishedTask,
  type NoTask,
  type StartedTask,
  type StepRef,
  type TaskCommand,
  type TaskConfig,
  type TaskState,
} from "./workflow/engine";
export { BUILTIN_WORKFLOWS } from "./workflow/builtin";
export { decideContext, definitionFor } from "./workflow/context";
export { reactToReactionFailure, reactToStepOutcome, WORKFLOW_ACTOR } from "./workflow/reactor";
