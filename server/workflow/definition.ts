// Workflow definitions as data: states, transitions with guards, the step each state runs
// and the output it must produce. Built-in definitions and user-supplied JSON go through
// the same zod schema and the same static checks before they can run.
import { z } from "zod";
import { ZAgentRole } from "../agents/types";
import { ZStepOutputKind, ZStepPhase, type StepOutputKind } from "../events/step-contract";

/** What a step's output is checked against, and therefore which triggers it can fire. */
export const OUTPUT_KINDS = {
  /** Free text (roundtable discussion): always "done". */
  text: ["done"],
  /** Coder build: the agent's edits are committed in the workspace. */
  build: ["done"],
  /** Strict reviewer JSON (ReviewVerdict), with the blocking-finding rule enforced. */
  review_verdict: ["approve", "changes_requested", "schema_invalid"],
  /** Strict tester JSON (TestPlan). */
  test_plan: ["plan_valid", "schema_invalid"],
  /** The test plan's commands, run through the allowlist runner. */
  commands: ["tests_passed", "tests_failed"],
  /** Planner TaskSpec, validated against its schema and the planner's manifest. */
  task_spec: ["task_spec_valid", "task_spec_invalid"],
  /** Executor result, checked against the TaskSpec and the executor's allowed file globs. */
  execution: ["execution_done", "execution_rejected"],
  /** A stage's actor drafts its artifacts (Forge): recorded by hash, checked by schema and rules. */
  draft: ["done"],
  /** A stage's critic: strict JSON findings with stable ids, joined by the rules checked by code; the anti-loop may escalate. */
  critique: ["pass", "revise", "escalate"],
  /** A staged workflow's triage after a failed check: strict JSON naming the stage to go back to. */
  route: ["goto_prd", "goto_design", "goto_plan", "goto_coding"],
} as const satisfies Record<StepOutputKind, readonly string[]>;
export type OutputKind = StepOutputKind;

/**
 * Triggers that come from operators or the system rather than from a step's output: a
 * person's confirm, and at a stage's gate a pass, feedback, or abort.
 */
export const COMMAND_TRIGGERS = ["start", "confirm", "pass", "feedback", "abort"] as const;
/** Triggers every non-terminal state answers through `global`. */
export const GLOBAL_TRIGGERS = ["cancel", "step_failed"] as const;

/** `gate_on` / `gate_off`: whether the session has a person's gate at the current stage (TaskStarted.gates). */
export const GUARDS = [
  "under_cap",
  "at_cap",
  "mode_proposal",
  "mode_implementation",
  "gate_on",
  "gate_off",
  /** A modify session (ChangeRequested) — and its change request's triage: invalid, or touching a layer. */
  "modifying",
  "change_invalid",
  "layer_prd",
  "layer_design",
  "layer_plan",
] as const;
export type GuardName = (typeof GUARDS)[number];

const ZStateName = z.string().regex(/^[a-z][a-z0-9_]*$/, "state names are lower_snake_case");

export const ZTransition = z.object({
  target: ZStateName,
  guard: z.enum(GUARDS).optional(),
  /** Taking this transition starts a new iteration of the loop (counted against the cap). */
  iterate: z.boolean().optional(),
  /** Why (changes_requested, test_failed, ...): recorded with the transition and the outcome. */
  reason: z.string().optional(),
});
export type Transition = z.infer<typeof ZTransition>;

export const ZStepSpec = z.object({
  role: ZAgentRole,
  output: ZStepOutputKind,
  /** What the agent is asked to do; the thread and earlier outputs are added as context. */
  instruction: z.string().min(1),
  /** Roundtable outputs are discussion, shown apart from verdicts. */
  phase: ZStepPhase,
});
export type StepSpec = z.infer<typeof ZStepSpec>;

/**
 * A stage of a staged workflow (the Forge pipeline): the files its agents may write
 * (gitignore-style globs, enforced by the runner), the artifacts it must produce, and its
 * own iteration cap. States name the stage they belong to.
 */
export const ZStageSpec = z.object({
  title: z.string().min(1),
  maxIterations: z.number().int().positive().max(50).optional(),
  writes: z.array(z.string().min(1)).default([]),
  artifacts: z.array(z.string().min(1)).default([]),
});
export type StageSpec = z.infer<typeof ZStageSpec>;

