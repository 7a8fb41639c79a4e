// The agents a project can be registered with in one word (the Add project form and
// `catcafe projects add --agent role=kind[:model]`): an agent CLI, an HTTP model, or a
// simulated one. Anything else is written as JSON (the project record's agent config).
import type { AgentConfigInput } from "../server/agents/config";

export const PRESET_ROLES = ["coder", "reviewer", "tester", "planner", "executor"] as const;
export type PresetRole = (typeof PRESET_ROLES)[number];
export const PRESET_KINDS = ["claude", "codex", "gemini", "openai", "anthropic", "simulated"] as const;
export type PresetKind = (typeof PRESET_KINDS)[number];

export function isPresetRole(role: string | undefined): role is PresetRole {
  return PRESET_ROLES.some((r) => r === role);
}

/** A project record's agent for `role` (an agent configuration as projects.upsert takes it), or why not (a kind that needs a model without one). */
export function agentPreset(role: string, kind: string, model?: string): { agent: AgentConfigInput } | { problem: string } {
  const m = model?.trim() || undefined;
  const id = `${role}-${kind}`;
  switch (kind) {
    case "simulated":
      // Works on any repository (server/agents/stand-ins.ts): a build writes a note of the task,
      // a review says it is canned, a test plan runs a command of the project's allowlist.
      return {
        agent: {
          kind: "scripted",
          id: `${role}-sim`,
          name: `${role} (simulated)`,
          responses: [{ reply: `${role} (simulated: canned reply, no AI model): nothing to add.` }],
          byOutput: {
            build: [{ standIn: "task_note" }],
            review_verdict: [{ standIn: "note_review" }],
            test_plan: [{ standIn: "allowlist_test_plan" }],
          },
        },
      };
    case "claude":
    case "codex":
    case "gemini":
      return { agent: { kind, id, ...(m ? { model: m } : {}) } };
    case "openai":
    case "anthropic":
      if (!m) return { problem: `an ${kind} agent needs its model (e.g. ${kind === "openai" ? "gpt-5" : "claude-sonnet-4-5"})` };
      return { agent: { kind, id, model: m } };
    default:
      return { problem: `unknown kind "${kind}" (${PRESET_KINDS.join(", ")})` };
  }
}
