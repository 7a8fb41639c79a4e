// The trace a claimed step continues: the one the command that scheduled it ran in, as its
// StepScheduled event's metadata records it (`traceparent`, server/events/store.ts), so one
// trace spans the web process and the runners (docs/operations.md, "Traces"). Read only when
// this process exports traces.
import type { Context } from "@opentelemetry/api";
import type { Queryable } from "../db/pool";
import { tracingOn } from "../tracing/sdk";
import { contextOfTraceparent } from "../tracing/spans";

export async function scheduledTrace(db: Queryable, step: { id: string; sessionId: string }): Promise<Context> {
  if (!tracingOn()) return contextOfTraceparent(null);
  const found = await db
    .query<{ traceparent: string | null }>({
      name: "catcafe_step_traceparent",
      text: `SELECT metadata->>'traceparent' AS traceparent FROM events
             WHERE stream_id = $1 AND type = 'StepScheduled' AND data->>'stepId' = $2 LIMIT 1`,
      values: [step.sessionId, step.id],
    })
    // A trace is not worth failing a step for: without its parent the step's span is a root.
    .catch(() => null);
  return contextOfTraceparent(found?.rows[0]?.traceparent);
}
