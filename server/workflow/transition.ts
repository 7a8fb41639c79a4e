// Walking the workflow definition: firing a trigger in the current state emits the
// transition, a new iteration when the transition counts one, and what entering the target
// means: the step it runs is scheduled, or the session is finalized with its outcome.
import { AppError, type ErrorClass } from "../errors";
import type { StepInput } from "../events/step-contract";
import type { DecideContext, Emitted } from "./commands";
import type { StateSpec, StepSpec, Transition, WorkflowDefinition } from "./definition";
import { promptParts, threadContext, threadIndexAfter } from "./prompt";
import { SUCCESS_OUTCOMES } from "../../lib/outcomes";
import type { AppEventOf } from "../events/catalog";
import { applyEmitted, type ActiveTask, type TaskConfig, type TaskState } from "./state";

export function currentState<S>(def: WorkflowDefinition, state: TaskState<S>): StateSpec {
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
export function stageCap(def: WorkflowDefinition, state: { config: TaskConfig }, stage: string): number {
  return state.config.stageCaps?.[stage] ?? def.stages?.[stage]?.maxIterations ?? state.config.maxIterations;
}

/** Whether the session has a person's gate at its current stage (every gate unless TaskStarted.gates says otherwise). */
export function gated<S>(state: ActiveTask<S>): boolean {
  const stage = state.stages.current;
  return !state.config.gates || (stage !== null && state.config.gates.includes(stage));
}

function guardHolds<S>(ctx: DecideContext<S>, transition: Transition, state: ActiveTask<S>): boolean {
  const def = ctx.definition;
  // A staged workflow counts iterations per stage: the cap is the target stage's.
  const stage = def.stages ? stageOf(def, transition.target) : undefined;
  const iteration = stage ? (state.stages.iterations[stage] ?? 0) : state.iteration;
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
    default:
      // A guard on what the steps produced (a modify session's change request): the extension's.
      return ctx.extension.guards[transition.guard](state);
  }
}

/** Why a session ends, when it ends by cancel or by a failure: carried into SessionFinalized. */
export interface Ending {
  errorClass?: ErrorClass;
  diagnosis?: string;
}

