// The workflow engine as a pure decider (the Decider pattern): `evolve` folds a session's
// events into TaskState (state.ts), `decide` turns a command (operator action or step
// result) into new events by walking the session's workflow definition (decide.ts, with
// transition.ts, interpret.ts and prompt.ts). No I/O, no clock, no random ids: those come
// in through `DecideContext` (context.ts), so every transition is reproducible from the log.
// Callers outside the workflow import the engine from here.
export type { DecideContext, Emitted, TaskCommand } from "./commands";
export { decide, hasConfirmSignal } from "./decide";
export {
  evolve,
  foldTask,
  initialTaskState,
  outcomeOf,
  startedTask,
  type ActiveTask,
  type FinishedTask,
  type NoTask,
  type StartedTask,
  type StepRef,
  type TaskConfig,
  type TaskState,
} from "./state";
export { taskFold, TASK_FOLD_VERSION } from "./task-fold";
