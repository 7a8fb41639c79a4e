// @mentions in a message: `@name` where name is an agent's id or name (case-insensitive),
// resolved against the conversation's agents. Unknown names are returned apart, so a
// person's message that names nobody known is refused with the names, not guessed at.
import type { ConversationAgent } from "./types";

const MENTION = /(^|[^\w@.])@([A-Za-z0-9_][\w.-]*[\w]|[A-Za-z0-9_])/g;

export function parseMentions(text: string, agents: readonly ConversationAgent[]): { agents: string[]; unknown: string[] } {
  const known: string[] = [];
  const unknown: string[] = [];
  for (const match of text.matchAll(MENTION)) {
    const name = match[2]!;
    const agent = agents.find((a) => a.id.toLowerCase() === name.toLowerCase() || a.name.toLowerCase() === name.toLowerCase());
    if (agent) {
      if (!known.includes(agent.id)) known.push(agent.id);
    } else if (!unknown.includes(name)) unknown.push(name);
  }
  return { agents: known, unknown };
}
