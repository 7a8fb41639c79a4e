// The workflow decider: one small function per command, each taking the session's state
// and returning the events to append, or throwing a domain error. `decide` dispatches; the
// compiler checks that every command has its function.
import { INTERRUPTED_OUTCOMES } from "../../lib/outcomes";
import { AppError } from "../errors";
import type { DecideContext, Emitted, TaskCommand, TaskCommandOf } from "./commands";
import { interpret } from "./interpret";
import { applyEmitted, type ActiveTask, type TaskState } from "./state";
import { budgetSpent, currentState, enter, fire } from "./transition";

export function decide<S>(state: TaskState<S>, command: TaskCommand, ctx: DecideContext<S>): Emitted[] {
  switch (command.type) {
    case "StartTask":
      return startTask(state, command, ctx);
    case "Begin":
      return begin(state, ctx);
    case "Confirm":
      return confirm(state, command, ctx);
    case "FollowUp":
      return followUp(state, command, ctx);
    case "Cancel":
      return cancel(state, command, ctx);
    case "StepSucceeded":
      return stepSucceeded(state, command, ctx);
    case "StepGaveUp":
      return stepGaveUp(state, command, ctx);
    case "PassGate":
      return passGate(state, ctx);
    case "GiveFeedback":
      return giveFeedback(state, command, ctx);
    case "Choose":
      return choose(state, command, ctx);
    case "Continue":
      return continueAt(state, command, ctx);
    case "Resume":
      return resume(state, command, ctx);
    default: {
      const unhandled: never = command;
      throw new AppError("INTERNAL", `the workflow has no decision for ${JSON.stringify(unhandled)}`);
    }
  }
}

/** `/confirm` as a word of its own, or a line that is just "confirm" / "confirmed" / "go ahead". */
const CONFIRM_SIGNAL = /(^|\s)\/confirm\b(?![/\w])|^\s*(confirm|confirmed|go ahead)[.!]?\s*$/im;

export function hasConfirmSignal(text: string): boolean {
  return CONFIRM_SIGNAL.test(text);
}

function startTask<S>(state: TaskState<S>, command: TaskCommandOf<"StartTask">, ctx: DecideContext<S>): Emitted[] {
  const def = ctx.definition;
  if (state.status !== "none") throw new AppError("CONFLICT", "this session already exists");
  if (!def.modes.includes(command.config.mode)) {
    throw new AppError("INVALID_INPUT", `workflow ${def.id} has no mode "${command.config.mode}" (modes: ${def.modes.join(", ")})`);
  }
  const created: Emitted[] = [
    { type: "SessionCreated", data: { title: command.title, workflow: def.id, state: def.initial } },
    { type: "TaskStarted", data: command.config },
  ];
  return [...created, ...fire(ctx, requireActive(afterEvents(state, created, ctx)), "start")];
}

function begin<S>(state: TaskState<S>, ctx: DecideContext<S>): Emitted[] {
  if (state.status !== "active" || state.fsm !== ctx.definition.initial)
    throw new AppError("PRECONDITION_FAILED", `cannot begin: session is in "${state.fsm}"`);
  return fire(ctx, state, "start");
}

function confirm<S>(state: TaskState<S>, command: TaskCommandOf<"Confirm">, ctx: DecideContext<S>): Emitted[] {
  const active = requireActive(state);
  const spec = currentState(ctx.definition, active);
  if (spec.type !== "wait" || !spec.on.confirm) {
    throw new AppError("CONFLICT", `nothing to confirm: the session already moved on (it is in "${active.fsm}")`, { state: active.fsm });
  }
  return [{ type: "OperatorConfirmed", data: { via: command.via } }, ...fire(ctx, active, "confirm")];
}

