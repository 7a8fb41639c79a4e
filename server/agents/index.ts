// Creating an agent from its configuration: the one place that maps a `kind` to its
// implementation. A new shell or brain adds a config schema and a case here.
import { BrainAgent } from "./brain";
import { CommandAgent } from "./command";
import type { AgentConfig, AgentConfigInput } from "./config";
import { ScriptedAgent } from "./scripted";
import { ClaudeAgent } from "./shells/claude";
import { CodexAgent } from "./shells/codex";
import { GeminiAgent } from "./shells/gemini";
import type { Agent, AgentResponse, AgentUsage } from "./types";

export { BrainAgent } from "./brain";
export { CommandAgent } from "./command";
export { ScriptedAgent } from "./scripted";
export { ClaudeAgent } from "./shells/claude";
export { CodexAgent } from "./shells/codex";
export { GeminiAgent } from "./shells/gemini";
export { ZAgentConfig, type AgentConfig, type AgentConfigInput, type AgentKind } from "./config";
export { AgentError, MAX_AGENT_OUTPUT_BYTES, type Agent, type AgentRequest, type AgentResponse } from "./types";

/** An agent for `config`, validated again here (invalid config throws a ZodError naming the field). */
export function createAgent(config: AgentConfigInput): Agent {
  switch (config.kind) {
    case "scripted":
      return new ScriptedAgent(config);
    case "command":
      return new CommandAgent(config);
    case "openai":
    case "anthropic":
      return new BrainAgent(config);
    case "claude":
      return new ClaudeAgent(config);
    case "codex":
      return new CodexAgent(config);
    case "gemini":
      return new GeminiAgent(config);
    default: {
      const unhandled: never = config;
      throw new Error(`unknown agent kind: ${(unhandled as { kind: string }).kind}`);
    }
  }
}

/**
 * The tokens a call used and the model they count against: the model the agent reported (a
 * CLI's init event), else the one it was configured with (a brain's `model`, a CLI's `model`).
 */
export function usageOf(response: AgentResponse, config: AgentConfig): AgentUsage | undefined {
  if (!response.usage) return undefined;
  const model = response.usage.model ?? ("model" in config ? config.model : undefined);
  return model ? { ...response.usage, model } : response.usage;
}