export const ZStateSpec = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("wait"),
    description: z.string().optional(),
    stage: ZStateName.optional(),
    on: z.record(z.string(), z.array(ZTransition)),
  }),
  z.object({
    type: z.literal("step"),
    description: z.string().optional(),
    stage: ZStateName.optional(),
    step: ZStepSpec,
    on: z.record(z.string(), z.array(ZTransition)),
  }),
  z.object({ type: z.literal("terminal"), description: z.string().optional(), outcome: z.string().min(1) }),
]);
export type StateSpec = z.infer<typeof ZStateSpec>;

export const ZWorkflowDefinition = z.object({
  id: z.string().regex(/^[a-z][a-z0-9_]*$/),
  version: z.number().int().positive(),
  title: z.string().min(1),
  modes: z.array(z.string().min(1)).min(1),
  initial: ZStateName,
  maxIterations: z.number().int().positive().max(50).default(3),
  /**
   * What every agent of the workflow is told first, the same in every call of every session:
   * its standing instructions (what the workflow is, how replies are read). It opens the
   * prompt's stable part, so providers' prefix caches serve it after the first call instead of
   * each step's instruction carrying it anew (docs/scaling.md, "Prompt economics").
   */
  preamble: z.string().min(1).max(8000).optional(),
  /**
   * Transitions every non-terminal state takes on cancel / an unrecoverable step failure /
   * a spent budget. `step_failed` may lead to a wait state with an `abort` transition: a
   * person then chooses retry, guidance or abort (req F8).
   */
  global: z.object({ cancel: ZStateName, step_failed: ZStateName, budget_exhausted: ZStateName.optional() }),
  stages: z.record(ZStateName, ZStageSpec).optional(),
  /**
   * Where a modify fork of a finished session starts (req F5): the state entered with the
   * change request, and whether entering it counts an iteration. Without it a workflow's
   * sessions cannot be modified (forks, reverts and resumes still work).
   */
  modify: z.object({ state: ZStateName, iterate: z.boolean().default(false) }).optional(),
  states: z.record(ZStateName, ZStateSpec),
});
export type WorkflowDefinition = z.infer<typeof ZWorkflowDefinition>;

export interface DefinitionProblem {
  path: string;
  message: string;
}

export class InvalidWorkflowError extends Error {
  constructor(
    readonly workflowId: string,
    readonly problems: DefinitionProblem[],
  ) {
    super(`workflow "${workflowId}" is invalid:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join("\n")}`);
    this.name = "InvalidWorkflowError";
  }
}

/**
 * A guard whose complement is also among a trigger's transitions makes them total. Mode guards
 * have none: they are total only when they cover every declared mode (allModesCovered).
 */
const COMPLEMENT: Partial<Record<GuardName, GuardName>> = {
  under_cap: "at_cap",
  at_cap: "under_cap",
  gate_on: "gate_off",
  gate_off: "gate_on",
};

/** The triggers a state can ever see: its step's outputs, or operator commands for wait states. */
function triggersOf(state: Exclude<StateSpec, { type: "terminal" }>): readonly string[] {
  return state.type === "step" ? OUTPUT_KINDS[state.step.output] : COMMAND_TRIGGERS;
}

/**
 * Static checks: unknown and unreachable states, no terminal state, transitions on
 * triggers that can never fire, step outputs nobody handles, guarded transitions with no
 * fallback. Returns every problem, each with a precise path.
 */
