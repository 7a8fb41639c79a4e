// Creating an agent from its configuration: the one place that maps a `kind` to its
// implementation. A new shell or brain adds a config schema and a case here.
import { CommandAgent } from "./command";
import type { AgentConfigInput } from "./config";
import { ScriptedAgent } from "./scripted";
import type { Agent } from "./types";

export { CommandAgent } from "./command";
export { ScriptedAgent } from "./scripted";
export { ZAgentConfig, type AgentConfig, type AgentConfigInput, type AgentKind } from "./config";
export { AgentError, MAX_AGENT_OUTPUT_BYTES, type Agent, type AgentRequest, type AgentResponse } from "./types";

/** An agent for `config`, validated again here (invalid config throws a ZodError naming the field). */
export function createAgent(config: AgentConfigInput): Agent {
  switch (config.kind) {
    case "scripted":
      return new ScriptedAgent(config);
    case "command":
      return new CommandAgent(config);
    default: {
      const unhandled: never = config;
      throw new Error(`unknown agent kind: ${(unhandled as { kind: string }).kind}`);
    }
  }
}
