// The application's task engine, composed: the generic workflow engine (server/workflow)
// with Forge's extension (server/forge/extension.ts: its slice of a task, its guards, its
// outputs, what its steps add) and the built-in workflows (review_loop and planning from
// the engine, forge from Forge). Forge's own command, a person's edit of a draft, is
// routed to Forge here. Every caller outside the engine (tasks, sessions, export, delivery,
// the runners' reaction, the API, config) takes the engine from this module, so neither
// the engine nor Forge names the other's callers, and the engine never imports Forge.
import { AppError } from "./errors";
import { commandHandler, foldedState, type Decision } from "./events/command-handler";
import type { FoldEvent } from "./events/types";
import type { StreamFold } from "./events/snapshots";
import { FORGE_DEFINITION } from "./forge/definition";
import { editArtifact, type ForgeCommand } from "./forge/edit";
import { forgeExtension } from "./forge/extension";
import type { Pipeline } from "./forge/state";
import { PLANNING_WORKFLOW, REVIEW_LOOP_WORKFLOW } from "./workflow/builtin";
import { loadDefinition, type WorkflowDefinition } from "./workflow/definition";
import {
  decide as decideWorkflow,
  decideContext as workflowContext,
  definitionFor as workflowDefinitionFor,
  evolveWith,
  foldWith,
  taskFoldOf,
  workflowReactor,
  type ActiveTask as EngineActiveTask,
  type DecideContext as EngineDecideContext,
  type Emitted,
  type FinishedTask as EngineFinishedTask,
  type StartedTask as EngineStartedTask,
  type TaskCommand as WorkflowCommand,
  type TaskState as EngineTaskState,
} from "./workflow/engine";

export {
  hasConfirmSignal,
  initialTaskState,
  outcomeOf,
  startedTask,
  TASK_FOLD_VERSION,
  WORKFLOW_ACTOR,
  type Emitted,
  type NoTask,
  type StepRef,
  type TaskConfig,
} from "./workflow/engine";
export type { Pipeline } from "./forge/state";
export { allVerdicts, stageFigures, type StageFigures, type StageVerdicts } from "./forge/stage-figures";

/** A session's task as the application's engine folds it: the engine's fields and Forge's pipeline. */
export type TaskState = EngineTaskState<Pipeline>;
export type StartedTask = EngineStartedTask<Pipeline>;
export type ActiveTask = EngineActiveTask<Pipeline>;
export type FinishedTask = EngineFinishedTask<Pipeline>;
export type DecideContext = EngineDecideContext<Pipeline>;
/** What the engine decides on: the workflow's commands, and Forge's. */
export type TaskCommand = WorkflowCommand | ForgeCommand;

/** The built-in workflows, by id: what a session names when it recorded no definition of its own. */
export const BUILTIN_WORKFLOWS: Record<string, WorkflowDefinition> = {
  review_loop: REVIEW_LOOP_WORKFLOW,
  planning: PLANNING_WORKFLOW,
  forge: loadDefinition(FORGE_DEFINITION),
};

export function evolve(state: TaskState, event: FoldEvent): TaskState {
  return evolveWith(forgeExtension, state, event);
}

export function foldTask(events: readonly FoldEvent[]): TaskState {
  return foldWith(forgeExtension, events);
}

/** The fold replays and snapshots use (server/events/fold-read.ts). */
export const taskFold: StreamFold<TaskState> = taskFoldOf(forgeExtension);

export function decide(state: TaskState, command: TaskCommand, ctx: DecideContext): Emitted[] {
  return command.type === "EditArtifact" ? editArtifact(state, command, ctx) : decideWorkflow(state, command, ctx);
}

/** The session's workflow: its own snapshot, else the built-in it names. */
export function definitionFor(state: TaskState): WorkflowDefinition {
  return workflowDefinitionFor(state, BUILTIN_WORKFLOWS);
}

export function decideContext(definition: WorkflowDefinition): DecideContext {
  return workflowContext(definition, forgeExtension);
}

/** The runners' reaction to a workflow step's outcome (server/app-runner.ts). */
export const { reactToStepOutcome, reactToReactionFailure } = workflowReactor(forgeExtension, BUILTIN_WORKFLOWS);

/**
 * Decisions on a task session go through the command handler (events/command-handler.ts): the
 * session's state folded from the nearest snapshot under its stream's lock, the engine's
 * decision on it, appended at the version read. Operators' actions (server/tasks) decide this
 * way, as the runners' reaction above does.
 */
export const taskCommands = commandHandler(foldedState(taskFold, (task) => ({ fsm: task.fsm, status: task.status })));

/** The task of a session, or NOT_FOUND naming it. */
export function requireTask(sessionId: string, state: TaskState): StartedTask {
  if (state.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  return state;
}

/** The engine's decision on `command` (`command` may be made from the task as it is). */
export function taskDecision(command: TaskCommand | ((task: StartedTask) => TaskCommand)): Decision<TaskState> {
  return (state, at) => {
    const task = requireTask(at.streamId, state);
    return decide(task, typeof command === "function" ? command(task) : command, decideContext(definitionFor(task)));
  };
}
