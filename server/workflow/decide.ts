// The workflow decider: one small function per command, each taking the session's state
// and returning the events to append, or throwing a domain error. `decide` dispatches; the
// compiler checks that every command has its function.
import { AppError } from "../errors";
import type { RecordedEvent } from "../events/types";
import type { DecideContext, Emitted, TaskCommand, TaskCommandOf } from "./commands";
import { interpret } from "./interpret";
import { evolve, type ActiveTask, type TaskState } from "./state";
import { currentState, fire } from "./transition";

export function decide(state: TaskState, command: TaskCommand, ctx: DecideContext): Emitted[] {
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

function startTask(state: TaskState, command: TaskCommandOf<"StartTask">, ctx: DecideContext): Emitted[] {
  const def = ctx.definition;
  if (state.status !== "none") throw new AppError("CONFLICT", "this session already exists");
  if (!def.modes.includes(command.config.mode)) {
    throw new AppError("INVALID_INPUT", `workflow ${def.id} has no mode "${command.config.mode}" (modes: ${def.modes.join(", ")})`);
  }
  const created: Emitted[] = [
    { type: "SessionCreated", data: { title: command.title, workflow: def.id, state: def.initial } },
    { type: "TaskStarted", data: command.config },
  ];
  return [...created, ...fire(ctx, requireActive(afterEvents(state, created)), "start")];
}

function begin(state: TaskState, ctx: DecideContext): Emitted[] {
  if (state.status !== "active" || state.fsm !== ctx.definition.initial)
    throw new AppError("PRECONDITION_FAILED", `cannot begin: session is in "${state.fsm}"`);
  return fire(ctx, state, "start");
}

function confirm(state: TaskState, command: TaskCommandOf<"Confirm">, ctx: DecideContext): Emitted[] {
  const active = requireActive(state);
  const spec = currentState(ctx.definition, active);
  if (spec.type !== "wait" || !spec.on.confirm) {
    throw new AppError("CONFLICT", `nothing to confirm: the session already moved on (it is in "${active.fsm}")`, { state: active.fsm });
  }
  return [{ type: "OperatorConfirmed", data: { via: command.via } }, ...fire(ctx, active, "confirm")];
}

function followUp(state: TaskState, command: TaskCommandOf<"FollowUp">, ctx: DecideContext): Emitted[] {
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
    const withMessage = requireActive(afterEvents(active, [posted]));
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

function cancel(state: TaskState, command: TaskCommandOf<"Cancel">, ctx: DecideContext): Emitted[] {
  if (state.status === "finished") throw new AppError("CONFLICT", `the session already finished (${state.outcome}): it moved on`);
  const active = requireActive(state);
  const events: Emitted[] = [{ type: "CancelRequested", data: { reason: command.reason } }];
  if (active.step) events.push({ type: "StepCancelled", data: { stepId: active.step.id } });
  return [...events, ...fire(ctx, active, "cancel", { errorClass: "cancelled", diagnosis: command.reason })];
}

/** A result for another step than the current one (late, or already moved past) decides nothing. */
function stepSucceeded(state: TaskState, command: TaskCommandOf<"StepSucceeded">, ctx: DecideContext): Emitted[] {
  if (state.status !== "active" || state.step?.id !== command.stepId) return [];
  const spec = ctx.definition.states[state.step.state];
  if (!spec || spec.type !== "step") return [];
  const { events, trigger, failure } = interpret(state, spec.step, command);
  return [...events, ...fire(ctx, requireActive(afterEvents(state, events)), trigger, failure ?? {})];
}

function stepGaveUp(state: TaskState, command: TaskCommandOf<"StepGaveUp">, ctx: DecideContext): Emitted[] {
  if (state.status !== "active" || state.step?.id !== command.stepId) return [];
  return fire(ctx, state, "step_failed", { errorClass: command.errorClass, diagnosis: command.message });
}

function requireActive(state: TaskState): ActiveTask {
  if (state.status === "none") throw new AppError("NOT_FOUND", "no such task session");
  if (state.status === "finished") throw new AppError("CONFLICT", `the session already finished (${state.outcome}): it moved on`);
  return state;
}

/** The state once `events` (about to be emitted) are appended: decide reuses evolve on them. */
function afterEvents(state: TaskState, events: Emitted[]): TaskState {
  return events.reduce<TaskState>((s, e, i) => evolve(s, recordedAs(e, state.version + i + 1)), state);
}

/** Only type, data and version are read by evolve. */
function recordedAs(e: Emitted, version: number): RecordedEvent {
  return {
    position: 0,
    txId: 0,
    eventId: "",
    streamId: "",
    version,
    type: e.type,
    data: e.data,
    metadata: { actor: { kind: "system", id: "engine" }, correlationId: "", causationId: null, schemaVersion: 1 },
    recordedAt: "",
  };
}
