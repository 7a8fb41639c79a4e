// A conversation as its stream records it, folded (req C1, C9): the conversation decider's
// state (server/modes/conversation.ts), its setup, the thread's last messages as agents are
// shown them, and the calls made per agent. Replays start from the nearest snapshot of it
// (events/snapshots.ts) and every decision on a conversation reads it (./record.ts).
import type { ThreadMessage } from "../agent-calls";
import type { AppEvent, AppEventOf } from "../events/catalog";
import { CONVERSATION_EVENT_TYPES } from "../events/conversation-catalog";
import type { StreamFold } from "../events/snapshots";
import type { FoldEvent } from "../events/types";
import { evolveConversation, initialConversation, type ConversationEvent, type ConversationState } from "../modes/conversation";
import type { CallOutput } from "./steps";

/** Messages of the conversation an agent is shown with its call (the last ones). */
const CONTEXT_MESSAGES = 20;

type Setup = AppEventOf<"ConversationSetup">["data"];

/** A conversation as its stream records it: what deciding on it and calling its agents need. */
export interface ConversationRecord {
  version: number;
  state: ConversationState;
  setup: Setup | null;
  /** The thread's last messages, as agents are shown it. */
  thread: ThreadMessage[];
  /** Calls made so far per agent and output: a scripted agent answers its n-th call of a kind with entry n. */
  invocations: Record<string, number>;
  /** When the conversation last changed (its last event). */
  lastAt: string | null;
}

const CONVERSATION_TYPES: ReadonlySet<string> = new Set(CONVERSATION_EVENT_TYPES);

export function isConversationEvent(event: { type: string }): event is ConversationEvent {
  return CONVERSATION_TYPES.has(event.type);
}

/** What a call asks its agent for, by the mode that made it: the scripted brain answers by it. */
export function callOutput(mode: string): CallOutput {
  return mode === "voting" ? "ballot" : mode === "sop" ? "sop" : "reply";
}

function threadLine(event: ConversationEvent): ThreadMessage | null {
  switch (event.type) {
    case "MessagePosted":
      return { from: "operator", text: event.data.text };
    case "AgentReplied":
      return { from: "system", text: `@${event.data.agent}: ${event.data.text}` };
    case "SystemMessage":
      return { from: "system", text: event.data.text };
    default:
      return null;
  }
}

const emptyRecord: ConversationRecord = { version: 0, state: initialConversation, setup: null, thread: [], invocations: {}, lastAt: null };

function evolveRecord(record: ConversationRecord, recorded: FoldEvent): ConversationRecord {
  const event = recorded as FoldEvent & AppEvent;
  const next = { ...record, version: event.version, lastAt: event.recordedAt };
  if (event.type === "ConversationSetup") return { ...next, setup: event.data };
  if (!isConversationEvent(event)) return next;
  const said = threadLine(event);
  const key = event.type === "AgentCallScheduled" ? `${event.data.agent}:${callOutput(record.state.mode)}` : null;
  return {
    ...next,
    ...(key ? { invocations: { ...record.invocations, [key]: (record.invocations[key] ?? 0) + 1 } } : {}),
    ...(said ? { thread: [...record.thread, said].slice(-CONTEXT_MESSAGES) } : {}),
    state: evolveConversation(record.state, event),
  };
}

/**
 * The fold of a conversation's stream, for replays from the nearest snapshot (events/snapshots.ts)
 * and for every decision on it (the command handler). CONVERSATION_FOLD_VERSION is part of every
 * snapshot's key: bump it whenever what a conversation folds to changes, here or in the modes
 * (server/modes: each mode's own state is folded by asking the mode again).
 * test/unit/conversation-fold.unit.test.ts pins the text of those files to ask that question.
 */
export const CONVERSATION_FOLD_VERSION = 3;

export const conversationFold: StreamFold<ConversationRecord> = {
  name: "conversation",
  version: CONVERSATION_FOLD_VERSION,
  initial: emptyRecord,
  evolve: evolveRecord,
};

/** A conversation folded from its events (all of them, in order). */
export function foldRecorded(id: string, events: readonly FoldEvent[]): ConversationRecord & { id: string } {
  return { id, ...events.reduce(evolveRecord, emptyRecord) };
}
