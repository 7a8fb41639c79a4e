// What a step's agent is told, stable part first (docs/scaling.md, "Prompt economics"): the
// session's context that stays byte-identical across its calls (the workflow's preamble, the task, the TaskSpec for
// those who carry it out), then what this call asks and what changed (the state's instruction,
// a staged step's stage and iteration and what the extension adds for it, what the previous
// round left unresolved). Providers cache prompts by exact prefix, so nothing that varies per
// call may come before the end of the stable part. Plus the session's thread as context.
import type { ThreadMessage } from "../agents/types";
import type { StageSpec, StepSpec } from "./definition";
import type { WorkflowExtension } from "./extension";
import type { ActiveTask } from "./state";

/** The stage a staged workflow's step belongs to, with its cap. */
export interface PromptStage {
  name: string;
  spec: StageSpec;
  cap: number;
}

/** A step's prompt in its two parts: `stable + changing` is what the agent is told. */
export interface PromptParts {
  /** The same for every call of the session that has it: the workflow's preamble, the task and the TaskSpec. */
  stable: string;
  /** This call's instruction and what changed since the last one. */
  changing: string;
}

export function promptParts<S>(
  extension: Pick<WorkflowExtension<S>, "prompt">,
  state: ActiveTask<S>,
  spec: StepSpec,
  stage: PromptStage | null = null,
  preamble?: string,
): PromptParts {
  const stable = [`${preamble ? `${preamble}\n\n` : ""}${stage ? "Idea" : "Task"}:\n${state.config.prompt}`];
  if (state.taskSpec && (spec.role === "executor" || spec.role === "tester")) {
    stable.push(`\nTaskSpec:\n${JSON.stringify(state.taskSpec, null, 2)}`);
  }
  const changing = [`\n${spec.instruction}`];
  if (stage) {
    changing.push(
      `\nStage: ${stage.name} (${stage.spec.title}), iteration ${state.stages.iterations[stage.name] ?? 1} of at most ${stage.cap}.`,
      ...extension.prompt(state, stage, spec),
    );
  }
  if (
    (spec.phase === "build" || spec.phase === "execute" || spec.phase === "draft" || spec.output === "route") &&
    state.openIssues.length
  ) {
    changing.push(`\nResolve these from the previous round:\n${state.openIssues.map((i) => `- ${i}`).join("\n")}`);
  }
  return { stable: `${stable.join("\n")}\n`, changing: changing.join("\n") };
}

/** The whole prompt: the stable part, then the changing one. */
export function promptFor<S>(
  extension: Pick<WorkflowExtension<S>, "prompt">,
  state: ActiveTask<S>,
  spec: StepSpec,
  stage: PromptStage | null = null,
  preamble?: string,
): string {
  const { stable, changing } = promptParts(extension, state, spec, stage, preamble);
  return stable + changing;
}

/**
 * The thread's window the task's state keeps (state.ts THREAD_SHOWN): at least its latest
 * messages, each shortened, from a start that moves in steps so that successive calls share it.
 */
export function threadContext<S>(state: ActiveTask<S>): ThreadMessage[] {
  return state.thread.map((m) => ({ from: m.from, text: m.text }));
}

/**
 * The index in threadContext of the last message of the first `messages` the thread had (what a
 * commit or an artifact recorded then is shown after), or undefined when that message is no longer
 * in the window (or there was none): it is then shown before the thread or after it.
 */
export function threadIndexAfter<S>(state: Pick<ActiveTask<S>, "thread" | "threadCount">, messages: number | null): number | undefined {
  if (messages === null || messages < 1) return undefined;
  const index = messages - 1 - (state.threadCount - state.thread.length);
  return index >= 0 && index < state.thread.length ? index : undefined;
}
