// Projection: the `agent_usage` table, one row per agent call that completed (docs/delivery.md,
// "Usage and cost"), with the tokens it reported (none when its agent reports none: the call
// still counts). The source is the step's result: a workflow's agent step and a conversation's
// call both hand back their agent (and `usage`) in StepCompleted, and a stale attempt's result
// is refused by the steps projection's fence in the same transaction, so nothing is counted
// twice. The row carries the session's project as it is then, and the stage of a staged
// workflow the step was scheduled in (from the steps projection, applied first), so totals per
// project, per day and per stage are one indexed query. Every reader of calls, tokens and cost
// (the Usage page, `catcafe usage`, the session's and the Forge's figures, summary.json) reads
// this table through server/usage/totals.ts. Cached input tokens (read from or written to the
// provider's prompt cache) are recorded where the agent reported them, else 0.
import { z } from "zod";
import { ZAgentUsage } from "../agent-calls";
import type { AppEvent } from "../events/catalog";
import type { Projection } from "../events/projection";
import type { RecordedEvent } from "../events/types";

/** The part of a step's result a call is read from (agent and conversation_reply outputs). */
const ZAgentCall = z.object({ agentId: z.string() });
const ZReportedUsage = z.object({ usage: ZAgentUsage });

export const usageProjection: Projection = {
  name: "agent_usage",
  handles: ["StepCompleted"],
  tables: ["agent_usage"],
  async apply(tx, events) {
    for (const event of events as (RecordedEvent & AppEvent)[]) {
      if (event.type !== "StepCompleted") continue;
      const call = ZAgentCall.safeParse(event.data.output);
      if (!call.success) continue;
      const reported = ZReportedUsage.safeParse(event.data.output);
      const usage = reported.success ? reported.data.usage : null;
      await tx.query({
        name: "catcafe_agent_usage_insert",
        text: `INSERT INTO agent_usage (event_id, session_id, project_id, step_id, agent_id, model, stage, input_tokens, output_tokens,
                                        cached_input_tokens, cache_creation_input_tokens, recorded_at)
               VALUES ($1, $2, (SELECT project_id FROM sessions WHERE id = $2), $3, $4, $5,
                       (SELECT input->'forge'->>'stage' FROM steps WHERE id = $3), $6, $7, $8, $9, $10)`,
        values: [
          event.eventId,
          event.streamId,
          event.data.stepId,
          call.data.agentId,
          usage?.model ?? null,
          Math.round(usage?.inputTokens ?? 0),
          Math.round(usage?.outputTokens ?? 0),
          Math.round(usage?.cachedInputTokens ?? 0),
          Math.round(usage?.cacheCreationInputTokens ?? 0),
          event.recordedAt,
        ],
      });
    }
  },
};
