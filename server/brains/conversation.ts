// The chat a brain is sent: the session's thread, then this turn's prompt. What this role
// said earlier is its own (assistant) turn; everything else, the operator, the system and
// the other agents, speaks to it as the user, labelled with who said it. Consecutive turns
// of one side are merged, and the chat opens with a user turn, as both providers require.

/** This turn as a chat: who is asking (an agent role), the thread so far, and the prompt. */
export interface ChatRequest {
  role: string;
  /** Oldest first; `from` is a role, "operator" or "system". */
  context: readonly { from: string; text: string }[];
  prompt: string;
}

export interface ChatTurn {
  role: "user" | "assistant";
  content: string;
}

export function conversationFor({ role, context, prompt }: ChatRequest): ChatTurn[] {
  const turns: ChatTurn[] = [];
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
  add({ role: "user", content: prompt });
  return turns;
}
