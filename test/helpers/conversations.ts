// Conversations in tests: scripted agents that reply by output (reply, ballot, sop), a wait for
// what a conversation's stream shows, and the check that a conversation's recorded events are
// exactly what its decider makes of the commands they record (replayed with the same ids).
import { expect } from "vitest";
import type { EventStore } from "../../server/events/store";
import type { RecordedEvent } from "../../server/events/types";
import { foldRecorded, isConversationEvent, type LoadedConversation } from "../../server/conversations/record";
import {
  decideConversation,
  evolveConversation,
  initialConversation,
  type ConversationCommand,
  type ConversationEvent,
} from "../../server/modes/conversation";

/** A scripted agent for conversations: `reply` answers free discussion and routing, `ballot` votes, `sop` SOP steps. */
export function chatAgent(id: string, replies: { reply?: string[]; ballot?: string[]; sop?: string[] }, skills: string[] = []) {
  const byOutput = Object.fromEntries(Object.entries(replies).map(([output, texts]) => [output, texts.map((reply) => ({ reply }))]));
  return { kind: "scripted", id, name: id, skills, responses: [{ reply: `${id}: nothing to add.` }], byOutput };
}

export async function conversationOf(store: EventStore, id: string): Promise<{ events: RecordedEvent[]; loaded: LoadedConversation }> {
  const events = await store.readStream(id);
  return { events, loaded: foldRecorded(id, events) };
}

/** Waits until the conversation's state satisfies `predicate` (polling its stream). */
export async function waitForConversation(
  store: EventStore,
  id: string,
  what: string,
  predicate: (c: LoadedConversation, events: RecordedEvent[]) => boolean,
  timeoutMs = 30_000,
): Promise<{ events: RecordedEvent[]; loaded: LoadedConversation }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await conversationOf(store, id);
    if (predicate(c.loaded, c.events)) return c;
    if (Date.now() > deadline) {
      throw new Error(
        `conversation ${id}: timed out waiting for ${what}; last events: ${c.events
          .slice(-8)
          .map((e) => e.type)
          .join(", ")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The command a recorded conversation event answers (null: decided, not commanded). */
function commandOf(event: RecordedEvent & ConversationEvent): ConversationCommand | null {
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
        choice: event.data.choice,
        passed: event.data.passed,
      };
    case "ModeSwitched":
      return { type: "SwitchMode", mode: event.data.to, config: event.data.config, by: event.data.by };
    case "ConversationTerminated":
      return { type: "Terminate", reason: event.data.reason, by: event.data.by, unclaimed: event.data.cancelled };
    default:
      return null;
  }
}

/**
 * Replays the conversation's commands through the decider (ids as recorded) and asserts that
 * every conversation event recorded is exactly what was decided, in order, none missing and
 * none extra. Discards (a reply to a call that is no longer awaited) are decisions too.
 */
export function expectDecidedExactly(events: readonly RecordedEvent[]): void {
  // A fork's first events are the decision on Reissue (the calls in flight at its position made again).
  type Step = RecordedEvent & (ConversationEvent | { type: "Forked" });
  const recorded: Step[] = events.flatMap((e): Step[] =>
    isConversationEvent(e) ? [e as Step] : e.type === "SessionForked" ? [{ ...e, type: "Forked" } as Step] : [],
  );
  const ids = recorded.flatMap((e) => (e.type === "AgentCallScheduled" ? [e.data.callId] : []));
  const ctx = { newId: () => ids.shift() ?? "no-more-ids" };
  let state = initialConversation;
  let i = 0;
  while (i < recorded.length) {
    const event = recorded[i]!;
    if (event.type === "Forked") {
      const again = decideConversation(state, { type: "Reissue" }, ctx);
      const got = recorded.slice(i + 1, i + 1 + again.length).map((e) => ({ type: e.type, data: e.data }));
      expect(got, `the fork's reissue at event ${event.version}`).toEqual(again.map((e) => ({ type: e.type, data: e.data })));
      for (const e of again) state = evolveConversation(state, e);
      i += 1 + again.length;
      continue;
    }
    const command: ConversationCommand | null =
      event.type === "ReplyDiscarded" ? { type: "Reply", callId: event.data.callId, text: "" } : commandOf(event);
    expect(command, `event ${event.version} (${event.type}) answers no command: it was not decided`).not.toBeNull();
    const decided = decideConversation(state, command!, ctx);
    const got = recorded.slice(i, i + decided.length).map((e) => ({ type: e.type, data: e.data }));
    // An oversized or late reply is decided on its text; only its class and call matter here.
    if (event.type === "ReplyDiscarded") {
      expect(got[0]?.type).toBe("ReplyDiscarded");
      state = evolveConversation(state, event);
      i += 1;
      continue;
    }
    expect(got, `the decision on the command of event ${event.version}`).toEqual(decided.map((e) => ({ type: e.type, data: e.data })));
    for (const e of decided) state = evolveConversation(state, e);
    i += decided.length;
  }
}
