// What a step's agent is told: the state's instruction, the task, a staged step's stage and
// what the extension adds for it, the TaskSpec for those who carry it out, and what the
// previous round left unresolved; plus the end of the session's thread as context.
import type { ThreadMessage } from "../agents/types";
import type { StageSpec, StepSpec } from "./definition";
import type { WorkflowExtension } from "./extension";
import { THREAD_KEPT, THREAD_TEXT_CHARS, type ActiveTask } from "./state";

/** The stage a staged workflow's step belongs to, with its cap. */
export interface PromptStage {
  name: string;
  spec: StageSpec;
  cap: number;
}

export function promptFor<S>(
  extension: Pick<WorkflowExtension<S>, "prompt">,
  state: ActiveTask<S>,
  spec: StepSpec,
  stage: PromptStage | null = null,
): string {
  const parts = [spec.instruction, `\n${stage ? "Idea" : "Task"}:\n${state.config.prompt}`];
  if (stage) {
    parts.push(
      `\nStage: ${stage.name} (${stage.spec.title}), iteration ${state.stages.iterations[stage.name] ?? 1} of at most ${stage.cap}.`,
      ...extension.prompt(state, stage, spec),
    );
  }
  if (state.taskSpec && (spec.role === "executor" || spec.role === "tester")) {
    parts.push(`\nTaskSpec:\n${JSON.stringify(state.taskSpec, null, 2)}`);
  }
  if (
    (spec.phase === "build" || spec.phase === "execute" || spec.phase === "draft" || spec.output === "route") &&
    state.openIssues.length
  ) {
    parts.push(`\nResolve these from the previous round:\n${state.openIssues.map((i) => `- ${i}`).join("\n")}`);
  }
  return parts.join("\n");
}

/** The latest messages of the thread, each shortened. */
export function threadContext<S>(state: ActiveTask<S>): ThreadMessage[] {
  return state.thread.slice(-THREAD_KEPT).map((m) => ({ from: m.from, text: m.text.slice(0, THREAD_TEXT_CHARS) }));
}
