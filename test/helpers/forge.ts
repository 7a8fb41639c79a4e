// The Forge demo's simulated agents for tests: the demo's scripts by stage with no pause
// between chunks, changed as a test needs, as a project's agents (each answers by stage).
import { FORGE_DEMO_SCRIPTS, instantScripts } from "../../server/demo/forge-content";
import type { ForgeStepInput } from "../../server/events/step-contract";
import { ARTIFACT_PATHS } from "../../server/forge/artifacts";

export type ForgeScripts = Record<"planner" | "coder" | "reviewer", Record<string, Array<Record<string, unknown>>>>;

/** The demo's scripts, instant. */
export function quickForgeScripts(): ForgeScripts {
  return Object.fromEntries(
    Object.entries(FORGE_DEMO_SCRIPTS).map(([role, stages]) => [role, instantScripts(stages)]),
  ) as unknown as ForgeScripts;
}

/** A project's agents answering by stage with `scripts` (the tester is never asked in the pipeline). */
export function forgeAgents(scripts: ForgeScripts) {
  const agent = (role: keyof ForgeScripts) => ({
    kind: "scripted",
    id: `${role}-sim`,
    responses: [{ reply: "nothing" }],
    byStage: scripts[role],
  });
  return { planner: agent("planner"), coder: agent("coder"), reviewer: agent("reviewer"), tester: [{ reply: "t" }] };
}

/** A Forge agent step's input as the workflow schedules it: the PRD stage's first draft, nothing to attach or protect. */
export function forgeStepInput(over: Partial<ForgeStepInput> = {}): ForgeStepInput {
  return {
    stage: "prd",
    iteration: 1,
    writes: [ARTIFACT_PATHS.prd],
    collect: [],
    materialize: [],
    protect: [],
    attach: [],
    feedbackHistory: "[]\n",
    ...over,
  };
}
