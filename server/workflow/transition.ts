// Walking the workflow definition: firing a trigger in the current state emits the
// transition, a new iteration when the transition counts one, and what entering the target
// means: the step it runs is scheduled, or the session is finalized with its outcome.
import { AppError, type ErrorClass } from "../errors";
import type { ForgeStepInput, StepInput } from "../events/step-contract";
import { ARTIFACT_PATHS, type ChangeRequest, type CodeMetadata } from "../forge/artifacts";
import { planDelta, planDigest } from "../forge/patch";
import type { DecideContext, Emitted } from "./commands";
import type { StageSpec, StateSpec, StepSpec, Transition, WorkflowDefinition } from "./definition";
import { promptFor, threadContext } from "./prompt";
import { SUCCESS_OUTCOMES } from "../../lib/outcomes";
import type { AppEventOf } from "../events/catalog";
import { applyEmitted, type ActiveTask, type TaskState } from "./state";

export function currentState(def: WorkflowDefinition, state: TaskState): StateSpec {
  const spec = def.states[state.fsm];
  if (!spec) throw new AppError("INTERNAL", `session is in state "${state.fsm}", which workflow ${def.id} does not define`);
  return spec;
}

/** The stage a state belongs to (staged workflows). */
export function stageOf(def: WorkflowDefinition, stateName: string): string | undefined {
  const spec = def.states[stateName];
  return spec && spec.type !== "terminal" ? spec.stage : undefined;
}

/** A stage's iteration cap: the session's own (TaskStarted.stageCaps), else the definition's. */
export function stageCap(def: WorkflowDefinition, state: Pick<ActiveTask, "config">, stage: string): number {
  return state.config.stageCaps?.[stage] ?? def.stages?.[stage]?.maxIterations ?? state.config.maxIterations;
}

/** Whether the session has a person's gate at its current stage (every gate unless TaskStarted.gates says otherwise). */
export function gated(state: ActiveTask): boolean {
  const stage = state.pipeline.stage;
  return !state.config.gates || (stage !== null && state.config.gates.includes(stage));
}

function guardHolds(def: WorkflowDefinition, transition: Transition, state: ActiveTask): boolean {
  // A staged workflow counts iterations per stage: the cap is the target stage's.
  const stage = def.stages ? stageOf(def, transition.target) : undefined;
  const iteration = stage ? (state.pipeline.iterations[stage] ?? 0) : state.iteration;
  const cap = stage ? stageCap(def, state, stage) : state.config.maxIterations;
  switch (transition.guard) {
    case undefined:
      return true;
    case "under_cap":
      return iteration < cap;
    case "at_cap":
      return iteration >= cap;
    case "mode_proposal":
      return state.config.mode === "proposal";
    case "mode_implementation":
      return state.config.mode === "implementation";
    case "gate_on":
      return gated(state);
    case "gate_off":
      return !gated(state);
    case "modifying":
      return state.pipeline.change !== null;
    case "change_invalid":
      return !changeRequest(state);
    case "layer_prd":
    case "layer_design":
    case "layer_plan":
      return !!changeRequest(state)?.layers.includes(transition.guard.slice("layer_".length) as ChangeRequest["layers"][number]);
  }
}

/** A modify session's change request, when its triage wrote a valid one. */
function changeRequest(state: ActiveTask): ChangeRequest | null {
  const entry = state.pipeline.artifacts[ARTIFACT_PATHS.changeRequest];
  return entry && !entry.problems.length ? (entry.json as ChangeRequest) : null;
}

/** Why a session ends, when it ends by cancel or by a failure: carried into SessionFinalized. */
export interface Ending {
  errorClass?: ErrorClass;
  diagnosis?: string;
}

