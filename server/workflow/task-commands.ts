// Decisions on a task session go through the command handler (events/command-handler.ts): the
// session's state folded from the nearest snapshot under its stream's lock, the workflow's
// decision on it, appended at the version read. Operators' actions (server/tasks) and the
// runner's reactions to step outcomes (./reactor.ts) decide this way alike.
import { AppError } from "../errors";
import { commandHandler, foldedState, type Decision } from "../events/command-handler";
import type { TaskCommand } from "./commands";
import { decideContext, definitionFor } from "./context";
import { decide } from "./decide";
import type { StartedTask, TaskState } from "./state";
import { taskFold } from "./task-fold";

export const taskCommands = commandHandler(foldedState(taskFold));

/** The task of a session, or NOT_FOUND naming it. */
export function requireTask(sessionId: string, state: TaskState): StartedTask {
  if (state.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  return state;
}

/** The workflow's decision on `command` (`command` may be made from the task as it is). */
export function taskDecision(command: TaskCommand | ((task: StartedTask) => TaskCommand)): Decision<TaskState> {
  return (state, at) => {
    const task = requireTask(at.streamId, state);
    return decide(task, typeof command === "function" ? command(task) : command, decideContext(definitionFor(task)));
  };
}
