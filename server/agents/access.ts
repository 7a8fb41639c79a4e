// What an agent may take from the runner (docs/security.md "Credentials"): the variables it
// is handed — a shell's passEnv, a CLI's or a brain's apiKeyEnv — must be on the admin's list
// (settings access.agentEnv) and never a server, sign-in or delivery secret. Binding a
// configuration (config validate, ops.validateConfig, a task's start) and the runner before
// each run apply this one rule, so what the runner would refuse, validation refuses, with the
// same words.
import { hostAllowed, hostRules, normalHost, urlPort } from "../net/hosts";
import { agentEnvRefusal, type AgentEnvPolicy as EnvPolicy } from "../process/env";
import type { AgentConfig } from "./config";
import { PROVIDER_HOSTS } from "./egress";
import { AgentError } from "./types";

/**
 * What agents may take: the variables (settings access.agentEnv) and, for a key, where it may
 * be sent. `keyHosts` absent: the rule of a caller that checks only variables (a check the
 * runner repeats with the settings in force).
 */
export interface AgentEnvPolicy extends EnvPolicy {
  /** Hosts besides each provider's own that a key may be sent to (settings access.agentHosts and access.privateHosts). */
  keyHosts?: readonly string[];
}

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
export function agentEnvPolicy(settings: {
  access: { agentEnv: readonly string[]; agentHosts?: readonly string[]; privateHosts?: readonly string[] };
  delivery: { tokenEnv?: string };
}): AgentEnvPolicy {
  return {
    allowed: settings.access.agentEnv,
    never: settings.delivery.tokenEnv ? [settings.delivery.tokenEnv] : [],
    keyHosts: [...(settings.access.agentHosts ?? []), ...(settings.access.privateHosts ?? [])],
  };
}

/**
 * Why `config`'s key may not go to its base URL, or null: a key the runner holds goes to its
 * provider's own API or to a host an admin named (settings access.agentHosts or
 * access.privateHosts), never to an endpoint only the configuration chose — whoever writes a
 * project's agents (an operator, a repository's `.catcafe/`) must not be able to send the
 * admin's key elsewhere (docs/security.md "Credentials"). A base URL from the runner's own
 * variable (baseUrlEnv) is the runner's operator's choice and is not judged here.
 */
function keyDestinationRefusal(config: AgentConfig, key: string, keyHosts: readonly string[]): string | null {
  if (!("baseUrl" in config) || typeof config.baseUrl !== "string" || !(config.kind in PROVIDER_HOSTS)) return null;
  let url: URL;
  try {
    url = new URL(config.baseUrl);
  } catch {
    return null; // the configuration's schema refuses it with its own message
  }
  const port = urlPort(url);
  const own = hostRules(PROVIDER_HOSTS[config.kind as keyof typeof PROVIDER_HOSTS]);
  if (url.protocol === "https:" && hostAllowed(own, url.hostname, port)) return null;
  if (hostAllowed(hostRules(keyHosts), url.hostname, port)) return null;
  return (
    `${key} is sent only to the provider's own API (${own.map((r) => r.host).join(", ")}) or a host an admin allows ` +
    `(settings access.agentHosts or access.privateHosts); baseUrl's ${normalHost(url.hostname)}:${port} is neither`
  );
}

export interface AccessRefusal extends HandedVariable {
  message: string;
}

/** Every variable of `config` the rule refuses, with why. */
export function agentAccessRefusals(config: AgentConfig, policy: AgentEnvPolicy): AccessRefusal[] {
  return handedVariables(config).flatMap((v) => {
    const message =
      agentEnvRefusal(v.name, policy) ??
      (v.field === "apiKeyEnv" && policy.keyHosts ? keyDestinationRefusal(config, v.name, policy.keyHosts) : null);
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