/** Fires `trigger` in the current state: the transition, then entering the target. */
export function fire<S>(ctx: DecideContext<S>, state: ActiveTask<S>, trigger: string, ending: Ending = {}): Emitted[] {
  const def = ctx.definition;
  const spec = currentState(def, state);
  let target: string;
  let transition: Transition | undefined;
  if (trigger === "cancel" || trigger === "step_failed") {
    target = def.global[trigger];
  } else {
    if (spec.type === "terminal") throw new AppError("CONFLICT", `the session already finished (${state.fsm}): it moved on`);
    transition = spec.on[trigger]?.find((t) => guardHolds(ctx, t, state));
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
export function enter<S>(ctx: DecideContext<S>, state: ActiveTask<S>, target: string, entry: Entry): Emitted[] {
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
  events.push(...stageEvents(ctx, state, targetSpec, reason));
  let entered = requireStarted(applyEmitted(ctx.extension, state, events));
  const targetStage = targetSpec.type === "terminal" ? undefined : targetSpec.stage;
  if (entry.iterate) {
    const iteration = (targetStage ? (entered.stages.iterations[targetStage] ?? 0) : entered.iteration) + 1;
    const iterated: Emitted = {
      type: "IterationStarted",
      data: { iteration, reason: entry.reason, ...(targetStage ? { stage: targetStage } : {}) },
    };
    events.push(iterated);
    entered = requireStarted(applyEmitted(ctx.extension, entered, [iterated]));
  }
  if (targetSpec.type === "step") {
    events.push(scheduleStep(ctx, entered, target, targetSpec.step));
  } else if (waitsForPerson) {
    if (entry.needed) events.push({ type: "PersonNeeded", data: { stage: entered.stages.current, ...entry.needed } });
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

function requireStarted<S>(state: TaskState<S>): ActiveTask<S> {
  if (state.status !== "active") throw new AppError("INTERNAL", "a transition left the task inactive");
  return state;
}

/**
 * A staged workflow's stage events on entering `target`: the stage left is completed (its
 * artifacts frozen) when the target is a later stage or the successful end; the target's
 * stage starts, or is reopened when it was entered before.
 */
function stageEvents<S>(ctx: DecideContext<S>, state: ActiveTask<S>, spec: StateSpec, reason: string): Emitted[] {
  const def = ctx.definition;
  if (!def.stages) return [];
  const { stages } = state;
  const events: Emitted[] = [];
  const targetStage = spec.type === "terminal" ? undefined : spec.stage;
  const leaving = stages.current && !stages.completed.includes(stages.current) ? stages.current : null;
  const success = spec.type === "terminal" && SUCCESS_OUTCOMES.includes(spec.outcome);
  // Moving on (to a later stage, or the successful end) completes the stage left; going back
  // (a failed check's replan) leaves it open, to be entered again.
  const order = Object.keys(def.stages);
  const forward = !!targetStage && order.indexOf(targetStage) > order.indexOf(leaving ?? "");
  if (leaving && (forward || success)) {
    events.push({ type: "StageCompleted", data: { stage: leaving, artifacts: ctx.extension.frozen(state, leaving) } });
  }
  if (targetStage && targetStage !== stages.current) {
    events.push(
      stages.iterations[targetStage]
        ? { type: "StageReopened", data: { stage: targetStage, reason } }
        : { type: "StageStarted", data: { stage: targetStage } },
    );
  }
  return events;
}

/** What the budget says about one more agent call: null while it may be made. */
export function budgetSpent<S>(ctx: DecideContext<S>, state: ActiveTask<S>): AppEventOf<"BudgetExhausted">["data"] | null {
  const budget = state.config.budget;
  if (!budget) return null;
  const { usage, startedAtMs } = state;
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
function notifyStep<S>(
  ctx: DecideContext<S>,
  state: ActiveTask<S>,
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

function scheduleStep<S>(ctx: DecideContext<S>, state: ActiveTask<S>, stateName: string, spec: StepSpec): Emitted {
  const { config } = state;
  // The limits the task started with; a session from before they were recorded keeps the defaults.
  const limits = config.limits;
  const stageName = stageOf(ctx.definition, stateName);
  const stageSpec = stageName ? ctx.definition.stages?.[stageName] : undefined;
  const stage = stageName && stageSpec ? { name: stageName, spec: stageSpec } : null;
  const reviewsCode = spec.phase === "critique" && !!stage?.spec.writes.includes("**");
  const prompt = promptParts(
    ctx.extension,
    state,
    spec,
    stage ? { ...stage, cap: stageCap(ctx.definition, state, stage.name) } : null,
    ctx.definition.preamble,
  );
  const showsDiff = spec.phase === "verdict" || spec.phase === "test" || reviewsCode;
  // Right after the build that made it, where the next call's thread repeats it (docs/scaling.md, "Prompt economics").
  const diffAfterMessage = threadIndexAfter(state, state.lastDiffAfter);
  const input: StepInput = {
    workflow: ctx.definition.id,
    state: stateName,
    role: spec.role,
    phase: spec.phase,
    output: spec.output,
    prompt: prompt.stable + prompt.changing,
    promptStableChars: prompt.stable.length,
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
    diff: showsDiff ? state.lastDiff : null,
    ...(showsDiff && diffAfterMessage !== undefined ? { diffAfterMessage } : {}),
    commands: spec.output === "commands" ? (ctx.extension.commands(state) ?? state.lastTestPlan?.commands ?? []) : [],
    allowlist: config.project.allowlist,
    ...(limits && spec.output === "commands" ? { commandTimeoutMs: limits.commandTimeoutMs } : {}),
    ...(config.mcpServers?.length && spec.output !== "commands" ? { mcpServers: config.mcpServers } : {}),
    // A staged step's part, as the extension makes it (the contract names it `forge`).
    ...(stage ? { forge: ctx.extension.stagedInput(state, stage, spec) } : {}),
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
