// A starting config per collaboration mode, for the dashboard's mode picker and the docs:
// valid for the conversation's agents (the SOP's steps name its first two).
export function modeConfigExample(mode: string, agentIds: readonly string[]): Record<string, unknown> {
  const [first = "agent-1", second = first] = agentIds;
  switch (mode) {
    case "free_discussion":
      return { maxCallsPerMessage: 5 };
    case "sop":
      return {
        steps: [
          { id: "draft", agent: first, instruction: "Draft it." },
          {
            id: "review",
            agent: second,
            instruction: "Review the draft.",
            branches: [{ field: "decision", equals: "changes", goto: "draft" }],
            next: null,
          },
        ],
      };
    case "voting":
      return { quorum: Math.min(2, Math.max(1, agentIds.length)), timeoutMs: 120_000 };
    case "expert_routing":
      return { minScore: 1, maxAgents: 1 };
    default:
      return {};
  }
}

/** A mode config typed as JSON text: its value (empty text: `{}`), or why it is not JSON. */
export function parseModeConfig(text: string): { value: unknown } | { error: string } {
  if (!text.trim()) return { value: {} };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: `the config is not valid JSON: ${(err as Error).message}` };
  }
}
