// What the engine decides with besides a session's state: the session's workflow
// definition, the extension, fresh step ids (time-ordered, like every step's), and the
// default step limits (attempts, timeout) for sessions that recorded none. The composed
// engine (server/task-engine.ts) builds it here for operator actions (tasks), the reactor
// and reruns alike, so every decision uses the same.
import { AppError } from "../errors";
import { timeOrderedId } from "../events/ids";
import type { DecideContext } from "./commands";
import { loadDefinition, type WorkflowDefinition } from "./definition";
import type { WorkflowExtension } from "./extension";
import type { TaskState } from "./state";

/** One attempt plus three retries (1 s, 2 s, 4 s) for retryable agent failures. */
export const AGENT_STEP_MAX_ATTEMPTS = 4;
/** How long a step may run (the runner's queue uses it too for steps scheduled without one). */
export const DEFAULT_STEP_TIMEOUT_MS = 10 * 60_000;

/** Checked snapshots of user workflows, by the TaskStarted data that holds them. */
const snapshots = new WeakMap<object, WorkflowDefinition>();

/**
 * The session's workflow: the snapshot it started with (a user workflow), else the
 * built-in named by id (among those the application composed the engine with). A snapshot
 * passes the same checks again: an event edited by hand cannot smuggle in a definition the
 * engine would not have started.
 */
export function definitionFor<S>(state: TaskState<S>, builtins: Readonly<Record<string, WorkflowDefinition>>): WorkflowDefinition {
  if (state.status === "none") throw new AppError("INTERNAL", "the session has no task, so no workflow");
  const snapshot = state.config.definition;
  if (snapshot) {
    let def = snapshots.get(snapshot);
    if (!def) {
      def = loadDefinition(snapshot);
      snapshots.set(snapshot, def);
    }
    return def;
  }
  const def = builtins[state.config.workflow];
  if (!def) throw new AppError("INTERNAL", `unknown workflow "${state.config.workflow}"`);
  return def;
}

export function decideContext<S>(definition: WorkflowDefinition, extension: WorkflowExtension<S>): DecideContext<S> {
  return {
    definition,
    extension,
    newId: timeOrderedId,
    maxAttempts: AGENT_STEP_MAX_ATTEMPTS,
    stepTimeoutMs: DEFAULT_STEP_TIMEOUT_MS,
    now: () => Date.now(),
  };
}
