// Simulated agents (the scripted brain: canned replies, no AI model) said plainly, before a
// task starts and on its pages (docs/configuration.md, "Simulated agents"): whether a
// session's or a project's agents are all simulated, and what they will do in a workflow.

/** The demo project's id (server/demo/content.ts DEMO_PROJECT_ID; a unit test keeps them equal). */
export const DEMO_PROJECT = "demo";

/** True when there are agents and every one is the scripted brain. */
export function allSimulated(agents: ReadonlyArray<{ kind?: unknown } | null | undefined>): boolean {
  return agents.length > 0 && agents.every((a) => a?.kind === "scripted");
}

/**
 * What simulated agents do in `workflow` on `projectId`: the demo plays its own script
 * (slugify(), a word counter, its conversation), any other project gets the stand-ins.
 */
export function simulatedWarning(workflow: string, projectId: string): string {
  const demo = projectId === DEMO_PROJECT;
  if (workflow === "forge") {
    return demo
      ? "In Forge they play the demo's script whatever your idea: the PRD, design, plan and code they write are about a word counter."
      : "In Forge they write no PRD, design or code: the pipeline stops at its first stage and waits for a person.";
  }
  if (workflow === "conversation") {
    return demo
      ? "In a conversation their replies, ballots and SOPs come from the demo's script, whatever is asked."
      : "In a conversation they answer every call with the same canned line.";
  }
  return demo
    ? "They follow the demo's script whatever you ask — a roundtable about slugify(), its fix, an approving review and the real test run — so the task runs to its end, but does not do what your prompt says."
    : "They cannot do what your prompt says: the coder commits a note of the task under catcafe-simulated/, the reviewer's verdict is canned, and the tester runs the project's own allowlisted command for real — the task is approved only if that passes.";
}
