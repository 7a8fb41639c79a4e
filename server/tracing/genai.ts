// The OpenTelemetry GenAI semantic conventions as Cat Cafe records them: the attribute names,
// and the provider names of the agents it runs (docs/operations.md, "Traces"). Model, token
// counts and ids only: prompts and answers are never attributes (sizes only when
// CATCAFE_TRACE_PROMPT_SIZES=1, ./sdk.ts).
import type { Attributes } from "@opentelemetry/api";
import type { AgentUsage } from "../agent-calls";

export const GEN_AI = {
  operation: "gen_ai.operation.name",
  /** The current name of the provider attribute, and the earlier one (still read by some backends). */
  provider: "gen_ai.provider.name",
  system: "gen_ai.system",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  agentId: "gen_ai.agent.id",
  agentName: "gen_ai.agent.name",
} as const;

/** gen_ai.provider.name by agent kind: the HTTP brains and the CLIs of each provider; absent: not a provider (scripted, command). */
const PROVIDER_OF_KIND: Partial<Record<string, string>> = {
  openai: "openai",
  codex: "openai",
  anthropic: "anthropic",
  claude: "anthropic",
  gemini: "gcp.gemini",
};

export function genAiProvider(agentKind: string): string | undefined {
  return PROVIDER_OF_KIND[agentKind];
}

/** Provider attributes under both names. */
export function providerAttributes(provider: string | undefined): Attributes {
  return provider ? { [GEN_AI.provider]: provider, [GEN_AI.system]: provider } : {};
}

/** What a call used, as GenAI attributes: tokens, and the model the provider or the CLI reported. */
export function usageAttributes(usage: AgentUsage | undefined): Attributes {
  if (!usage) return {};
  return {
    [GEN_AI.inputTokens]: usage.inputTokens,
    [GEN_AI.outputTokens]: usage.outputTokens,
    ...(usage.model ? { [GEN_AI.responseModel]: usage.model } : {}),
  };
}
