// What a step's agent is told: the state's instruction, the task, the TaskSpec for those
// who carry it out, and what the previous round left unresolved; plus the end of the
// session's thread as context.
import type { ThreadMessage } from "../agents/types";
import type { StageSpec, StepSpec } from "./definition";
import type { ActiveTask } from "./state";

const THREAD_MESSAGES = 20;
const THREAD_PREVIEW_CHARS = 4000;

/** The stage a staged workflow's step belongs to, with its cap. */
export interface PromptStage {
  name: string;
  spec: StageSpec;
  cap: number;
}

export function promptFor(state: ActiveTask, spec: StepSpec, stage: PromptStage | null = null): string {
  const parts = [spec.instruction, `\n${stage ? "Idea" : "Task"}:\n${state.config.prompt}`];
  if (stage) {
    parts.push(
      `\nStage: ${stage.name} (${stage.spec.title}), iteration ${state.pipeline.iterations[stage.name] ?? 1} of at most ${stage.cap}.`,
    );
    if (spec.output === "draft") {
      parts.push(`Write: ${stage.spec.artifacts.join(", ")}. Anything outside ${stage.spec.writes.join(" ")} is discarded.`);
      const edited = stage.spec.artifacts.filter((p) => state.pipeline.edits[p]?.length);
      if (edited.length) parts.push(`A person edited ${edited.join(", ")}: keep their text exactly as it is.`);
    }
    const feedback = state.pipeline.feedback.filter((f) => f.stage === stage.name);
    if (feedback.length) {
      parts.push(
        `\nFeedback on this stage so far (oldest first):\n${feedback.map((f) => `- [${f.source}${f.severity === "critical" ? ", critical" : ""}, iteration ${f.iteration}] ${f.text}`).join("\n")}`,
      );
    }
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
export function threadContext(state: ActiveTask): ThreadMessage[] {
  return state.thread.slice(-THREAD_MESSAGES).map((m) => ({ from: m.from, text: m.text.slice(0, THREAD_PREVIEW_CHARS) }));
}
