// A conversation (req C1–C8) as a pure decider: people post, the mode in force decides which
// agents to call, agents reply, and what every mode must obey is enforced here, not left to
// prompts:
//   - the loop guard: after `stallAfter` agent turns without progress (a person's message, a
//     decision such as a tally or a finished procedure, or progress noted from outside: an
//     artifact, a test result), or a mention that would call an agent back into its own chain
//     of calls (A→B→A, A→B→C→A), the conversation records that it stalled, calls nobody, and
//     stays so until a person writes;
//   - termination is final: no call after it, and a reply that arrives late is discarded;
//   - no mode switch while calls are in flight.
// `decideConversation` returns the events to append; `evolveConversation` folds them. A mode's
// own state is not stored: folding a message or a reply asks the (pure) mode again, so a
// replay reaches the same state, the same tally and the same winner. Ids come from outside
// (the context), the clock too (a timeout is an event).
import { AppError } from "../errors";
import { parseMentions } from "./mentions";
import { askMode, DEFAULT_MODE, MODES, registeredMode, resolveMode, startMode, type ModeSlot } from "./registry";
import type { CollaborationMode, ConversationAgent, ModeContext, ModeDecision, ModeNote, ModeState } from "./types";

export function foldConversation(events: readonly ConversationEvent[]): ConversationState {
  return events.reduce(evolveConversation, initialConversation);
}

/** Agent turns without progress before a conversation stalls (default). */
export const DEFAULT_STALL_AFTER = 4;
/** A reply longer than this is discarded (output_too_large), not recorded. */
export const MAX_REPLY_CHARS = 100_000;

export type ConversationEvent =
  | { type: "ConversationStarted"; data: { mode: string; config: unknown; agents: ConversationAgent[]; stallAfter: number } }
  | { type: "MessagePosted"; data: { by: string; text: string; mentions: string[] } }
  /** `reissues`: a fork's call made again in its place (the parent's call belongs to the parent). */
  | {
      type: "AgentCallScheduled";
      data: {
        callId: string;
        agent: string;
        prompt: string;
        promptStableChars?: number;
        caller: string;
        chain: string[];
        reissues?: string;
      };
    }
  | { type: "AgentReplied"; data: { callId: string; agent: string; text: string; mentions: string[] } }
  /** A call's agent failed for good (its step gave up): the mode hears an empty reply. */
  | { type: "AgentCallFailed"; data: { callId: string; agent: string; errorClass: string; message: string } }
  | {
      type: "ReplyDiscarded";
      data: { callId: string; agent: string | null; errorClass: "late" | "unknown_call" | "output_too_large"; reason: string };
    }
  | { type: "ModeNoted"; data: { note: ModeNote } }
  /** A mode set a deadline (voting's timeout): a timer is scheduled for it. */
  | { type: "ModeDeadlineSet"; data: { token: string; afterMs: number } }
  /** A mode's deadline passed (voting's timeout): the mode decides with what it has. */
  | { type: "ModeTimedOut"; data: { token: string } }
  /** `choice` + `passed`: a test result of a choice that is a code change (voting: passing tests outrank votes). */
  | { type: "ProgressNoted"; data: { kind: "artifact" | "test_result" | "decision"; detail: string; choice?: string; passed?: boolean } }
  | { type: "ModeSwitched"; data: { from: string; to: string; config: unknown; by: string } }
  | { type: "SystemMessage"; data: { text: string } }
  /** A person's `/task <prompt>` started the task `sessionId` (req W13): a command, not a message to the agents. */
  | { type: "TaskStartedFromConversation"; data: { by: string; text: string; sessionId: string } }
  | { type: "ConversationStalled"; data: { reason: string; turns: number; cycle: string[] | null } }
  /** `cancelled`: the calls no runner had claimed, cancelled with it (a claimed one runs out; its reply is discarded). */
  | { type: "ConversationTerminated"; data: { reason: string; by: string; cancelled: string[] } };

