// The Forge pipeline (req F1–F4, F8, F12, F13; docs/forge.md) as a workflow definition: data
// run by the same engine and runners as every other workflow. Seven stages; PRD, Design,
// Plan and Coding are actor-critic loops; Idea has an edit-only gate, PRD, Design and Plan
// a person's gate (edit / feedback / pass), Coding none. A loop the critic cannot end, the
// cap, or an agent that failed beyond its retries stops the pipeline for a person.
import { ARTIFACT_PATHS as A } from "./artifacts";

/**
 * What every agent of a Forge session is told first (the definition's preamble): the pipeline,
 * where its artifacts are, and how a critic's reply is read, so that drafters know how they are
 * judged and each critic's call carries only what it is asked (docs/forge.md).
 */
const PREAMBLE =
  'This is a Forge session: an idea taken through PRD, design, plan and coding to delivery, each stage\'s artifacts under .forge/, drafted by an actor and judged by a critic. A critic replies with JSON only: {"decision": "pass" | "revise", "summary": string, "findings": [{"id": string (a stable lower-kebab id: the same problem keeps its id in every round), "severity": "blocking" | "major" | "minor", "message": string}]}. Blocking findings forbid a pass.';

const CRITIQUE_FORMAT = "Reply with the critic's JSON described at the top.";

/** Back to a stage's actor for another iteration, or, at the stage's cap, to its stop for a person. */
function backTo(stage: string, reason: string) {
  return [
    { target: `${stage}_draft`, guard: "under_cap", iterate: true, reason },
    { target: `${stage}_stopped`, guard: "at_cap", reason },
  ];
}

/** The states of one actor-critic stage with a person's gate: draft → review → critic. */
function gatedLoop(stage: string, next: string, actor: { role: string; instruction: string }, critic: string) {
  return {
    [`${stage}_draft`]: {
      type: "step",
      stage,
      description: `${stage}: the actor drafts.`,
      step: { role: actor.role, output: "draft", phase: "draft", instruction: actor.instruction },
      on: {
        done: [
          { target: `${stage}_review`, guard: "gate_on" },
          { target: `${stage}_critic`, guard: "gate_off" },
        ],
      },
    },
    [`${stage}_review`]: {
      type: "wait",
      stage,
      description: `${stage}: a person edits the draft, gives feedback, or passes it to the critic.`,
      on: {
        pass: [{ target: `${stage}_critic` }],
        feedback: [{ target: `${stage}_draft`, iterate: true, reason: "feedback" }],
        abort: [{ target: "failed", reason: "aborted by a person" }],
      },
    },
    ...criticStates(stage, next, critic),
  };
}

/** The critic of a stage, and where the pipeline stops for a person when the loop does not end. */
function criticStates(stage: string, next: string, critic: string) {
  return {
    [`${stage}_critic`]: {
      type: "step",
      stage,
      description: `${stage}: the critic validates (strict JSON), joined by the rules checked by code.`,
      step: { role: "reviewer", output: "critique", phase: "critique", instruction: `${critic} ${CRITIQUE_FORMAT}` },
      on: {
        pass: [{ target: next }],
        revise: backTo(stage, "critic_revise"),
        escalate: [{ target: `${stage}_stopped`, reason: "anti-loop" }],
      },
    },
    [`${stage}_stopped`]: {
      type: "wait",
      stage,
      description: `${stage}: the loop did not end (a repeated or returning finding, or the cap); a person decides.`,
      on: {
        feedback: [{ target: `${stage}_draft`, iterate: true, reason: "guidance after a stop" }],
        pass: [{ target: next, reason: "passed by a person over the critic" }],
        abort: [{ target: "failed", reason: "aborted by a person" }],
      },
    },
  };
}

