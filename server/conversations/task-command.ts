// `/task <prompt>` in a conversation (req W13, docs/conversations.md "Starting a task"): a
// person's message that starts a task on the conversation's project instead of going to its
// agents. The task is the one New task starts (server/tasks/commands.ts), its prompt the
// person's with the conversation's last messages attached; the conversation records the
// command and the session it started (TaskStartedFromConversation), the task where it came
// from (TaskStarted.origin), both in one transaction: neither is ever without the other.
import { withTransaction } from "../db/pool";
import type { ThreadMessage } from "../agent-calls";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import { lockStream } from "../events/command-handler";
import { redactKnownSecrets } from "../redact";
import { createTask, prepareTask, ZStartTaskInput } from "../tasks/commands";
import { conversationCommands, conversationDecision, loadConversation, sessionTitle, type ConversationDeps } from "./record";

/** The command's word: a message that is `/task` or starts with `/task` and a space (or a line break). */
const TASK_COMMAND = /^\/task(?:\s+([\s\S]*))?$/;

/** The conversation's messages attached to the task: at most this many, the latest... */
export const CONTEXT_MESSAGES = 20;
/** ...and at most this many characters of them (each message cut to MESSAGE_CHARS), within the prompt's own limit. */
export const CONTEXT_CHARS = 8_000;
const MESSAGE_CHARS = 2_000;
const PROMPT_LIMIT = ZStartTaskInput.shape.prompt.maxLength ?? 20_000;

/**
 * The prompt of a `/task` message, or null when the message is not one (an ordinary message).
 * `/task` with nothing after it is refused: there is no task to start.
 */
export function parseTaskCommand(text: string): { prompt: string } | null {
  const match = TASK_COMMAND.exec(text.trim());
  if (!match) return null;
  const prompt = (match[1] ?? "").trim();
  if (!prompt) {
    const message = "/task needs a prompt: /task <what the task is>";
    throw new AppError("INVALID_INPUT", message, { field: "text", fieldErrors: { text: [message] } });
  }
  return { prompt };
}

/**
 * The task's prompt: the person's, then a section with the conversation's latest messages
 * (oldest first) as far as CONTEXT_CHARS and the prompt's limit allow, the server's secrets
 * redacted (server/redact.ts). Without messages, or without room for one, the prompt alone.
 */
export function promptWithContext(prompt: string, conversation: { id: string; title: string }, messages: readonly ThreadMessage[]): string {
  const heading = `\n\n## Context from conversation "${conversation.title}" (${conversation.id})\n\nIts latest messages, oldest first:\n`;
  const room = Math.min(CONTEXT_CHARS, PROMPT_LIMIT - prompt.length - heading.length);
  const lines: string[] = [];
  let used = 0;
  for (const m of messages.slice(-CONTEXT_MESSAGES).reverse()) {
    const cut = m.text.length > MESSAGE_CHARS ? `${m.text.slice(0, MESSAGE_CHARS)} […]` : m.text;
    // A person's message is the person's; the others (`@agent: …`, the conversation's own lines) say who spoke.
    const text = m.from === "operator" ? `a person: ${cut}` : cut;
    const line = `\n- ${redactKnownSecrets(text).text}`;
    if (used + line.length > room) break;
    lines.unshift(line);
    used += line.length;
  }
  return lines.length ? `${prompt}${heading}${lines.join("")}` : prompt;
}

export interface StartedFromConversation {
  sessionId: string;
  /** The conversation's version after the command. */
  version: number;
  /** The command's own version in the conversation. */
  posted: number;
  task: { sessionId: string; version: number };
}

/**
 * Starts the task `prompt` asks for on the conversation's project, by `actor` (an operator:
 * the procedure checked), with the conversation's latest messages attached, and records the
 * command `text` in the conversation. Refused, with nothing recorded, when the conversation is
 * not open or has no project.
 */
export async function startTaskFromConversation(
  deps: ConversationDeps,
  input: { sessionId: string; text: string; prompt: string },
  actor: Actor,
  by: string,
): Promise<StartedFromConversation> {
  const loaded = await loadConversation(deps.store, input.sessionId);
  if (loaded.state.status === "terminated") throw new AppError("CONFLICT", "the conversation was terminated: nothing more happens in it");
  if (!loaded.setup) throw new AppError("PRECONDITION_FAILED", `conversation ${input.sessionId} has no project to start a task on`);
  const title = (await sessionTitle(deps.pool, input.sessionId)) ?? input.sessionId;
  // Bound before the transaction: the project, its settings and its repository are read through the pool and git.
  const prepared = await prepareTask(deps, {
    projectId: loaded.setup.project.id,
    prompt: promptWithContext(input.prompt, { id: input.sessionId, title }, loaded.thread),
    title: input.prompt.split("\n")[0]!.slice(0, 120),
  });
  return withTransaction(deps.store.pool, async (tx) => {
    // The conversation first, under its lock: a terminated one refuses, and the task is never made.
    await lockStream(tx, input.sessionId);
    const recorded = await conversationCommands.handle(
      deps.store,
      input.sessionId,
      conversationDecision({ type: "StartTask", by, text: input.text, sessionId: prepared.sessionId }),
      { actor },
      { tx },
    );
    const origin = { conversationId: input.sessionId, version: recorded.version };
    const task = await createTask(deps, { ...prepared, config: { ...prepared.config, origin } }, actor, tx);
    return { sessionId: input.sessionId, version: recorded.version, posted: recorded.version, task };
  });
}