export type ConversationCommand =
  | { type: "Start"; agents: ConversationAgent[]; mode?: string; config?: unknown; stallAfter?: number }
  | { type: "Post"; by: string; text: string }
  | { type: "Reply"; callId: string; text: string }
  | { type: "CallFailed"; callId: string; errorClass: string; message: string }
  /** The deadline `token` passed: ignored when the mode has moved past it. */
  | { type: "Timeout"; token: string }
  | { type: "NoteProgress"; kind: "artifact" | "test_result" | "decision"; detail: string; choice?: string; passed?: boolean }
  | { type: "SwitchMode"; mode: string; config?: unknown; by: string }
  /** `/task <prompt>` posted by `by`: the task `sessionId` is started with it (server/conversations/task-command.ts). */
  | { type: "StartTask"; by: string; text: string; sessionId: string }
  /** `unclaimed`: the calls no runner has claimed yet (from the steps queue): they are cancelled. */
  | { type: "Terminate"; reason: string; by: string; unclaimed?: string[] }
  /** A fork goes on: the calls in flight at its position are made again (and a pending deadline set again). */
  | { type: "Reissue" };

/**
 * A conversation as folded from its events: plain JSON data (it is stored as a snapshot).
 * `mode` (the mode's name), `config` (its config, parsed) and `modeState` are those of the
 * same mode (ModeSlot): a mode is only ever asked with its own.
 */
export type ConversationState = ConversationCore & ModeSlot;

interface ConversationCore {
  status: "none" | "open" | "terminated";
  agents: ConversationAgent[];
  stallAfter: number;
  /** Agent turns since the last progress. */
  turns: number;
  stalled: boolean;
  /** Calls scheduled and not answered: callId → the agent, the chain of agents that led to it, what it was asked and by whom. */
  inFlight: Record<string, { agent: string; chain: string[]; prompt: string; promptStableChars?: number; caller: string }>;
  /** Test results by choice (a code change): passed or not. */
  evidence: Record<string, boolean>;
  /** The mode's deadline not yet passed (its timer is due), if any. */
  deadline: { token: string; afterMs: number } | null;
}

export const initialConversation: ConversationState = {
  status: "none",
  ...startMode(resolveMode(DEFAULT_MODE, {}, { agents: [] })),
  agents: [],
  stallAfter: DEFAULT_STALL_AFTER,
  turns: 0,
  stalled: false,
  inFlight: {},
  evidence: {},
  deadline: null,
};

export interface ConversationContext {
  newId: () => string;
}

const PROGRESS_NOTES: ReadonlySet<ModeNote["kind"]> = new Set(["tallied", "sop_completed"]);

