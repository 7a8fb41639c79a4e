// Forge as the workflow engine's extension (server/workflow/extension.ts; docs/forge.md):
// its slice of a task and the fold of it (state.ts), the guards of a modify session's
// change request, the reading of drafts, critiques and a failed check's route (outputs.ts),
// and what a staged step's input and prompt add (steps.ts). Composed with the engine in
// server/task-engine.ts.
import type { WorkflowExtension } from "../workflow/engine";
import { ARTIFACT_PATHS, type ChangeRequest } from "./artifacts";
import { readCritique, readDraft, readRoute } from "./outputs";
import { pipelineFold, type Pipeline } from "./state";
import { checkCommands, frozenArtifacts, stagedInput, stagePrompt } from "./steps";

/** A modify session's change request, when its triage wrote a valid one. */
function changeRequest(pipeline: Pipeline): ChangeRequest | null {
  const entry = pipeline.artifacts[ARTIFACT_PATHS.changeRequest];
  return entry && !entry.problems.length ? (entry.json as ChangeRequest) : null;
}

/** Whether the change request names `layer`: the pipeline runs again from the earliest layer it touches (req F5). */
function touches(pipeline: Pipeline, layer: ChangeRequest["layers"][number]): boolean {
  return !!changeRequest(pipeline)?.layers.includes(layer);
}

export const forgeExtension: WorkflowExtension<Pipeline> = {
  ...pipelineFold,
  guards: {
    modifying: (task) => task.pipeline.change !== null,
    change_invalid: (task) => !changeRequest(task.pipeline),
    layer_prd: (task) => touches(task.pipeline, "prd"),
    layer_design: (task) => touches(task.pipeline, "design"),
    layer_plan: (task) => touches(task.pipeline, "plan"),
  },
  outputs: { draft: readDraft, critique: readCritique, route: readRoute },
  // A draft's JSON artifacts are read for the rules (markdown is stored, not read).
  textsToRead: (output) =>
    (output.forge?.artifacts ?? []).filter((a) => a.path.endsWith(".json")).map((a) => ({ path: a.path, blob: a.blob })),
  frozen: frozenArtifacts,
  stagedInput,
  commands: checkCommands,
  prompt: stagePrompt,
};