export const FORGE_DEFINITION = {
  id: "forge",
  version: 1,
  title: "Forge: idea → PRD → design → plan → coding → check → delivery",
  preamble: PREAMBLE,
  modes: ["new"],
  initial: "start",
  maxIterations: 5,
  global: { cancel: "cancelled", step_failed: "agent_failed", budget_exhausted: "budget_exhausted" },
  // A modify fork of a finished pipeline (req F5) starts with the triage of the change.
  modify: { state: "modify_triage" },
  stages: {
    /** Entered only by a modify session: the change's triage. */
    change: { title: "Change", maxIterations: 3, writes: [A.changeRequest], artifacts: [A.changeRequest] },
    idea: { title: "Idea", maxIterations: 5, writes: [A.idea], artifacts: [A.idea] },
    prd: {
      title: "Requirements (PRD)",
      maxIterations: 5,
      writes: [A.prd, A.requirements, A.features],
      artifacts: [A.prd, A.requirements, A.features],
    },
    design: { title: "Design", maxIterations: 5, writes: [A.design, A.designSpec], artifacts: [A.design, A.designSpec] },
    plan: { title: "Plan", maxIterations: 5, writes: [A.plan], artifacts: [A.plan] },
    coding: { title: "Coding", maxIterations: 3, writes: ["**", "!.forge/**", A.codeMetadata], artifacts: [A.codeMetadata] },
    check: { title: "Check", maxIterations: 1, writes: [], artifacts: [] },
    delivery: { title: "Delivery", maxIterations: 1, writes: [A.deliveryReport], artifacts: [A.deliveryReport] },
    /** A modify session's delivery: the change report, with the patch the runner computes. */
    report: { title: "Change report", maxIterations: 1, writes: [A.changeReport], artifacts: [A.changeReport, A.patch] },
  },
  states: {
    start: { type: "wait", description: "A person gave an idea.", on: { start: [{ target: "idea_draft" }] } },
    idea_draft: {
      type: "step",
      stage: "idea",
      description: "idea: the idea is written down as idea.md.",
      step: {
        role: "planner",
        output: "draft",
        phase: "draft",
        instruction: `Write the idea down in ${A.idea}: the problem, who it is for, what it must do, what it will not do. Keep it short and simple.`,
      },
      on: {
        done: [
          { target: "idea_review", guard: "gate_on" },
          { target: "prd_draft", guard: "gate_off" },
        ],
      },
    },
    idea_review: {
      type: "wait",
      stage: "idea",
      description: "idea: a person may edit idea.md, then passes it on (no feedback loop).",
      on: { pass: [{ target: "prd_draft" }], abort: [{ target: "failed", reason: "aborted by a person" }] },
    },
    ...gatedLoop(
      "prd",
      "design_draft",
      {
        role: "planner",
        instruction: `Write the product requirements: ${A.prd} (prose), ${A.requirements} as {"requirements": [{"id", "title", "description", "priority"?: "must"|"should"|"could"}]} with 3 to 6 core requirements, and ${A.features} as {"features": [{"id", "name", "description", "requirements": [requirement ids]}]} with 2 to 4 core features. Leave out performance, CI and monitoring unless the idea asks for them.`,
      },
      "Check the PRD: 3 to 6 core requirements, 2 to 4 core features, each feature tied to requirements, nothing the idea does not need (performance, CI, monitoring).",
    ),
    ...gatedLoop(
      "design",
      "plan_draft",
      {
        role: "planner",
        instruction: `Design the simplest architecture that meets the PRD: ${A.design} (prose) and ${A.designSpec} as {"architecture"?, "components": [{"id", "name", "responsibility", "technology"?, "justification"?}], "storage"?} with 2 to 4 components. Prefer a monolith and simple storage (files, SQLite); no microservices, caches or queues unless a justification says why.`,
      },
      "Check the design: 2 to 4 components, a monolith with simple storage, no microservice, cache or queue without a justification, every feature of the PRD served.",
    ),
    ...gatedLoop(
      "plan",
      "coding_draft",
      {
        role: "planner",
        instruction: `Plan the work in ${A.plan} as {"tasks": [{"id", "title", "description"?, "feature": feature id, "dependsOn": [task ids]}]}: 5 to 12 core tasks, dependencies without cycles, every feature covered, no test or deployment tasks.`,
      },
      "Check the plan: 5 to 12 core tasks, dependencies that make sense and have no cycle, every feature covered, no test or deployment tasks.",
    ),
    coding_draft: {
      type: "step",
      stage: "coding",
      description: "coding: the coder implements every planned task in one pass.",
      step: {
        role: "coder",
        output: "draft",
        phase: "draft",
        instruction: `Implement every task of the plan in the workspace, following the design. Write no tests unless the PRD asks for them. Then write ${A.codeMetadata} as {"files": [paths], "tasks": [{"id", "status": "done"|"in_progress"|"pending"}], "checks": [{"argv": [command, ...]}]}: the checks are the commands that show the code works (they run through the project's allowlist).`,
      },
      on: { done: [{ target: "coding_critic" }] },
    },
    ...criticStates(
      "coding",
      "check_run",
      "Check the code against the plan and the design: every task done, no task's work missing, nothing beyond the plan, no tests unless the PRD asks.",
    ),
    check_run: {
      type: "step",
      stage: "check",
      description: "check: the coder's checks run through the project's allowlist.",
      step: { role: "tester", output: "commands", phase: "test", instruction: "Run the checks listed in code_metadata.json." },
      on: {
        tests_passed: [{ target: "change_report", guard: "modifying" }, { target: "delivery_draft" }],
        tests_failed: [{ target: "check_triage", reason: "check_failed" }],
      },
    },
    check_triage: {
      type: "step",
      stage: "check",
      description: "check: a failed check goes back to the stage it names (a fix loop in coding, or a replan), within that stage's cap.",
      step: {
        role: "reviewer",
        output: "route",
        phase: "critique",
        instruction:
          'The checks failed (below). Name the stage the failure comes from. Reply with JSON only: {"goto": "coding" | "plan" | "design" | "prd", "reason": string}: "coding" for a bug in the code (a fix loop), an earlier stage when its artifacts are wrong or missing something.',
      },
      on: {
        goto_coding: backTo("coding", "check_failed"),
        goto_plan: backTo("plan", "check_failed: replan"),
        goto_design: backTo("design", "check_failed: redesign"),
        goto_prd: backTo("prd", "check_failed: requirements"),
      },
    },
    delivery_draft: {
      type: "step",
      stage: "delivery",
      description: "delivery: the delivery report.",
      step: {
        role: "planner",
        output: "draft",
        phase: "draft",
        instruction: `Write ${A.deliveryReport}: what was built, how to run it, what the checks showed, what is left out on purpose.`,
      },
      on: { done: [{ target: "completed" }] },
    },
    modify_triage: {
      type: "step",
      stage: "change",
      description: "change: the change is triaged — the layers it touches, its risk, the components it affects — into a change request.",
      step: {
        role: "planner",
        output: "draft",
        phase: "draft",
        instruction: `A person asks for a change of the delivered work (below, "Change requested"). Triage it into ${A.changeRequest} as {"summary": string, "layers": ["prd" | "design" | "plan" | "code", ...] (every layer the change touches: "prd" when requirements change, "design" when components change, "plan" when tasks change, "code" when only the code does), "risk": "low" | "medium" | "high", "components": [design component ids], "constraints": [string], "acceptanceCriteria": [string, at least one]}. Touch as few layers as the change needs: the pipeline runs again from the earliest one, and keeps everything else.`,
      },
      on: {
        done: [
          { target: "change_stopped", guard: "change_invalid", reason: "the change request is not valid" },
          { target: "prd_draft", guard: "layer_prd", reason: "the change touches the requirements" },
          { target: "design_draft", guard: "layer_design", reason: "the change touches the design" },
          { target: "plan_draft", guard: "layer_plan", reason: "the change touches the plan" },
          { target: "coding_draft", reason: "the change touches the code only" },
        ],
      },
    },
    change_stopped: {
      type: "wait",
      stage: "change",
      description: "change: the triage wrote no valid change request; a person gives guidance (the triage runs again) or aborts.",
      on: {
        feedback: [{ target: "modify_triage", iterate: true, reason: "guidance on the change request" }],
        abort: [{ target: "failed", reason: "aborted by a person" }],
      },
    },
    change_report: {
      type: "step",
      stage: "report",
      description: "report: a modify session's pull-request-style report; the runner adds the patch metadata from git.",
      step: {
        role: "planner",
        output: "draft",
        phase: "draft",
        instruction: `Write ${A.changeReport} as a pull request description with the sections "## Summary", "## Change details", "## Scope analysis" (the layers and components the change request named, and what was kept) and "## Testing" (what the checks showed). The patch itself (${A.patch}: files, lines, plan tasks kept) is attached; Cat Cafe appends it to the report as "## Patch".`,
      },
      on: { done: [{ target: "completed" }] },
    },
    agent_failed: {
      type: "wait",
      description: "An agent failed beyond its retries: a person chooses retry, guidance (then retry) or abort.",
      on: { abort: [{ target: "failed", reason: "aborted by a person" }] },
    },
    completed: { type: "terminal", outcome: "completed", description: "Delivered: every stage completed." },
    failed: { type: "terminal", outcome: "failed", description: "Stopped: a person aborted; artifacts and error context kept." },
    budget_exhausted: { type: "terminal", outcome: "budget_exhausted", description: "The budget ran out; the artifacts so far are kept." },
    cancelled: { type: "terminal", outcome: "cancelled", description: "An operator cancelled the run." },
  },
};
