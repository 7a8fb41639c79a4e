// What a step's agent is told: the state's instruction, the task, the TaskSpec for those
// who carry it out, and what the previous round left unresolved; plus the end of the
// session's thread as context.
import type { ThreadMessage } from "../agents/types";
import type { StepSpec } from "./definition";
import type { ActiveTask } from "./state";

const THREAD_MESSAGES = 20;
const THREAD_PREVIEW_CHARS = 4000;

export function promptFor(state: ActiveTask, spec: StepSpec): string {
  const parts = [spec.instruction, `\nTask:\n${state.config.prompt}`];
  if (state.taskSpec && (spec.role === "executor" || spec.role === "tester")) {
    parts.push(`\nTaskSpec:\n${JSON.stringify(state.taskSpec, null, 2)}`);
  }
  if ((spec.phase === "build" || spec.phase === "execute") && state.openIssues.length) {
    parts.push(`\nResolve these from the previous round:\n${state.openIssues.map((i) => `- ${i}`).join("\n")}`);
  }
  return parts.join("\n");
}

/** The latest messages of the thread, each shortened. */
export function threadContext(state: ActiveTask): ThreadMessage[] {
  return state.thread.slice(-THREAD_MESSAGES).map((m) => ({ from: m.from, text: m.text.slice(0, THREAD_PREVIEW_CHARS) }));
}
