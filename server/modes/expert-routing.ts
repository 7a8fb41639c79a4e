// expert_routing (req C6): a person's message goes to the agents whose skill tags it names.
// Each agent scores the number of its tags found in the message (a tag matches as a word or
// phrase, case-insensitive); the best score at or above `minScore` wins (ties: the first by
// id in code-point order, or up to `maxAgents`). Every routing is recorded with the
// candidates, their scores and the reason; no match asks a person instead of guessing.
import { z } from "zod";
import { byCodePoint } from "./order";
import type { CollaborationMode, ConversationAgent, NoCustomState } from "./types";

export const ZExpertRoutingConfig = z.strictObject({
  minScore: z.number().int().min(1).default(1),
  maxAgents: z.number().int().min(1).max(5).default(1),
});
export type ExpertRoutingConfig = z.infer<typeof ZExpertRoutingConfig>;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function matchedTags(agent: ConversationAgent, text: string): string[] {
  return agent.skills.filter((tag) => new RegExp(`(^|[^\\p{L}\\p{N}])${escape(tag)}($|[^\\p{L}\\p{N}])`, "iu").test(text));
}

export const expertRouting: CollaborationMode<ExpertRoutingConfig, NoCustomState, "expert_routing"> = {
  name: "expert_routing",
  description: "Expert routing: each message goes to the agents whose skill tags it names; no match asks a person.",
  config: ZExpertRoutingConfig,
  validate: (_config, ctx) => (ctx.agents.some((a) => a.skills.length) ? [] : ["no agent has skill tags to route by"]),
  initialize: () => ({ currentStep: null, stepHistory: [], custom: {} }),
  onUserMessage(state, config, message, ctx) {
    const candidates = ctx.agents
      .map((agent) => {
        const matched = matchedTags(agent, message.text);
        return { agent: agent.id, score: matched.length, matched };
      })
      .sort((a, b) => b.score - a.score || byCodePoint(a.agent, b.agent));
    const best = candidates[0]?.score ?? 0;
    if (best < config.minScore) {
      const reason = `no agent's skills match the message (best score ${best}, at least ${config.minScore} needed)`;
      return {
        state,
        calls: [],
        notes: [
          { kind: "routed", candidates, chosen: [], reason },
          { kind: "needs_person", reason },
        ],
      };
    }
    const chosen = candidates.filter((c) => c.score === best).slice(0, config.maxAgents);
    const reason = chosen.map((c) => `${c.agent}: ${c.matched.join(", ")}`).join("; ");
    return {
      state: { ...state, stepHistory: [...state.stepHistory, ...chosen.map((c) => c.agent)] },
      calls: chosen.map((c) => ({ agent: c.agent, prompt: message.text, caller: "person", metadata: { matched: c.matched } })),
      notes: [{ kind: "routed", candidates, chosen: chosen.map((c) => c.agent), reason: `best match (score ${best}): ${reason}` }],
    };
  },
  // An expert's answer ends the routing; another message routes again.
  onAgentResponse: (state) => ({ state, calls: [], notes: [] }),
};
