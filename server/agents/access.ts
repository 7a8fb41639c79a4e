// What an agent may take from the runner (docs/security.md "Credentials"): the variables it
// is handed — a shell's passEnv, a CLI's or a brain's apiKeyEnv — must be on the admin's list
// (settings access.agentEnv) and never a server, sign-in or delivery secret. Binding a
// configuration (config validate, ops.validateConfig, a task's start) and the runner before
// each run apply this one rule, so what the runner would refuse, validation refuses, with the
// same words.
import { agentEnvRefusal, type AgentEnvPolicy } from "../process/env";

export type { AgentEnvPolicy };
import type { AgentConfig } from "./config";
import { AgentError } from "./types";

/** Each provider's documented key variable: what agents may receive when an admin says nothing else (settings access.agentEnv). */
export const PROVIDER_KEY_ENV = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"] as const;

/** The rule as the settings say it when nobody changed them. */
export const DEFAULT_AGENT_ENV_POLICY: AgentEnvPolicy = { allowed: PROVIDER_KEY_ENV };

/** The variable each agent CLI reads its key from when its configuration names none. */
export const CLI_DEFAULT_KEY_ENV = { claude: "ANTHROPIC_API_KEY", codex: "OPENAI_API_KEY", gemini: "GEMINI_API_KEY" } as const;

export interface HandedVariable {
  name: string;
  /** passEnv: copied into the agent process's environment; apiKeyEnv: its key (a CLI's variable, or a brain's request). */
  field: "passEnv" | "apiKeyEnv";
}

/** The runner's variables `config` would hand on, each once. */
export function handedVariables(config: AgentConfig): HandedVariable[] {
  const found: HandedVariable[] = [];
  const add = (name: string | undefined, field: HandedVariable["field"]) => {
    if (name && !found.some((v) => v.name === name)) found.push({ name, field });
  };
  switch (config.kind) {
    case "command":
      for (const name of config.passEnv ?? []) add(name, "passEnv");
      break;
    case "claude":
    case "codex":
    case "gemini":
      add(config.apiKeyEnv ?? CLI_DEFAULT_KEY_ENV[config.kind], "apiKeyEnv");
      for (const name of config.passEnv ?? []) add(name, "passEnv");
      break;
    case "openai":
    case "anthropic":
      add(config.apiKeyEnv, "apiKeyEnv");
      break;
    default:
      break;
  }
  return found;
}

/** The rule as the settings in force for a project say it. */
export function agentEnvPolicy(settings: { access: { agentEnv: readonly string[] }; delivery: { tokenEnv?: string } }): AgentEnvPolicy {
  return { allowed: settings.access.agentEnv, never: settings.delivery.tokenEnv ? [settings.delivery.tokenEnv] : [] };
}

export interface AccessRefusal extends HandedVariable {
  message: string;
}

/** Every variable of `config` the rule refuses, with why. */
export function agentAccessRefusals(config: AgentConfig, policy: AgentEnvPolicy): AccessRefusal[] {
  return handedVariables(config).flatMap((v) => {
    const message = agentEnvRefusal(v.name, policy);
    return message ? [{ ...v, message }] : [];
  });
}

/** Throws the first refusal as the agent's failure (not retryable: only an admin can change the list). */
export function assertAgentAccess(config: AgentConfig, policy: AgentEnvPolicy): void {
  const [refused] = agentAccessRefusals(config, policy);
  if (!refused) return;
  throw new AgentError(
    refused.field === "apiKeyEnv" ? "provider_auth_error" : "tool_error",
    `agent ${config.id}: ${refused.field} ${refused.name}: ${refused.message}`,
    false,
  );
}