function followUp<S>(state: TaskState<S>, command: TaskCommandOf<"FollowUp">, ctx: DecideContext<S>): Emitted[] {
  const posted: Emitted = { type: "OperatorMessagePosted", data: { text: command.text } };
  if (state.status === "finished") {
    return [
      posted,
      { type: "SystemReplied", data: { text: `This session has finished (${state.outcome}). Rerun it to start a new execution.` } },
    ];
  }
  const active = requireActive(state);
  const spec = currentState(ctx.definition, active);
  if (spec.type !== "wait" || !spec.on.confirm) return [posted];
  if (hasConfirmSignal(command.text)) {
    const withMessage = requireActive(afterEvents(active, [posted], ctx));
    return [posted, { type: "OperatorConfirmed", data: { via: "followup" } }, ...fire(ctx, withMessage, "confirm")];
  }
  return [
    posted,
    {
      type: "SystemReplied",
      data: {
        text: "Pending confirmation: nothing is built until an operator confirms (Confirm button, /confirm, or `catcafe task confirm`).",
      },
    },
  ];
}

function cancel<S>(state: TaskState<S>, command: TaskCommandOf<"Cancel">, ctx: DecideContext<S>): Emitted[] {
  if (state.status === "finished") throw new AppError("CONFLICT", `the session already finished (${state.outcome}): it moved on`);
  const active = requireActive(state);
  const events: Emitted[] = [{ type: "CancelRequested", data: { reason: command.reason } }];
  if (active.step) events.push({ type: "StepCancelled", data: { stepId: active.step.id } });
  return [...events, ...fire(ctx, active, "cancel", { errorClass: "cancelled", diagnosis: command.reason })];
}

/** A result for another step than the current one (late, or already moved past) decides nothing. */
function stepSucceeded<S>(state: TaskState<S>, command: TaskCommandOf<"StepSucceeded">, ctx: DecideContext<S>): Emitted[] {
  if (state.status !== "active" || state.step?.id !== command.stepId) return [];
  const spec = ctx.definition.states[state.step.state];
  if (!spec || spec.type !== "step") return [];
  const { events, trigger, failure } = interpret(state, spec, command, ctx.definition, ctx.extension);
  return [...events, ...fire(ctx, requireActive(afterEvents(state, events, ctx)), trigger, failure ?? {})];
}

function stepGaveUp<S>(state: TaskState<S>, command: TaskCommandOf<"StepGaveUp">, ctx: DecideContext<S>): Emitted[] {
  if (state.status !== "active" || state.step?.id !== command.stepId) return [];
  return fire(ctx, state, "step_failed", { errorClass: command.errorClass, diagnosis: command.message });
}

function continueAt<S>(state: TaskState<S>, command: TaskCommandOf<"Continue">, ctx: DecideContext<S>): Emitted[] {
  const active = requireActive(state);
  if (!ctx.definition.states[command.state]) {
    throw new AppError("INVALID_INPUT", `workflow ${ctx.definition.id} has no state "${command.state}"`);
  }
  return enter(ctx, active, command.state, {
    reason: command.reason,
    finalReason: null,
    iterate: command.iterate,
    trigger: "continue",
    ending: {},
  });
}

function resume<S>(state: TaskState<S>, command: TaskCommandOf<"Resume">, ctx: DecideContext<S>): Emitted[] {
  if (state.status === "none") throw new AppError("NOT_FOUND", "no such task session");
  if (state.status !== "finished") throw new AppError("CONFLICT", `the session is still running (in "${state.fsm}"): nothing to resume`);
  if (!INTERRUPTED_OUTCOMES.includes(state.outcome)) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `the session finished ${state.outcome}, it was not interrupted: fork, revert or modify it instead of resuming`,
    );
  }
  const resumed: Emitted = {
    type: "SessionResumed",
    data: { from: state.outcome, state: command.state, ...(command.budget ? { budget: command.budget } : {}) },
  };
  // The wall clock starts again when the session resumes (evolve reads it from the event's time).
  const after = requireActive(afterEvents(state, [resumed], ctx));
  const active = { ...after, startedAtMs: ctx.now?.() ?? after.startedAtMs };
  const spent = budgetSpent(ctx, active);
  if (spent) {
    const { calls, tokens } = spent.used;
    throw new AppError(
      "PRECONDITION_FAILED",
      `the budget is spent (${spent.limit}: ${calls} calls, ${tokens} tokens so far): resume with a larger budget`,
      { limit: spent.limit, used: spent.used },
    );
  }
  return [
    resumed,
    ...enter(ctx, active, command.state, {
      reason: `resumed after ${state.outcome}`,
      finalReason: null,
      iterate: false,
      trigger: "resume",
      ending: {},
    }),
  ];
}