/** Fires `trigger` in the current state: the transition, then entering the target. */
export function fire(ctx: DecideContext, state: ActiveTask, trigger: string, ending: Ending = {}): Emitted[] {
  const def = ctx.definition;
  const spec = currentState(def, state);
  let target: string;
  let transition: Transition | undefined;
  if (trigger === "cancel" || trigger === "step_failed") {
    target = def.global[trigger];
  } else {
    if (spec.type === "terminal") throw new AppError("CONFLICT", `the session already finished (${state.fsm}): it moved on`);
    transition = spec.on[trigger]?.find((t) => guardHolds(def, t, state));
    if (!transition) throw new AppError("INTERNAL", `workflow ${def.id}: no transition from "${state.fsm}" on "${trigger}"`);
    target = transition.target;
  }
  // Why a person is asked, when the target waits for one because something went wrong.
  let needed: Needed | undefined;
  if (def.states[target]?.type === "wait") {
    if (trigger === "step_failed")
      needed = {
        cause: "agent_failed",
        message: ending.diagnosis ?? "the agent failed",
        errorClass: ending.errorClass ?? null,
        resume: state.fsm,
      };
    else if (trigger === "escalate")
      needed = { cause: "loop", message: ending.diagnosis ?? "the critic loops", errorClass: null, resume: null };
    else if (transition?.guard === "at_cap")
      needed = { cause: "cap", message: `the iteration cap was reached (${transition.reason ?? trigger})`, errorClass: null, resume: null };
  }
  return enter(ctx, state, target, {
    reason: transition?.reason ?? trigger,
    finalReason: transition?.reason ?? (trigger === "cancel" ? "cancelled by an operator" : null),
    iterate: !!transition?.iterate,
    trigger,
    ending,
    needed,
  });
}

type Needed = Omit<AppEventOf<"PersonNeeded">["data"], "stage">;

export interface Entry {
  /** Why the state changes (SessionStateChanged.reason). */
  reason: string;
  /** Why the session ends, if the target ends it (SessionFinalized.reason). */
  finalReason: string | null;
  iterate: boolean;
  /** What moved the session (a step's output trigger, cancel, a person's choice). */
  trigger: string;
  ending: Ending;
  needed?: Needed;
}

/**
 * Enters `target` from the current state: the state change, a stage's start, end or
 * reopening, a new iteration when the transition counts one, then what the target means:
 * a step scheduled (or the budget found spent), a person asked, or the session finalized.
 */
export function enter(ctx: DecideContext, state: ActiveTask, target: string, entry: Entry): Emitted[] {
  const def = ctx.definition;
  let targetSpec = def.states[target];
  if (!targetSpec) throw new AppError("INTERNAL", `workflow ${def.id}: "${state.fsm}" leads to "${target}", which it does not define`);
  const events: Emitted[] = [];
  let reason = entry.reason;
  // The budget is reserved before each agent call: a call that would pass it is never scheduled.
  const spent = targetSpec.type === "step" && targetSpec.step.output !== "commands" ? budgetSpent(ctx, state) : null;
  if (spent && def.global.budget_exhausted) {
    events.push({ type: "BudgetExhausted", data: { ...spent, state: target } });
    target = def.global.budget_exhausted;
    targetSpec = def.states[target]!;
    reason = `budget exhausted (${spent.limit})`;
  }
  // A wait state other than the first one waits for a person (a confirm, a gate, a choice).
  const waitsForPerson = targetSpec.type === "wait" && target !== def.initial;
  events.push({
    type: "SessionStateChanged",
    data: { from: state.fsm, to: target, reason, ...(waitsForPerson ? { waitsFor: "person" as const } : {}) },
  });
  events.push(...stageEvents(def, state, targetSpec, reason));
  let entered = requireStarted(applyEmitted(state, events));
  const targetStage = targetSpec.type === "terminal" ? undefined : targetSpec.stage;
  if (entry.iterate) {
    const iteration = (targetStage ? (entered.pipeline.iterations[targetStage] ?? 0) : entered.iteration) + 1;
    const iterated: Emitted = {
      type: "IterationStarted",
      data: { iteration, reason: entry.reason, ...(targetStage ? { stage: targetStage } : {}) },
    };
    events.push(iterated);
    entered = requireStarted(applyEmitted(entered, [iterated]));
  }
  if (targetSpec.type === "step") {
    events.push(scheduleStep(ctx, entered, target, targetSpec.step));
  } else if (waitsForPerson) {
    if (entry.needed) events.push({ type: "PersonNeeded", data: { stage: entered.pipeline.stage, ...entry.needed } });
    events.push(
      ...notifyStep(ctx, entered, { attention: "waiting", state: target, outcome: null, reason: spent ? reason : entry.finalReason }),
    );
  } else if (targetSpec.type === "terminal") {
    const failed = !SUCCESS_OUTCOMES.includes(targetSpec.outcome);
    const { ending } = entry;
    events.push({
      type: "SessionFinalized",
      data: {
        outcome: targetSpec.outcome,
        reason: spent ? reason : entry.finalReason,
        iterations: entered.iteration,
        unresolved: failed ? state.openIssues : [],
        errorClass: ending.errorClass ?? (entry.trigger === "cancel" ? "cancelled" : null),
        diagnosis: ending.diagnosis ?? null,
      },
    });
    const attention = attentionOf(targetSpec.outcome);
    if (attention)
      events.push(
        ...notifyStep(ctx, entered, {
          attention,
          state: target,
          outcome: targetSpec.outcome,
          reason: ending.diagnosis ?? (spent ? reason : entry.finalReason),
        }),
      );
  }
  return events;
}

