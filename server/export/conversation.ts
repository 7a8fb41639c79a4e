// A conversation's part of the export (req C1–C8, E8): conversation.md, the transcript as
// people read it (messages, calls, what the mode decided, stalls, the end), and
// conversation.jsonl, its conversation events (the mode's decisions with their data).
import type { AppEvent } from "../events/catalog";
import { CONVERSATION_EVENT_TYPES } from "../events/conversation-catalog";
import type { RecordedEvent } from "../events/types";

const CONVERSATION_TYPES: ReadonlySet<string> = new Set(CONVERSATION_EVENT_TYPES);

export function isConversationExport(events: readonly RecordedEvent[]): boolean {
  return events.some((e) => e.type === "ConversationStarted");
}

export function conversationLines(events: readonly RecordedEvent[]) {
  return events
    .filter((e) => CONVERSATION_TYPES.has(e.type))
    .map((e) => ({ version: e.version, at: e.recordedAt, type: e.type, data: e.data }));
}

const quote = (text: string) =>
  text
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");

function line(e: RecordedEvent & AppEvent): string | null {
  const at = e.recordedAt.slice(0, 19).replace("T", " ");
  switch (e.type) {
    case "ConversationStarted":
      return `*${at}* — started in **${e.data.mode}** with ${e.data.agents.map((a) => `@${a.id}`).join(", ")}`;
    case "MessagePosted":
      return `**${e.data.by}** (${at}):\n\n${quote(e.data.text)}`;
    case "AgentReplied":
      return `**@${e.data.agent}** (${at}):\n\n${quote(e.data.text)}`;
    case "AgentCallFailed":
      return `*@${e.data.agent} could not answer (${e.data.errorClass}): ${e.data.message}*`;
    case "ReplyDiscarded":
      return `*a reply${e.data.agent ? ` of @${e.data.agent}` : ""} was discarded (${e.data.errorClass}): ${e.data.reason}*`;
    case "ModeNoted": {
      const note = e.data.note;
      if (note.kind === "tallied")
        return `*vote ${note.round}: ${note.winner ? `${note.winner} wins` : "no winner"} (${note.reason}); ${note.totals.map((t) => `${t.choice} ${t.weight}`).join(", ")}*`;
      if (note.kind === "routed") return `*${note.chosen.length ? `routed to ${note.chosen.join(", ")}` : "not routed"}: ${note.reason}*`;
      if (note.kind === "needs_person") return `*a person is needed: ${note.reason}*`;
      if (note.kind === "sop_completed") return `*procedure completed: ${note.steps.join(" → ")}*`;
      if (note.kind === "ballot_rejected") return `*ballot of @${note.agent} rejected: ${note.errors.join("; ")}*`;
      return null;
    }
    case "ProgressNoted":
      return `*progress (${e.data.kind}): ${e.data.detail}*`;
    case "SystemMessage":
      return `*${e.data.text}*`;
    case "TaskStartedFromConversation":
      return `**${e.data.by}** (${at}), a command:\n\n${quote(e.data.text)}\n\n*started task ${e.data.sessionId}*`;
    case "ConversationStalled":
      return `*stalled: ${e.data.reason}*`;
    case "ConversationTerminated":
      return `*ended by ${e.data.by}: ${e.data.reason}*`;
    default:
      return null;
  }
}

export function conversationMarkdown(sessionId: string, events: readonly RecordedEvent[]): string {
  const named =
    events.find((e) => e.type === "SessionForked" && e.streamId === sessionId) ?? events.find((e) => e.type === "SessionCreated");
  const title = (named?.data as { title?: string } | undefined)?.title ?? sessionId;
  const body = (events as (RecordedEvent & AppEvent)[]).flatMap((e) => line(e) ?? []);
  return `# ${title}\n\n${body.join("\n\n")}\n`;
}
