// The audit of a conversation's log: its commands (a post, a `/task`, a reply, a timeout, a
// switch, an end, a fork's reissue) replayed through the decider with the ids it recorded, and every
// conversation event compared with what was decided, in order, none missing and none extra.
// Used by the tests and by `npm run chaos` after runners and the database were killed.
import { isDeepStrictEqual } from "node:util";
import type { RecordedEvent } from "../events/types";
import {
  decideConversation,
  evolveConversation,
  initialConversation,
  type ConversationCommand,
  type ConversationEvent,
} from "../modes/conversation";
import { isConversationEvent } from "./fold";

/** The command a recorded conversation event answers (null: decided, not commanded). */
function commandOf(event: ConversationEvent): ConversationCommand | null {
  switch (event.type) {
    case "ConversationStarted":
      return {
        type: "Start",
        agents: event.data.agents,
        mode: event.data.mode,
        config: event.data.config,
        stallAfter: event.data.stallAfter,
      };
    case "MessagePosted":
      return { type: "Post", by: event.data.by, text: event.data.text };
    case "AgentReplied":
      return { type: "Reply", callId: event.data.callId, text: event.data.text };
    case "AgentCallFailed":
      return { type: "CallFailed", callId: event.data.callId, errorClass: event.data.errorClass, message: event.data.message };
    case "ModeTimedOut":
      return { type: "Timeout", token: event.data.token };
    case "ProgressNoted":
      return {
        type: "NoteProgress",
        kind: event.data.kind,
        detail: event.data.detail,
        ...(event.data.choice !== undefined ? { choice: event.data.choice } : {}),
        ...(event.data.passed !== undefined ? { passed: event.data.passed } : {}),
      };
    case "ModeSwitched":
      return { type: "SwitchMode", mode: event.data.to, config: event.data.config, by: event.data.by };
    case "TaskStartedFromConversation":
      return { type: "StartTask", by: event.data.by, text: event.data.text, sessionId: event.data.sessionId };
    case "ConversationTerminated":
      return { type: "Terminate", reason: event.data.reason, by: event.data.by, unclaimed: event.data.cancelled };
    default:
      return null;
  }
}

const plain = (events: ReadonlyArray<{ type: string; data: unknown }>) =>
  JSON.parse(JSON.stringify(events.map((e) => ({ type: e.type, data: e.data })))) as unknown;

/** What is wrong with the conversation's log: an empty list when every event is what was decided. */
export function auditConversation(events: readonly RecordedEvent[]): string[] {
  // A fork's first events are the decision on Reissue (the calls in flight at its position made again).
  type Step = RecordedEvent & (ConversationEvent | { type: "Forked"; data: unknown });
  const recorded: Step[] = events.flatMap((e): Step[] =>
    isConversationEvent(e) ? [e as Step] : e.type === "SessionForked" ? [{ ...e, type: "Forked" } as Step] : [],
  );
  const ids = recorded.flatMap((e) => (e.type === "AgentCallScheduled" ? [e.data.callId] : []));
  const ctx = { newId: () => ids.shift() ?? "no-more-ids" };
  let state = initialConversation;
  for (let i = 0; i < recorded.length;) {
    const event = recorded[i]!;
    if (event.type === "Forked") {
      const again = decideConversation(state, { type: "Reissue" }, ctx);
      const got = recorded.slice(i + 1, i + 1 + again.length);
      if (!isDeepStrictEqual(plain(got), plain(again))) return [`event ${event.version}: the fork's reissue is not what was decided`];
      for (const e of again) state = evolveConversation(state, e);
      i += 1 + again.length;
      continue;
    }
    // A discarded reply is decided on its text (late, oversized): its class and call are what count.
    if (event.type === "ReplyDiscarded") {
      state = evolveConversation(state, event);
      i += 1;
      continue;
    }
    const command = commandOf(event);
    if (!command) return [`event ${event.version} (${event.type}) answers no command: it was not decided`];
    let decided: ConversationEvent[];
    try {
      decided = decideConversation(state, command, ctx);
    } catch (err) {
      return [`event ${event.version} (${event.type}): the decider refuses its command now: ${(err as Error).message}`];
    }
    const got = recorded.slice(i, i + decided.length);
    if (!isDeepStrictEqual(plain(got), plain(decided))) {
      return [`event ${event.version} (${event.type}): recorded ${JSON.stringify(plain(got))}, decided ${JSON.stringify(plain(decided))}`];
    }
    for (const e of decided) state = evolveConversation(state, e);
    i += decided.length;
  }
  return [];
}