function requireStarted(state: TaskState): ActiveTask {
  if (state.status !== "active") throw new AppError("INTERNAL", "a transition left the task inactive");
  return state;
}

/**
 * A staged workflow's stage events on entering `target`: the stage left is completed (its
 * artifacts frozen) when the target is a later stage or the successful end; the target's
 * stage starts, or is reopened when it was entered before.
 */
function stageEvents(def: WorkflowDefinition, state: ActiveTask, spec: StateSpec, reason: string): Emitted[] {
  if (!def.stages) return [];
  const { pipeline } = state;
  const events: Emitted[] = [];
  const targetStage = spec.type === "terminal" ? undefined : spec.stage;
  const leaving = pipeline.stage && !pipeline.completed.includes(pipeline.stage) ? pipeline.stage : null;
  const success = spec.type === "terminal" && SUCCESS_OUTCOMES.includes(spec.outcome);
  // Moving on (to a later stage, or the successful end) completes the stage left; going back
  // (a failed check's replan) leaves it open, to be entered again.
  const order = Object.keys(def.stages);
  const forward = !!targetStage && order.indexOf(targetStage) > order.indexOf(leaving ?? "");
  if (leaving && (forward || success)) {
    const artifacts = Object.entries(pipeline.artifacts)
      .filter(([, a]) => a.stage === leaving)
      .map(([path, a]) => ({ path, hash: a.hash }));
    events.push({ type: "StageCompleted", data: { stage: leaving, artifacts } });
  }
  if (targetStage && targetStage !== pipeline.stage) {
    events.push(
      pipeline.iterations[targetStage]
        ? { type: "StageReopened", data: { stage: targetStage, reason } }
        : { type: "StageStarted", data: { stage: targetStage } },
    );
  }
  return events;
}

/** What the budget says about one more agent call: null while it may be made. */
export function budgetSpent(ctx: DecideContext, state: ActiveTask): AppEventOf<"BudgetExhausted">["data"] | null {
  const budget = state.config.budget;
  if (!budget) return null;
  const { usage, startedAtMs } = state.pipeline;
  const now = ctx.now?.();
  const used = {
    calls: usage.calls,
    tokens: usage.tokens,
    wallMs: now !== undefined && startedAtMs !== null ? Math.max(0, now - startedAtMs) : 0,
  };
  if (budget.maxCalls !== undefined && used.calls + 1 > budget.maxCalls) return { limit: "calls", used, budget };
  if (
    budget.maxTokens !== undefined &&
    (used.tokens >= budget.maxTokens || used.tokens + (budget.reserveTokensPerCall ?? 0) > budget.maxTokens)
  )
    return { limit: "tokens", used, budget };
  if (budget.maxWallMs !== undefined && used.wallMs >= budget.maxWallMs) return { limit: "wall", used, budget };
  return null;
}

/** Why a session that ended with `outcome` needs a person: null when it does not (approved, done, cancelled). */
export function attentionOf(outcome: string): "escalated" | "failed" | null {
  if (SUCCESS_OUTCOMES.includes(outcome) || outcome === "cancelled") return null;
  return outcome === "max_iterations_reached" ? "escalated" : "failed";
}

/** How a webhook delivery is retried: a receiver that is down for a minute still gets the news. */
export const WEBHOOK_STEP = { timeoutMs: 10_000, maxAttempts: 5, backoffMs: [1_000, 5_000, 15_000, 60_000] };

/** Tells the project's webhook (when it had one at the start) that the session needs a person. */
function notifyStep(
  ctx: DecideContext,
  state: ActiveTask,
  news: { attention: "waiting" | "escalated" | "failed"; state: string; outcome: string | null; reason: string | null },
): Emitted[] {
  if (!state.config.notify) return [];
  return [
    {
      type: "StepScheduled",
      data: {
        stepId: ctx.newId(),
        kind: "webhook",
        input: { projectId: state.config.project.id, iteration: state.iteration, ...news },
        ...WEBHOOK_STEP,
      },
    },
  ];
}