export function evolveConversation(state: ConversationState, event: ConversationEvent): ConversationState {
  switch (event.type) {
    case "ConversationStarted": {
      const slot = startMode(resolveMode(event.data.mode, event.data.config, { agents: event.data.agents }));
      return { ...initialConversation, ...slot, status: "open", agents: event.data.agents, stallAfter: event.data.stallAfter };
    }
    case "MessagePosted": {
      const message = { text: event.data.text, mentions: event.data.mentions };
      const { slot } = askMode(state, (mode, config, modeState) => mode.onUserMessage(modeState, config, message, ctxOf(state)));
      return { ...state, ...slot, turns: 0, stalled: false };
    }
    case "ModeTimedOut": {
      const { slot } = askMode(state, (mode, config, modeState) => timedOut(mode, config, modeState, ctxOf(state)));
      return { ...state, ...slot, deadline: null };
    }
    case "AgentCallScheduled": {
      const { callId, agent, chain, prompt, promptStableChars, caller, reissues } = event.data;
      const { [reissues ?? ""]: _replaced, ...others } = state.inFlight;
      const call = { agent, chain, prompt, caller, ...(promptStableChars !== undefined ? { promptStableChars } : {}) };
      return { ...state, inFlight: { ...others, [callId]: call } };
    }
    case "AgentReplied": {
      const { [event.data.callId]: _done, ...inFlight } = state.inFlight;
      const reply = { agent: event.data.agent, text: event.data.text, mentions: event.data.mentions };
      const { slot } = askMode(state, (mode, config, modeState) => mode.onAgentResponse(modeState, config, reply, ctxOf(state)));
      return { ...state, ...slot, inFlight, turns: state.turns + 1 };
    }
    case "AgentCallFailed": {
      const { [event.data.callId]: _done, ...inFlight } = state.inFlight;
      const reply = { agent: event.data.agent, text: "", mentions: [] };
      const { slot } = askMode(state, (mode, config, modeState) => mode.onAgentResponse(modeState, config, reply, ctxOf(state)));
      return { ...state, ...slot, inFlight, turns: state.turns + 1 };
    }
    case "ModeDeadlineSet":
      return { ...state, deadline: event.data };
    case "ReplyDiscarded": {
      const { [event.data.callId]: _done, ...inFlight } = state.inFlight;
      return { ...state, inFlight };
    }
    case "ModeNoted":
      return PROGRESS_NOTES.has(event.data.note.kind) ? { ...state, turns: 0 } : state;
    case "ProgressNoted": {
      const { kind, choice, passed } = event.data;
      const evidence =
        kind === "test_result" && choice !== undefined && passed !== undefined ? { ...state.evidence, [choice]: passed } : state.evidence;
      return { ...state, turns: 0, evidence };
    }
    case "ModeSwitched": {
      const slot = startMode(resolveMode(event.data.to, event.data.config, ctxOf(state)));
      return { ...state, ...slot, deadline: null };
    }
    case "ConversationStalled":
      return { ...state, stalled: true };
    case "ConversationTerminated": {
      const inFlight = Object.fromEntries(Object.entries(state.inFlight).filter(([id]) => !event.data.cancelled.includes(id)));
      return { ...state, status: "terminated", inFlight };
    }
    // Neither is heard by the mode: no turn, no progress, no call.
    case "SystemMessage":
    case "TaskStartedFromConversation":
      return state;
  }
}

/**
 * The events of a mode's decision, made on `state` as it is once the message or reply is
 * recorded: its notes, then its calls — unless the conversation is stalled, a call would
 * close a circle, or the turns without progress ran out (then it stalls instead).
 */
function applyDecision(
  state: ConversationState,
  decision: ModeDecision,
  ctx: ConversationContext,
  chainOf: (agent: string) => string[],
): ConversationEvent[] {
  const events: ConversationEvent[] = decision.notes.map((note) => ({ type: "ModeNoted", data: { note } }));
  if (decision.deadline) events.push({ type: "ModeDeadlineSet", data: decision.deadline });
  const progressed = decision.notes.some((n) => PROGRESS_NOTES.has(n.kind));
  if (!decision.calls.length || state.stalled) return events;
  // An agent called back into its own chain of calls: a loop, whatever the turn count.
  const looping = decision.calls.find((c) => c.caller !== "person" && chainOf(c.caller).includes(c.agent));
  if (looping) {
    const cycle = [...chainOf(looping.caller).slice(chainOf(looping.caller).indexOf(looping.agent)), looping.agent];
    events.push(stalledEvent(state.turns, `${cycle.join(" → ")}: the agents call each other in a circle`, cycle));
    return events;
  }
  if (!progressed && state.turns >= state.stallAfter && decision.calls.some((c) => c.caller !== "person")) {
    events.push(
      stalledEvent(
        state.turns,
        `${state.turns} agent turns without progress (a person's message, a decision, an artifact or a test result)`,
        null,
      ),
    );
    return events;
  }
  for (const call of decision.calls) {
    events.push({
      type: "AgentCallScheduled",
      data: {
        callId: ctx.newId(),
        agent: call.agent,
        prompt: call.prompt,
        ...(call.promptStableChars ? { promptStableChars: call.promptStableChars } : {}),
        caller: call.caller,
        chain: call.caller === "person" ? [call.agent] : [...chainOf(call.caller), call.agent],
      },
    });
  }
  return events;
}

