// HTTP model brains as agents (kinds `openai` and `anthropic`): the prompt and the session's
// thread go to the provider's streaming endpoint, the answer streams back. The API key is
// read from the environment variable the config names, at each call, and goes nowhere but
// the request's auth header.
import { anthropicProtocol } from "../brains/anthropic";
import { streamBrainCall } from "../brains/call";
import { openaiProtocol } from "../brains/openai";
import type { BrainProtocol } from "../brains/protocol";
import { ZAnthropicAgentConfig, ZOpenAIAgentConfig, type BrainAgentConfig, type BrainAgentConfigInput } from "./config";
import { agentEnvRefusal, noteHandedSecret, type AgentEnvPolicy } from "../process/env";
import { AgentError, type Agent, type AgentRequest, type AgentResponse } from "./types";

export function brainProtocol(kind: BrainAgentConfig["kind"]): BrainProtocol {
  return kind === "openai" ? openaiProtocol : anthropicProtocol;
}

/**
 * The key named by `apiKeyEnv`, undefined for a brain without one; a named but unset
 * variable is an auth error, and so is a name the admin's rule refuses (`policy`, settings
 * access.agentEnv: server/agents/access.ts): the value is never read. A key read is noted as handed (process/env.ts), so
 * a provider echoing it back is redacted from what is recorded.
 */
export function brainApiKey(config: BrainAgentConfig, env: NodeJS.ProcessEnv, policy: AgentEnvPolicy): string | undefined {
  if (!config.apiKeyEnv) return undefined;
  const refusal = agentEnvRefusal(config.apiKeyEnv, policy);
  if (refusal) throw new AgentError("provider_auth_error", `brain ${config.id}: ${refusal}`, false);
  const key = env[config.apiKeyEnv];
  if (!key) {
    throw new AgentError(
      "provider_auth_error",
      `the API key of brain ${config.id} is missing: environment variable ${config.apiKeyEnv} is not set on this runner`,
      false,
    );
  }
  noteHandedSecret(config.apiKeyEnv, key);
  return key;
}

/** Every name but the server's, sign-in and delivery secrets: what is left once the runner has checked the list. */
const CHECKED_BY_RUNNER: AgentEnvPolicy = { allowed: ["*"] };

export function parseBrainConfig(config: BrainAgentConfigInput): BrainAgentConfig {
  return config.kind === "openai" ? ZOpenAIAgentConfig.parse(config) : ZAnthropicAgentConfig.parse(config);
}

export class BrainAgent implements Agent {
  readonly kind: BrainAgentConfig["kind"];
  readonly simulated = false;
  readonly fileWrites = "reply" as const;
  readonly readsThread = true;
  readonly id: string;
  readonly name: string;
  readonly config: BrainAgentConfig;

  constructor(config: BrainAgentConfigInput) {
    this.config = parseBrainConfig(config);
    this.kind = this.config.kind;
    this.id = this.config.id;
    this.name = this.config.name ?? this.config.id;
  }

  async invoke(request: AgentRequest): Promise<AgentResponse> {
    const { config } = this;
    const protocol = brainProtocol(config.kind);
    return streamBrainCall(
      {
        protocol,
        brainId: config.id,
        model: config.model,
        baseUrl: config.baseUrl,
        body: protocol.requestBody(config, request),
        // The runner applied the admin's list before this run (server/agents/access.ts `assertAgentAccess`).
        apiKey: brainApiKey(config, process.env, CHECKED_BY_RUNNER),
        minIntervalMs: config.rateLimit.minIntervalMs,
      },
      request,
    );
  }
}
