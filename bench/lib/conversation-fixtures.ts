// A long conversation for the replay measurements, decided by the conversation's own decider
// and recorded as the product records it (server/conversations/record.ts `recordable`: each
// call with its step), appended in batches without runners: in free discussion, a person
// asks two agents by @mention each round and both reply.
import crypto from "node:crypto";
import type pg from "pg";
import type { Actor } from "../../server/events/catalog";
import type { EventStore } from "../../server/events/store";
import type { NewEvent } from "../../server/events/types";
import { conversationFold, type ConversationRecord } from "../../server/conversations/fold";
import { CONVERSATION_WORKFLOW, recordable } from "../../server/conversations/record";
import { decideConversation, type ConversationCommand } from "../../server/modes/conversation";

const AGENTS = [
  { id: "ada", name: "Ada", skills: ["backend"] },
  { id: "bo", name: "Bo", skills: ["frontend"] },
];
const context = { newId: () => crypto.randomUUID() };

/** Appends a conversation of at least `events` events (whole rounds) to a new stream; its id. */
export async function longConversation(store: EventStore, pool: pg.Pool, actor: Actor, events: number): Promise<string> {
  const id = `c-bench-${crypto.randomBytes(6).toString("hex")}`;
  let record: ConversationRecord = conversationFold.initial;
  const pending: NewEvent[] = [];
  let appended = 0;
  const add = (list: NewEvent[]) => {
    for (const e of list) {
      record = conversationFold.evolve(record, {
        version: record.version + 1,
        type: e.type,
        data: e.data,
        recordedAt: new Date().toISOString(),
      });
      pending.push(e);
    }
  };
  const decide = async (command: ConversationCommand) =>
    add(await recordable(pool, { id, ...record }, decideConversation(record.state, command, context), new Date()));
  const flush = async () => {
    if (!pending.length) return;
    await store.append(id, appended === 0 ? "no_stream" : appended, pending.splice(0), { actor });
    appended = record.version;
  };
  add([{ type: "SessionCreated", data: { title: "A long conversation", workflow: CONVERSATION_WORKFLOW, state: "open" } }]);
  await decide({ type: "Start", agents: AGENTS });
  add([
    {
      type: "ConversationSetup",
      data: {
        project: { id: "bench", name: "bench", repoPath: "/nonexistent/bench", baseCommit: "0".repeat(40) },
        runtimes: Object.fromEntries(AGENTS.map((a) => [a.id, { role: "coder", config: { id: a.id, kind: "scripted" } }])),
        limits: { stepTimeoutMs: 60_000, maxAttempts: 3 },
      },
    },
  ]);
  for (let round = 0; record.version < events; round++) {
    await decide({ type: "Post", by: `${actor.kind}:${actor.id}`, text: `Round ${round}: @ada and @bo, what next for the parser?` });
    for (const callId of Object.keys(record.state.inFlight)) {
      await decide({ type: "Reply", callId, text: `Round ${round}: ${"a considered answer about the parser. ".repeat(4)}` });
    }
    if (pending.length >= 500) await flush();
  }
  await flush();
  return id;
}