export function checkDefinition(def: WorkflowDefinition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const names = new Set(Object.keys(def.states));
  const known = (path: string, target: string) => {
    if (!names.has(target)) problems.push({ path, message: `unknown state "${target}"` });
  };
  known("initial", def.initial);
  known("global.cancel", def.global.cancel);
  known("global.step_failed", def.global.step_failed);
  const initial = def.states[def.initial];
  if (initial && (initial.type !== "wait" || !initial.on.start)) {
    problems.push({ path: `states.${def.initial}`, message: 'the initial state must be a wait state with a "start" transition' });
  }
  if (def.global.budget_exhausted) known("global.budget_exhausted", def.global.budget_exhausted);
  for (const key of ["cancel", "step_failed", "budget_exhausted"] as const) {
    const name = def.global[key];
    const target = name ? def.states[name] : undefined;
    if (!target || target.type === "terminal") continue;
    if (key === "step_failed" && target.type === "wait" && target.on.abort) continue;
    problems.push({
      path: `global.${key}`,
      message:
        key === "step_failed"
          ? `must lead to a terminal state or a wait state with an "abort" transition, "${name}" is a ${target.type} state`
          : `must lead to a terminal state, "${name}" is a ${target.type} state`,
    });
  }
  for (const [name, state] of Object.entries(def.states)) {
    if (state.type !== "terminal" && state.stage && !def.stages?.[state.stage])
      problems.push({ path: `states.${name}.stage`, message: `unknown stage "${state.stage}"` });
    if (state.type === "step" && (state.step.output === "draft" || state.step.output === "critique") && !state.stage)
      problems.push({
        path: `states.${name}.stage`,
        message: `a ${state.step.output} step drafts or critiques a stage's artifacts: name its stage`,
      });
  }
  if (![...Object.values(def.states)].some((s) => s.type === "terminal")) {
    problems.push({ path: "states", message: "no terminal state: the workflow could never finish" });
  }
  for (const [name, state] of Object.entries(def.states)) {
    if (state.type === "terminal") continue;
    const possible = triggersOf(state);
    for (const [trigger, transitions] of Object.entries(state.on)) {
      const path = `states.${name}.on.${trigger}`;
      if (!possible.includes(trigger)) {
        const source = state.type === "step" ? `its step output "${state.step.output}"` : "a wait state";
        problems.push({ path, message: `trigger "${trigger}" can never fire (${source} emits: ${possible.join(", ")})` });
      }
      if (transitions.length === 0) problems.push({ path, message: "no transitions" });
      transitions.forEach((t, i) => known(`${path}[${i}].target`, t.target));
      const guards = transitions.map((t) => t.guard);
      const modeGuards = guards.filter((g) => g === "mode_proposal" || g === "mode_implementation").map((g) => g!.slice("mode_".length));
      for (const mode of modeGuards) {
        if (!def.modes.includes(mode))
          problems.push({
            path,
            message: `guard mode_${mode} names a mode the workflow does not declare (modes: ${def.modes.join(", ")})`,
          });
      }
      const allModesCovered = modeGuards.length > 0 && def.modes.every((m) => modeGuards.includes(m));
      const total = guards.includes(undefined) || allModesCovered || guards.some((g) => g !== undefined && guards.includes(COMPLEMENT[g]));
      if (transitions.length > 0 && !total) {
        problems.push({ path, message: "every transition is guarded and the guards do not cover all cases: add an unguarded fallback" });
      }
    }
    if (state.type === "step") {
      for (const trigger of possible) {
        if (!state.on[trigger])
          problems.push({
            path: `states.${name}.on`,
            message: `no transition for trigger "${trigger}" of step output "${state.step.output}"`,
          });
      }
    }
  }
  // Reachability from the initial state (global transitions reach their targets from anywhere).
  const starts = [
    def.initial,
    def.global.cancel,
    def.global.step_failed,
    ...(def.global.budget_exhausted ? [def.global.budget_exhausted] : []),
    ...(def.modify ? [def.modify.state] : []),
  ];
  if (def.modify) known("modify.state", def.modify.state);
  const reached = new Set<string>(starts);
  const queue = [...starts];
  while (queue.length) {
    const state = def.states[queue.shift()!];
    if (!state || state.type === "terminal") continue;
    for (const transitions of Object.values(state.on)) {
      for (const t of transitions) {
        if (!reached.has(t.target)) {
          reached.add(t.target);
          queue.push(t.target);
        }
      }
    }
  }
  for (const name of names) {
    if (!reached.has(name)) problems.push({ path: `states.${name}`, message: "unreachable from the initial state" });
  }
  return problems;
}

/** A zod issue path as checkDefinition writes paths: `states.x.on.done[0].target`. */
function pathOf(keys: readonly PropertyKey[]): string {
  return keys.map((k, i) => (typeof k === "number" ? `[${k}]` : `${i ? "." : ""}${String(k)}`)).join("");
}

/** Parses and checks a definition (built-in or user JSON); throws with every problem listed. */
export function loadDefinition(input: unknown): WorkflowDefinition {
  const parsed = ZWorkflowDefinition.safeParse(input);
  const id = typeof input === "object" && input !== null && "id" in input && typeof input.id === "string" ? input.id : "(unnamed)";
  if (!parsed.success) {
    throw new InvalidWorkflowError(
      id,
      parsed.error.issues.map((i) => {
        // A bad record key is reported by zod as "Invalid key in record": show the key's own message.
        const inner = i.code === "invalid_key" ? i.issues[0]?.message : undefined;
        return { path: pathOf(i.path) || "(root)", message: inner ? `${inner}` : i.message };
      }),
    );
  }
  const problems = checkDefinition(parsed.data);
  if (problems.length) throw new InvalidWorkflowError(parsed.data.id, problems);
  return parsed.data;
}
