// What Forge adds to a staged step (req F2, F4, F5, F9, F13; docs/forge.md): the artifacts
// the runner writes first (a person's edits among them), the globs the agent may write, the
// person's edits a redraft must keep, the artifacts attached to the prompt, the feedback
// history, a modify session's patch; what its prompt says about the stage's artifacts and
// feedback; the Check commands the coder listed; and what a completed stage freezes.
import type { ActiveTask, Staged, StagedStepInput } from "../workflow/engine";
import type { StepSpec } from "../workflow/definition";
import type { StepInput } from "../events/step-contract";
import { ARTIFACT_PATHS, type CodeMetadata } from "./artifacts";
import { planDelta, planDigest } from "./patch";
import type { Pipeline } from "./state";
import { threadIndexAfter } from "../workflow/prompt";

type Task = ActiveTask<Pipeline>;

/**
 * What the runner does around a staged step: the artifacts as recorded are written first
 * (a person's edits among them), only the stage's globs may be written (by its actor; a
 * critic writes nothing), the person's edits are kept through a redraft, and the stage's
 * artifacts are collected after.
 */
export function stagedInput(state: Task, stage: Staged, spec: StepSpec): StagedStepInput {
  const { pipeline } = state;
  const drafts = spec.output === "draft";
  const artifacts = Object.entries(pipeline.artifacts);
  return {
    stage: stage.name,
    iteration: state.stages.iterations[stage.name] ?? 1,
    writes: drafts ? stage.spec.writes : [],
    collect: drafts ? stage.spec.artifacts : [],
    materialize: artifacts.filter(([, a]) => a.by === "person").map(([path, a]) => ({ path, blob: a.blob })),
    protect: drafts
      ? stage.spec.artifacts.flatMap((path) => (pipeline.edits[path] ?? []).map((e) => ({ path, base: e.base, edited: e.edited })))
      : [],
    // A stage reads its own drafts and the completed stages' artifacts: the earlier stages', and
    // in a replan the later ones' too (an open stage's drafts, never). Each is shown right after
    // the message of the step that wrote its version, where it stays while the session goes on;
    // those written before the thread's window, before the thread, in the order they were
    // written (docs/scaling.md, "Prompt economics").
    attach: artifacts
      .filter(([, a]) => a.stage === stage.name || state.stages.completed.includes(a.stage))
      .map(([path, a]) => ({ path, blob: a.blob, shownAfter: a.shownAfter, afterMessage: threadIndexAfter(state, a.shownAfter) }))
      .sort((a, b) => a.shownAfter - b.shownAfter)
      .map(({ path, blob, afterMessage }) => ({ path, blob, ...(afterMessage !== undefined ? { afterMessage } : {}) })),
    feedbackHistory: `${JSON.stringify(pipeline.feedback, null, 2)}\n`,
    ...(pipeline.change ? { modifying: true } : {}),
    ...(pipeline.change && drafts && stage.spec.artifacts.includes(ARTIFACT_PATHS.patch)
      ? {
          patch: {
            baseCommit: pipeline.change.baseCommit,
            tasks: planDelta(pipeline.change.basePlan, planDigest(pipeline.artifacts[ARTIFACT_PATHS.plan]?.json)),
          },
        }
      : {}),
  };
}

/** What a staged step's prompt says after its stage line: what to write, a person's edits to keep, the stage's feedback. */
export function stagePrompt(state: Task, stage: Staged, spec: StepSpec): string[] {
  const parts: string[] = [];
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
  return parts;
}

/** The Check commands the coder listed in code_metadata.json, when it did. */
export function checkCommands(state: Task): StepInput["commands"] | null {
  const metadata = state.pipeline.artifacts[ARTIFACT_PATHS.codeMetadata]?.json as CodeMetadata | undefined;
  if (!metadata?.checks.length) return null;
  return metadata.checks.map((c) => ({ argv: c.argv, expect: { exitCode: c.expect?.exitCode ?? 0 } }));
}

/** A completed stage's artifacts, by hash: immutable from then on (StageCompleted). */
export function frozenArtifacts(state: Task, stage: string): Array<{ path: string; hash: string }> {
  return Object.entries(state.pipeline.artifacts)
    .filter(([, a]) => a.stage === stage)
    .map(([path, a]) => ({ path, hash: a.hash }));
}
