// free_discussion (req C3): a person @mentions agents and each mention is a call; an agent's
// reply may @mention others, each again a call; as many rounds as the conversation allows
// (the loop guard of ./conversation.ts stops runaway ping-pong).
import { z } from "zod";
import type { CollaborationMode, ModeDecision, ModeState, NoCustomState } from "./types";

export const ZFreeDiscussionConfig = z.strictObject({
  /** At most this many calls from one message or reply (the rest are not made). */
  maxCallsPerMessage: z.number().int().min(1).max(20).default(5),
});
export type FreeDiscussionConfig = z.infer<typeof ZFreeDiscussionConfig>;

function calls(
  state: ModeState<NoCustomState>,
  mentions: string[],
  caller: string,
  text: string,
  max: number,
): ModeDecision<NoCustomState> {
  const targets = mentions.filter((a) => a !== caller).slice(0, max);
  const prompt = caller === "person" ? text : `@${caller} wrote:\n${text}`;
  return { state, calls: targets.map((agent) => ({ agent, prompt, caller })), notes: [] };
}

export const freeDiscussion: CollaborationMode<FreeDiscussionConfig, NoCustomState, "free_discussion"> = {
  name: "free_discussion",
  description: "Free discussion: @mention any agent; agents may @mention each other; each mention is a call.",
  config: ZFreeDiscussionConfig,
  validate: () => [],
  initialize: () => ({ currentStep: null, stepHistory: [], custom: {} }),
  onUserMessage: (state, config, message) => calls(state, message.mentions, "person", message.text, config.maxCallsPerMessage),
  onAgentResponse: (state, config, reply) => calls(state, reply.mentions, reply.agent, reply.text, config.maxCallsPerMessage),
};
