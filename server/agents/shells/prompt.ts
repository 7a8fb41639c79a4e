// The one prompt a CLI receives on stdin, stable part first (docs/scaling.md, "Prompt
// economics"): the prompt's stable part (the task, the completed artifacts), the session's
// thread (who said what, the same text whichever role reads it, so that every role's calls
// share it), then this turn's instruction and what changed. A CLI keeps no memory between our
// invocations, so the thread is written out in full; the instruction says which of its
// speakers this role is.
import type { AgentRequest } from "../types";

export function cliPrompt({
  role,
  context,
  prompt,
  promptStableChars,
}: Pick<AgentRequest, "role" | "context" | "prompt" | "promptStableChars">): string {
  const thread = context.filter((m) => m.text.trim() !== "");
  if (thread.length === 0) return prompt;
  const cut = Math.min(promptStableChars ?? 0, prompt.length);
  const stable = prompt.slice(0, cut);
  const lines = thread.map((m) => `[${m.from}]\n${m.text.trim()}`);
  const yours = thread.some((m) => m.from === role) ? `; what [${role}] said above is yours` : "";
  return `${stable ? `${stable}\n\n` : ""}The conversation so far:\n\n${lines.join("\n\n")}\n\n---\n\nYour task now, as the ${role}${yours}:\n\n${prompt.slice(cut)}`;
}
