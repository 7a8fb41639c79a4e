// A role's agent as a person picks it (req X2): an agent CLI the runners detected, a brain (an
// HTTP model: provider, model, endpoint, the variable holding its key), a command (argv), or
// simulated. Shared by the role pickers of a project's settings page and by
// `catcafe projects agent`; the server judges what they build (ZAgentConfig, access rules).
import { agentPreset } from "./agent-presets";
import type { AgentConfigInput } from "../server/agents/config";

export const SHELLS = ["claude", "codex", "gemini"] as const;
export const PROVIDERS = ["openai", "anthropic"] as const;
export const CHOICE_KINDS = ["shell", "brain", "command", "simulated"] as const;
export type ChoiceKind = (typeof CHOICE_KINDS)[number];

export type RoleChoice =
  | { kind: "shell"; shell: (typeof SHELLS)[number]; model?: string }
  | { kind: "brain"; provider: (typeof PROVIDERS)[number]; model: string; baseUrl?: string; apiKeyEnv?: string }
  | { kind: "command"; argv: string[]; prompt?: "stdin" | "arg" }
  | { kind: "simulated" };

/** The project record's agent for `role` that `choice` stands for. */
export function agentForChoice(role: string, choice: RoleChoice): AgentConfigInput {
  const text = (v: string | undefined) => v?.trim() || undefined;
  switch (choice.kind) {
    case "shell": {
      const model = text(choice.model);
      return { kind: choice.shell, id: `${role}-${choice.shell}`, ...(model ? { model } : {}) };
    }
    case "brain": {
      const baseUrl = text(choice.baseUrl);
      const apiKeyEnv = text(choice.apiKeyEnv);
      return {
        kind: choice.provider,
        id: `${role}-${choice.provider}`,
        model: choice.model.trim(),
        ...(baseUrl ? { baseUrl } : {}),
        ...(apiKeyEnv ? { apiKeyEnv } : {}),
      };
    }
    case "command":
      return { kind: "command", id: `${role}-command`, argv: choice.argv, prompt: choice.prompt ?? "stdin" };
    case "simulated": {
      const preset = agentPreset(role, "simulated");
      if ("problem" in preset) throw new Error(preset.problem);
      return preset.agent;
    }
  }
}

/** The choice a saved agent reads as (null: none, or a kind the pickers do not edit). */
export function choiceOf(agent: Record<string, unknown> | null): RoleChoice | null {
  if (!agent) return null;
  const str = (k: string) => (typeof agent[k] === "string" ? (agent[k] as string) : undefined);
  const kind = str("kind");
  if (kind === "claude" || kind === "codex" || kind === "gemini")
    return { kind: "shell", shell: kind, ...(str("model") ? { model: str("model")! } : {}) };
  if (kind === "openai" || kind === "anthropic")
    return {
      kind: "brain",
      provider: kind,
      model: str("model") ?? "",
      ...(str("baseUrl") ? { baseUrl: str("baseUrl")! } : {}),
      ...(str("apiKeyEnv") ? { apiKeyEnv: str("apiKeyEnv")! } : {}),
    };
  if (kind === "command" && Array.isArray(agent.argv))
    return { kind: "command", argv: agent.argv.map(String), prompt: str("prompt") === "arg" ? "arg" : "stdin" };
  if (kind === "scripted") return { kind: "simulated" };
  return null;
}

/**
 * A command line as a person types it into an argv: split on spaces, "double" or 'single'
 * quotes keeping a space inside one argument. No shell: nothing else is interpreted.
 */
export function argvFromText(line: string): string[] {
  const argv: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = pattern.exec(line); m; m = pattern.exec(line)) argv.push(m[1] ?? m[2] ?? m[3] ?? "");
  return argv;
}

/** An argv as one line to edit (arguments with spaces quoted). */
export function argvToText(argv: readonly string[]): string {
  return argv.map((a) => (/\s/.test(a) || a === "" ? `"${a}"` : a)).join(" ");
}
