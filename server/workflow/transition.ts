// Walking the workflow definition: firing a trigger in the current state emits the
// transition, a new iteration when the transition counts one, and what entering the target
// means: the step it runs is scheduled, or the session is finalized with its outcome.
import { AppError, type ErrorClass } from "../errors";
import type { StepInput } from "../events/step-contract";
import type { DecideContext, Emitted } from "./commands";
import type { StateSpec, StepSpec, Transition, WorkflowDefinition } from "./definition";
import { promptFor, threadContext } from "./prompt";
import type { ActiveTask, TaskState } from "./state";

export function currentState(def: WorkflowDefinition, state: TaskState): StateSpec {
  const spec = def.states[state.fsm];
  if (!spec) throw new AppError("INTERNAL", `session is in state "${state.fsm}", which workflow ${def.id} does not define`);
  return spec;
}

function guardHolds(guard: Transition["guard"], state: ActiveTask): boolean {
  switch (guard) {
    case undefined:
      return true;
    case "under_cap":
      return state.iteration < state.config.maxIterations;
    case "at_cap":
      return state.iteration >= state.config.maxIterations;
    case "mode_proposal":
      return state.config.mode === "proposal";
    case "mode_implementation":
      return state.config.mode === "implementation";
  }
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
    transition = spec.on[trigger]?.find((t) => guardHolds(t.guard, state));
    if (!transition) throw new AppError("INTERNAL", `workflow ${def.id}: no transition from "${state.fsm}" on "${trigger}"`);
    target = transition.target;
  }
  const targetKind = def.states[target]?.type;
  // A wait state other than the first one waits for a person (an operator's confirm).
  const waitsForPerson = targetKind === "wait" && target !== def.initial;
  const events: Emitted[] = [
    {
      type: "SessionStateChanged",
      data: {
        from: state.fsm,
        to: target,
        reason: transition?.reason ?? trigger,
        ...(waitsForPerson ? { waitsFor: "person" as const } : {}),
      },
    },
  ];
  let entered: ActiveTask = { ...state, fsm: target };
  if (transition?.iterate) {
    const iteration = state.iteration + 1;
    events.push({ type: "IterationStarted", data: { iteration, reason: transition.reason ?? trigger } });
    entered = { ...entered, iteration };
  }
  const targetSpec = def.states[target];
  if (!targetSpec) throw new AppError("INTERNAL", `workflow ${def.id}: "${state.fsm}" leads to "${target}", which it does not define`);
  if (targetSpec.type === "step") {
    events.push(scheduleStep(ctx, entered, target, targetSpec.step));
  } else if (waitsForPerson) {
    events.push(...notifyStep(ctx, entered, { attention: "waiting", state: target, outcome: null, reason: transition?.reason ?? null }));
  } else if (targetSpec.type === "terminal") {
    const failed = targetSpec.outcome !== "approved" && targetSpec.outcome !== "done";
    events.push({
      type: "SessionFinalized",
      data: {
        outcome: targetSpec.outcome,
        reason: transition?.reason ?? (trigger === "cancel" ? "cancelled by an operator" : null),
        iterations: entered.iteration,
        unresolved: failed ? state.openIssues : [],
        errorClass: ending.errorClass ?? (trigger === "cancel" ? "cancelled" : null),
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
          reason: ending.diagnosis ?? transition?.reason ?? null,
        }),
      );
  }
  return events;
}

/** Why a session that ended with `outcome` needs a person: null when it does not (approved, done, cancelled). */
export function attentionOf(outcome: string): "escalated" | "failed" | null {
  if (outcome === "approved" || outcome === "done" || outcome === "cancelled") return null;
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
  const input: StepInput = {
    workflow: ctx.definition.id,
    state: stateName,
    role: spec.role,
    phase: spec.phase,
    output: spec.output,
    prompt: promptFor(state, spec),
    context: threadContext(state),
    agent: config.agents[spec.role] ?? null,
    invocation: state.invocations[spec.role] ?? 0,
    workspace: { repoPath: config.project.repoPath, baseCommit: config.project.baseCommit, head: state.head, bundle: state.bundle },
    diff: spec.phase === "verdict" || spec.phase === "test" ? state.lastDiff : null,
    commands: spec.output === "commands" ? (state.lastTestPlan?.commands ?? []) : [],
    allowlist: config.project.allowlist,
    ...(limits && spec.output === "commands" ? { commandTimeoutMs: limits.commandTimeoutMs } : {}),
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
