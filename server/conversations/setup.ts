// Who can take part in a project's conversations, decided once when one starts: every agent
// of the repository's `.catcafe/agents.json` (at the commit the conversation starts from)
// that binds to a runtime, then each agent of the project record not already named. Skill
// tags come with them (expert routing); the runtimes are what the runner creates per call.
import { ZAgentConfig } from "../agents/config";
import { bindAgent } from "../config/bind";
import type { ProjectConfig } from "../config/project-config";
import { configInvalidError } from "../config/errors";
import { ZAgentSnapshot, type AgentSnapshot } from "../events/step-contract";
import type { ConversationAgent } from "../modes/types";
import type { Project } from "../projects/projects";

export interface ConversationRuntime {
  role: string;
  config: AgentSnapshot;
}

export interface ConversationCast {
  agents: ConversationAgent[];
  runtimes: Record<string, ConversationRuntime>;
}

export function conversationCast(project: Pick<Project, "id" | "agents">, config: ProjectConfig | null): ConversationCast {
  const agents: ConversationAgent[] = [];
  const runtimes: Record<string, ConversationRuntime> = {};
  for (const defined of config?.agents ?? []) {
    const bound = bindAgent(config!, defined.id);
    if (!bound.binding) {
      throw configInvalidError(`cannot start a conversation: agent ${defined.id} of project ${project.id} cannot run:`, bound.errors);
    }
    agents.push({ id: defined.id, name: defined.name ?? defined.id, skills: defined.skills });
    runtimes[defined.id] = { role: defined.role, config: ZAgentSnapshot.parse(bound.binding.runtime) };
  }
  for (const [role, raw] of Object.entries(project.agents)) {
    const parsed = ZAgentConfig.safeParse(raw);
    if (!parsed.success || runtimes[parsed.data.id]) continue;
    agents.push({ id: parsed.data.id, name: parsed.data.name ?? parsed.data.id, skills: parsed.data.skills ?? [] });
    // Recorded as the project configures it (defaults are applied where the agent is created).
    runtimes[parsed.data.id] = { role, config: ZAgentSnapshot.parse(raw) };
  }
  return { agents, runtimes };
}
