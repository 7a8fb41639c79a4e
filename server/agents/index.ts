// Creating an agent from its configuration: the one place that maps a `kind` to its
// implementation. A new shell or brain adds a config schema and a case here.
import { BrainAgent } from "./brain";
import { CommandAgent } from "./command";
import type { AgentConfig, AgentConfigInput } from "./config";
import { ScriptedAgent } from "./scripted";
import { ClaudeAgent } from "./shells/claude";
import { CodexAgent } from "./shells/codex";
import { GeminiAgent } from "./shells/gemini";
import { promptSizesRecorded } from "../tracing/sdk";
import { GEN_AI, genAiProvider, providerAttributes, usageAttributes } from "../tracing/genai";
import { inSpan } from "../tracing/spans";
import type { Agent, AgentRequest, AgentResponse, AgentUsage } from "./types";

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

/**
 * One call of an agent, as the runner makes it: in an `invoke_agent` span (the OpenTelemetry
 * GenAI conventions, docs/operations.md "Traces") with the agent's kind, provider and model,
 * and the tokens it reported. The prompt is never an attribute; its size only when
 * CATCAFE_TRACE_PROMPT_SIZES=1. A CLI's process and an HTTP brain's call are spans inside it.
 */
export function invokeAgent(agent: Agent, config: AgentConfig, request: AgentRequest): Promise<AgentResponse> {
  const model = "model" in config ? config.model : undefined;
  const attributes = {
    [GEN_AI.operation]: "invoke_agent",
    [GEN_AI.agentId]: agent.id,
    ...(config.name ? { [GEN_AI.agentName]: config.name } : {}),
    ...providerAttributes(genAiProvider(agent.kind)),
    ...(model ? { [GEN_AI.requestModel]: model } : {}),
    "catcafe.agent.kind": agent.kind,
    "catcafe.agent.role": request.role,
    ...(promptSizesRecorded()
      ? { "catcafe.prompt.chars": request.prompt.length, "catcafe.prompt.context_messages": request.context.length }
      : {}),
  };
  return inSpan(`invoke_agent ${agent.id}`, { attributes }, async (span) => {
    const response = await agent.invoke(request);
    span.setAttributes(usageAttributes(usageOf(response, config)));
    if (response.sandboxed !== undefined) span.setAttribute("catcafe.agent.sandboxed", response.sandboxed);
    return response;
  });
}
