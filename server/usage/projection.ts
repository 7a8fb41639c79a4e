// Projection: the `agent_usage` table, one row per agent call that reported the tokens it
// used (docs/delivery.md, "Usage and cost"). The source is the step's result: a workflow's agent step and a
// conversation's call both hand back `usage` (and the agent) in StepCompleted, and a stale
// attempt's result is refused by the steps projection's fence in the same transaction, so
// nothing is counted twice. The row carries the session's project as it is then, so totals
// per project and per day are one indexed query.
import { z } from "zod";
import { ZAgentUsage } from "../agent-calls";
import type { AppEvent } from "../events/catalog";
import type { Projection } from "../events/projection";
import type { RecordedEvent } from "../events/types";

/** The part of a step's result usage is read from (agent and conversation_reply outputs). */
const ZReportedUsage = z.object({ agentId: z.string(), usage: ZAgentUsage });

export const usageProjection: Projection = {
  name: "agent_usage",
  handles: ["StepCompleted"],
  tables: ["agent_usage"],
  async apply(tx, events) {
    for (const event of events as (RecordedEvent & AppEvent)[]) {
      if (event.type !== "StepCompleted") continue;
      const reported = ZReportedUsage.safeParse(event.data.output);
      if (!reported.success) continue;
      const { agentId, usage } = reported.data;
      await tx.query({
        name: "catcafe_agent_usage_insert",
        text: `INSERT INTO agent_usage (event_id, session_id, project_id, step_id, agent_id, model, input_tokens, output_tokens, recorded_at)
               VALUES ($1, $2, (SELECT project_id FROM sessions WHERE id = $2), $3, $4, $5, $6, $7, $8)`,
        values: [
          event.eventId,
          event.streamId,
          event.data.stepId,
          agentId,
          usage.model ?? null,
          Math.round(usage.inputTokens),
          Math.round(usage.outputTokens),
          event.recordedAt,
        ],
      });
    }
  },
};