function scheduleStep(ctx: DecideContext, state: ActiveTask, stateName: string, spec: StepSpec): Emitted {
  const { config } = state;
  // The limits the task started with; a session from before they were recorded keeps the defaults.
  const limits = config.limits;
  const stageName = stageOf(ctx.definition, stateName);
  const stage = stageName ? ctx.definition.stages?.[stageName] : undefined;
  const reviewsCode = spec.phase === "critique" && !!stage?.writes.includes("**");
  const input: StepInput = {
    workflow: ctx.definition.id,
    state: stateName,
    role: spec.role,
    phase: spec.phase,
    output: spec.output,
    prompt: promptFor(
      state,
      spec,
      stage && stageName ? { name: stageName, spec: stage, cap: stageCap(ctx.definition, state, stageName) } : null,
    ),
    context: threadContext(state),
    agent: config.agents[spec.role] ?? null,
    invocation: state.invocations[spec.role] ?? 0,
    workspace: {
      repoPath: config.project.repoPath,
      baseCommit: config.project.baseCommit,
      head: state.head,
      bundle: state.bundle,
      ...(config.project.branchPrefix !== undefined ? { branchPrefix: config.project.branchPrefix } : {}),
    },
    diff: spec.phase === "verdict" || spec.phase === "test" || reviewsCode ? state.lastDiff : null,
    commands: spec.output === "commands" ? (forgeChecks(state) ?? state.lastTestPlan?.commands ?? []) : [],
    allowlist: config.project.allowlist,
    ...(limits && spec.output === "commands" ? { commandTimeoutMs: limits.commandTimeoutMs } : {}),
    ...(config.mcpServers?.length && spec.output !== "commands" ? { mcpServers: config.mcpServers } : {}),
    ...(stage && stageName ? { forge: forgeInput(state, stageName, stage, spec) } : {}),
  };
  return {
    type: "StepScheduled",
    data: {
      stepId: ctx.newId(),
      kind: spec.output === "commands" ? "commands" : "agent",
      input,
      timeoutMs: limits?.stepTimeoutMs ?? ctx.stepTimeoutMs,
      // Commands are not retried: a failing test is an answer, not an accident.
      maxAttempts: spec.output === "commands" ? 1 : (limits?.maxAttempts ?? ctx.maxAttempts),
      ...(limits && spec.output !== "commands" ? { backoffMs: limits.backoffMs } : {}),
    },
  };
}

/** The Check commands the coder listed in code_metadata.json, when it did. */
function forgeChecks(state: ActiveTask): StepInput["commands"] | null {
  const metadata = state.pipeline.artifacts[ARTIFACT_PATHS.codeMetadata]?.json as CodeMetadata | undefined;
  if (!metadata?.checks.length) return null;
  return metadata.checks.map((c) => ({ argv: c.argv, expect: { exitCode: c.expect?.exitCode ?? 0 } }));
}

/**
 * What the runner does around a staged step: the artifacts as recorded are written first
 * (a person's edits among them), only the stage's globs may be written (by its actor; a
 * critic writes nothing), the person's edits are kept through a redraft, and the stage's
 * artifacts are collected after.
 */
function forgeInput(state: ActiveTask, stageName: string, stage: StageSpec, spec: StepSpec): ForgeStepInput {
  const { pipeline } = state;
  const drafts = spec.output === "draft";
  const artifacts = Object.entries(pipeline.artifacts);
  return {
    stage: stageName,
    iteration: pipeline.iterations[stageName] ?? 1,
    writes: drafts ? stage.writes : [],
    collect: drafts ? stage.artifacts : [],
    materialize: artifacts.filter(([, a]) => a.by === "person").map(([path, a]) => ({ path, blob: a.blob })),
    protect: drafts
      ? stage.artifacts.flatMap((path) => (pipeline.edits[path] ?? []).map((e) => ({ path, base: e.base, edited: e.edited })))
      : [],
    // A stage reads its own drafts and the completed stages' artifacts: the earlier stages', and
    // in a replan the later ones' too (an open stage's drafts, never).
    attach: artifacts
      .filter(([, a]) => a.stage === stageName || pipeline.completed.includes(a.stage))
      .map(([path, a]) => ({ path, blob: a.blob })),
    feedbackHistory: `${JSON.stringify(pipeline.feedback, null, 2)}\n`,
    ...(pipeline.change ? { modifying: true } : {}),
    ...(pipeline.change && drafts && stage.artifacts.includes(ARTIFACT_PATHS.patch)
      ? {
          patch: {
            baseCommit: pipeline.change.baseCommit,
            tasks: planDelta(pipeline.change.basePlan, planDigest(pipeline.artifacts[ARTIFACT_PATHS.plan]?.json)),
          },
        }
      : {}),
  };
}