function stalledEvent(turns: number, reason: string, cycle: string[] | null): ConversationEvent {
  return { type: "ConversationStalled", data: { reason, turns, cycle } };
}

function requireOpen(state: ConversationState): void {
  if (state.status === "none") throw new AppError("NOT_FOUND", "no such conversation");
  if (state.status === "terminated") throw new AppError("CONFLICT", "the conversation was terminated: nothing more happens in it");
}

export function decideConversation(state: ConversationState, command: ConversationCommand, ctx: ConversationContext): ConversationEvent[] {
  switch (command.type) {
    case "Start": {
      if (state.status !== "none") throw new AppError("CONFLICT", "this conversation already exists");
      const mode = command.mode ?? DEFAULT_MODE;
      const { config } = resolveMode(mode, command.config, { agents: command.agents });
      return [
        {
          type: "ConversationStarted",
          data: { mode, config, agents: command.agents, stallAfter: command.stallAfter ?? DEFAULT_STALL_AFTER },
        },
      ];
    }
    case "Post": {
      requireOpen(state);
      const { agents: mentions, unknown } = parseMentions(command.text, state.agents);
      if (unknown.length) {
        const message = `no agent ${unknown.map((n) => `@${n}`).join(", ")} in this conversation (agents: ${state.agents.map((a) => `@${a.id}`).join(", ")})`;
        throw new AppError("INVALID_INPUT", message, { field: "text", unknown, fieldErrors: { text: [message] } });
      }
      const posted: ConversationEvent = { type: "MessagePosted", data: { by: command.by, text: command.text, mentions } };
      const message = { text: command.text, mentions };
      const { decision } = askMode(state, (mode, config, modeState) => mode.onUserMessage(modeState, config, message, ctxOf(state)));
      return [posted, ...applyDecision(evolveConversation(state, posted), decision, ctx, () => [])];
    }
    case "Reply": {
      const call = state.inFlight[command.callId];
      if (!call) {
        return [
          {
            type: "ReplyDiscarded",
            data: {
              callId: command.callId,
              agent: null,
              errorClass: "unknown_call",
              reason: "no call of this conversation is waiting for this reply",
            },
          },
        ];
      }
      if (state.status === "terminated") {
        return [
          {
            type: "ReplyDiscarded",
            data: {
              callId: command.callId,
              agent: call.agent,
              errorClass: "late",
              reason: "the conversation was terminated before the reply came",
            },
          },
        ];
      }
      if (command.text.length > MAX_REPLY_CHARS) {
        return [
          {
            type: "ReplyDiscarded",
            data: {
              callId: command.callId,
              agent: call.agent,
              errorClass: "output_too_large",
              reason: `${command.text.length} characters, over the ${MAX_REPLY_CHARS} a reply may have`,
            },
          },
        ];
      }
      const { agents: mentions, unknown } = parseMentions(command.text, state.agents);
      const replied: ConversationEvent = {
        type: "AgentReplied",
        data: { callId: command.callId, agent: call.agent, text: command.text, mentions },
      };
      const reply = { agent: call.agent, text: command.text, mentions };
      const { decision } = askMode(state, (mode, config, modeState) => mode.onAgentResponse(modeState, config, reply, ctxOf(state)));
      const notes: ConversationEvent[] = unknown.length
        ? [{ type: "ModeNoted", data: { note: { kind: "mention_unknown", names: unknown } } }]
        : [];
      const chainOf = (agent: string) => (agent === call.agent ? call.chain : [agent]);
      return [replied, ...notes, ...applyDecision(evolveConversation(state, replied), decision, ctx, chainOf)];
    }
    case "CallFailed": {
      const call = state.inFlight[command.callId];
      // Nothing waits for it (answered, or the conversation ended): nothing to record.
      if (!call || state.status === "terminated") return [];
      const failed: ConversationEvent = {
        type: "AgentCallFailed",
        data: { callId: command.callId, agent: call.agent, errorClass: command.errorClass, message: command.message },
      };
      const reply = { agent: call.agent, text: "", mentions: [] };
      const { decision } = askMode(state, (mode, config, modeState) => mode.onAgentResponse(modeState, config, reply, ctxOf(state)));
      const said: ConversationEvent = {
        type: "SystemMessage",
        data: { text: `@${call.agent} could not answer (${command.errorClass}): ${command.message}` },
      };
      return [failed, said, ...applyDecision(evolveConversation(state, failed), decision, ctx, () => [])];
    }
    case "Timeout": {
      if (state.status !== "open") return [];
      // Only a mode that sets deadlines hears one, and only at the step it set it for.
      if (!registeredMode(state.mode).onTimeout || state.modeState.currentStep !== command.token) return [];
      const passed: ConversationEvent = { type: "ModeTimedOut", data: { token: command.token } };
      const { decision } = askMode(state, (mode, config, modeState) => timedOut(mode, config, modeState, ctxOf(state)));
      return [passed, ...applyDecision(evolveConversation(state, passed), decision, ctx, () => [])];
    }
    case "NoteProgress": {
      requireOpen(state);
      if (
        (command.choice === undefined) !== (command.passed === undefined) ||
        (command.choice !== undefined && command.kind !== "test_result")
      ) {
        throw new AppError("INVALID_INPUT", "a test result of a choice needs kind test_result, the choice and whether its tests passed", {
          field: "choice",
          fieldErrors: { choice: ["give choice and passed together, with kind test_result"] },
        });
      }
      const evidence = command.choice !== undefined ? { choice: command.choice, passed: command.passed! } : {};
      return [{ type: "ProgressNoted", data: { kind: command.kind, detail: command.detail, ...evidence } }];
    }
    case "SwitchMode": {
      requireOpen(state);
      const inFlight = Object.keys(state.inFlight).length;
      if (inFlight)
        throw new AppError("CONFLICT", `${inFlight} call(s) are in flight: switch the mode once they are answered`, { inFlight });
      const { mode, config } = resolveMode(command.mode, command.config, ctxOf(state));
      const { description } = MODES[mode];
      return [
        { type: "ModeSwitched", data: { from: state.mode, to: mode, config, by: command.by } },
        { type: "SystemMessage", data: { text: `Mode switched from ${state.mode} to ${mode} by ${command.by}: ${description}` } },
      ];
    }
    case "StartTask":
      requireOpen(state);
      return [{ type: "TaskStartedFromConversation", data: { by: command.by, text: command.text, sessionId: command.sessionId } }];
    case "Reissue": {
      if (state.status !== "open") return [];
      const again: ConversationEvent[] = Object.entries(state.inFlight).map(
        ([callId, { agent, chain, prompt, promptStableChars, caller }]) => ({
          type: "AgentCallScheduled",
          data: {
            callId: ctx.newId(),
            agent,
            prompt,
            ...(promptStableChars !== undefined ? { promptStableChars } : {}),
            caller,
            chain,
            reissues: callId,
          },
        }),
      );
      if (state.deadline && state.modeState.currentStep === state.deadline.token)
        again.push({ type: "ModeDeadlineSet", data: state.deadline });
      return again;
    }
    case "Terminate":
      requireOpen(state);
      return [
        {
          type: "ConversationTerminated",
          data: { reason: command.reason, by: command.by, cancelled: (command.unclaimed ?? []).filter((id) => state.inFlight[id]) },
        },
      ];
  }
}

/** What a mode decides with: the conversation's agents and the test evidence noted so far. */
function ctxOf(state: ConversationState): ModeContext {
  return { agents: state.agents, evidence: state.evidence };
}

/** A mode's decision at its deadline: none (the same state) for a mode that sets no deadline. */
function timedOut<C, S>(mode: CollaborationMode<C, S>, config: C, state: ModeState<S>, ctx: ModeContext): ModeDecision<S> {
  return mode.onTimeout ? mode.onTimeout(state, config, ctx) : { state, calls: [], notes: [] };
}
