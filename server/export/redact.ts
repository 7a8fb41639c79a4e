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