/** The running task, or the refusal any action on a session without one, or a finished one, gets (an extension's commands too). */
export function requireActive<S>(state: TaskState<S>): ActiveTask<S> {
  if (state.status === "none") throw new AppError("NOT_FOUND", "no such task session");
  if (state.status === "finished") throw new AppError("CONFLICT", `the session already finished (${state.outcome}): it moved on`);
  return state;
}

/** The state once `events` (about to be emitted) are appended. */
function afterEvents<S>(state: TaskState<S>, events: Emitted[], ctx: DecideContext<S>): TaskState<S> {
  return applyEmitted(ctx.extension, state, events);
}

/** The wait state the session is in, when it takes `trigger` from a person. */
function waitingFor<S>(state: TaskState<S>, ctx: DecideContext<S>, trigger: string, what: string) {
  const active = requireActive(state);
  const spec = currentState(ctx.definition, active);
  if (spec.type !== "wait" || !spec.on[trigger]) {
    const editOnly = spec.type === "wait" && trigger === "feedback" && spec.on.pass;
    throw new AppError(
      editOnly ? "PRECONDITION_FAILED" : "CONFLICT",
      editOnly ? `this gate takes edits only: edit the draft, then pass` : `nothing to ${what}: the session is in "${active.fsm}"`,
      { state: active.fsm },
    );
  }
  return { active, spec };
}

function passGate<S>(state: TaskState<S>, ctx: DecideContext<S>): Emitted[] {
  const { active, spec } = waitingFor(state, ctx, "pass", "pass");
  const passed: Emitted = { type: "GatePassed", data: { stage: spec.stage ?? active.stages.current ?? active.fsm } };
  return [passed, ...fire(ctx, requireActive(afterEvents(active, [passed], ctx)), "pass")];
}

function giveFeedback<S>(state: TaskState<S>, command: TaskCommandOf<"GiveFeedback">, ctx: DecideContext<S>): Emitted[] {
  const { active, spec } = waitingFor(state, ctx, "feedback", "give feedback on");
  const given: Emitted = {
    type: "FeedbackGiven",
    data: {
      stage: spec.stage ?? active.stages.current,
      iteration: active.iteration,
      source: "person",
      severity: "normal",
      text: command.text,
    },
  };
  return [given, ...fire(ctx, requireActive(afterEvents(active, [given], ctx)), "feedback")];
}

/**
 * A person's answer when the pipeline stopped: abort wherever the state allows it; retry,
 * or guidance (recorded as critical feedback) then retry, after an agent failed beyond its
 * retries — the failed step's state is entered again.
 */
function choose<S>(state: TaskState<S>, command: TaskCommandOf<"Choose">, ctx: DecideContext<S>): Emitted[] {
  const chose: Emitted = { type: "PersonChose", data: { choice: command.choice } };
  if (command.choice === "abort") {
    const { active } = waitingFor(state, ctx, "abort", "abort");
    const needed = active.needed;
    return [
      chose,
      ...fire(ctx, requireActive(afterEvents(active, [chose], ctx)), "abort", {
        ...(needed?.errorClass ? { errorClass: needed.errorClass } : {}),
        diagnosis: needed ? `aborted by a person after: ${needed.message}` : "aborted by a person",
      }),
    ];
  }
  const active = requireActive(state);
  const resume = active.needed?.resume;
  if (active.fsm !== ctx.definition.global.step_failed || !resume)
    throw new AppError("CONFLICT", `nothing to ${command.choice}: no failed agent waits for a person (the session is in "${active.fsm}")`, {
      state: active.fsm,
    });
  const events: Emitted[] = [chose];
  if (command.choice === "guidance") {
    const text = command.text?.trim();
    if (!text) throw new AppError("INVALID_INPUT", "guidance needs a text: what should the agent do differently?");
    events.push({
      type: "FeedbackGiven",
      data: { stage: active.stages.current, iteration: active.iteration, source: "guidance", severity: "critical", text },
    });
  }
  const after = requireActive(afterEvents(active, events, ctx));
  return [
    ...events,
    ...enter(ctx, after, resume, {
      reason: `${command.choice} by a person`,
      finalReason: null,
      iterate: false,
      trigger: command.choice,
      ending: {},
    }),
  ];
}
