// The one prompt a CLI receives on stdin: the session's thread (who said what), then this
// turn's instruction. A CLI keeps no memory between our invocations, so the thread is
// written out in full; what this role said earlier is labelled as its own.
import type { AgentRequest } from "../types";

export function cliPrompt({ role, context, prompt }: Pick<AgentRequest, "role" | "context" | "prompt">): string {
  const thread = context.filter((m) => m.text.trim() !== "");
  if (thread.length === 0) return prompt;
  const lines = thread.map((m) => `[${m.from === role ? `${m.from} (you)` : m.from}]\n${m.text.trim()}`);
  return `The conversation so far:\n\n${lines.join("\n\n")}\n\n---\n\nYour task now:\n\n${prompt}`;
}
