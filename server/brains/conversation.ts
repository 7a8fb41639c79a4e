// The chat a brain is sent: the prompt's stable part (docs/scaling.md, "Prompt economics"),
// the session's thread, then the rest of this turn's prompt. What this role said earlier is
// its own (assistant) turn; everything else, the operator, the system and the other agents,
// speaks to it as the user, labelled with who said it. Consecutive turns of one side are
// merged, and the chat opens with a user turn, as both providers require. The turn that opens
// with the stable part says how long it is, and the turn where the thread ends says where, so
// a provider that takes cache markers can put one at each: the last stable points before what
// changed.

/** This turn as a chat: who is asking (an agent role), the thread so far, and the prompt. */
export interface ChatRequest {
  role: string;
  /** Oldest first; `from` is a role, "operator" or "system". */
  context: readonly { from: string; text: string }[];
  prompt: string;
  /** The first characters of `prompt` that stay the same across the session's calls; sent first. */
  promptStableChars?: number;
}

export interface ChatTurn {
  role: "user" | "assistant";
  content: string;
  /** The first turn, when the prompt has a stable part: its length, at the start of `content`. */
  stableChars?: number;
  /** The turn where the thread ends (when there is one): the characters of `content` up to that end. */
  threadEndChars?: number;
}

export function conversationFor({ role, context, prompt, promptStableChars }: ChatRequest): ChatTurn[] {
  const cut = Math.min(promptStableChars ?? 0, prompt.length);
  const turns: ChatTurn[] = cut > 0 ? [{ role: "user", content: prompt.slice(0, cut), stableChars: cut }] : [];
  const add = (turn: ChatTurn) => {
    const last = turns.at(-1);
    if (last?.role === turn.role) last.content += `\n\n${turn.content}`;
    else turns.push({ ...turn });
  };
  for (const message of context) {
    if (message.text === "") continue;
    if (message.from === role) add({ role: "assistant", content: message.text });
    else add({ role: "user", content: `[${message.from}] ${message.text}` });
  }
  if (turns[0]?.role === "assistant") turns.unshift({ role: "user", content: "(The conversation so far.)" });
  const threadEnd = turns.at(-1);
  if (threadEnd && context.some((m) => m.text !== "")) threadEnd.threadEndChars = threadEnd.content.length;
  const rest = prompt.slice(cut);
  if (rest !== "" || turns.at(-1)?.role !== "user") add({ role: "user", content: rest });
  return turns;
}
