// Conversations in tests: scripted agents that reply by output (reply, ballot, sop), a wait for
// what a conversation's stream shows, and the audit that a conversation's recorded events are
// exactly what its decider makes of the commands they record (replayed with the same ids).
import { expect } from "vitest";
import type { EventStore } from "../../server/events/store";
import type { RecordedEvent } from "../../server/events/types";
import { foldRecorded } from "../../server/conversations/fold";
import type { LoadedConversation } from "../../server/conversations/record";
import { auditConversation } from "../../server/conversations/audit";

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

/** Every conversation event recorded is exactly what the decider made of the commands (server/conversations/audit.ts). */
export function expectDecidedExactly(events: readonly RecordedEvent[]): void {
  expect(auditConversation(events)).toEqual([]);
}
