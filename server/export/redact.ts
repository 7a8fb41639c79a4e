// What of an agent configuration may leave the system in an export. Events hold agent
// configs (TaskStarted.agents, StepScheduled.input.agent); secrets are meant to be env var
// *names* (passEnv), but a command agent's literal `env` values are dropped all the same.
export const REDACTED = "[redacted]";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The agent config with every literal environment value replaced by REDACTED. */
export function redactAgentConfig(config: unknown): unknown {
  if (!isRecord(config) || !isRecord(config.env)) return config;
  return { ...config, env: Object.fromEntries(Object.keys(config.env).map((name) => [name, REDACTED])) };
}

/** Event data as it may appear in an export. */
export function redactEventData(type: string, data: unknown): unknown {
  if (!isRecord(data)) return data;
  if (type === "TaskStarted" && isRecord(data.agents)) {
    return { ...data, agents: Object.fromEntries(Object.entries(data.agents).map(([role, agent]) => [role, redactAgentConfig(agent)])) };
  }
  if (type === "StepScheduled" && isRecord(data.input) && "agent" in data.input) {
    return { ...data, input: { ...data.input, agent: redactAgentConfig(data.input.agent) } };
  }
  return data;
}

/** What a viewer sees in place of an operator's detail (a repository path, an allowlist, an agent's configuration). */
export const HIDDEN_FOR_VIEWERS = "[for operators]";

/** An agent's configuration as a viewer sees it: which agent of which kind, nothing of how it runs. */
function agentIdentity(config: unknown): unknown {
  if (!isRecord(config)) return HIDDEN_FOR_VIEWERS;
  return { id: typeof config.id === "string" ? config.id : null, kind: typeof config.kind === "string" ? config.kind : null };
}

/**
 * Event data as a viewer may see it in an export: besides what nobody sees (redactEventData),
 * no repository path, allowlist, agent configuration or configuration source — what an
 * operator needs to run the work, not what a reader needs to follow it.
 */
export function viewerEventData(type: string, data: unknown): unknown {
  if (!isRecord(data)) return data;
  switch (type) {
    case "TaskStarted":
      return {
        ...data,
        project: isRecord(data.project) ? { ...data.project, repoPath: HIDDEN_FOR_VIEWERS, allowlist: [] } : data.project,
        agents: isRecord(data.agents) ? Object.fromEntries(Object.entries(data.agents).map(([role, a]) => [role, agentIdentity(a)])) : {},
      };
    case "StepScheduled": {
      if (!isRecord(data.input)) return data;
      const { agent, workspace, allowlist, ...input } = data.input;
      return {
        ...data,
        input: {
          ...input,
          ...(agent !== undefined ? { agent: agent === null ? null : agentIdentity(agent) } : {}),
          ...(isRecord(workspace) ? { workspace: { ...workspace, repoPath: HIDDEN_FOR_VIEWERS } } : {}),
          ...(allowlist !== undefined ? { allowlist: [] } : {}),
        },
      };
    }
    case "ConversationSetup":
      return {
        ...data,
        project: isRecord(data.project) ? { ...data.project, repoPath: HIDDEN_FOR_VIEWERS } : data.project,
        runtimes: isRecord(data.runtimes)
          ? Object.fromEntries(
              Object.entries(data.runtimes).map(([id, r]) => [
                id,
                isRecord(r) ? { role: r.role, config: agentIdentity(r.config) } : HIDDEN_FOR_VIEWERS,
              ]),
            )
          : {},
      };
    case "RuntimeContextRecorded":
      return {
        ...data,
        source: isRecord(data.source) ? { ...data.source, dir: HIDDEN_FOR_VIEWERS } : data.source,
        project: HIDDEN_FOR_VIEWERS,
        agents: isRecord(data.agents) ? Object.fromEntries(Object.keys(data.agents).map((id) => [id, HIDDEN_FOR_VIEWERS])) : {},
      };
    default:
      return data;
  }
}
