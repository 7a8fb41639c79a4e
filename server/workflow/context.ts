// What the engine decides with besides a session's state: the session's workflow
// definition, fresh step ids, and the step limits (attempts, timeout). Operator actions
// (tasks), the reactor and reruns all build it here, so every decision uses the same.
import crypto from "node:crypto";
import { AppError } from "../errors";
import { BUILTIN_WORKFLOWS } from "./builtin";
import type { DecideContext } from "./commands";
import type { WorkflowDefinition } from "./definition";
import type { TaskState } from "./state";

/** One attempt plus three retries (1 s, 2 s, 4 s) for retryable agent failures. */
export const AGENT_STEP_MAX_ATTEMPTS = 4;
/** How long a step may run (the runner's queue uses it too for steps scheduled without one). */
export const DEFAULT_STEP_TIMEOUT_MS = 10 * 60_000;

export function definitionFor(state: TaskState): WorkflowDefinition {
  const id = state.status === "none" ? undefined : state.config.workflow;
  const def = id ? BUILTIN_WORKFLOWS[id] : undefined;
  if (!def) throw new AppError("INTERNAL", `unknown workflow "${id}"`);
  return def;
}

export function decideContext(definition: WorkflowDefinition): DecideContext {
  return { definition, newId: () => crypto.randomUUID(), maxAttempts: AGENT_STEP_MAX_ATTEMPTS, stepTimeoutMs: DEFAULT_STEP_TIMEOUT_MS };
}
