// The trace a claimed step continues: the one the command that scheduled it ran in, as its
// StepScheduled event's metadata records it (`traceparent`, server/events/store.ts), so one
// trace spans the web process and the runners (docs/operations.md, "Traces"). The claim reads
// it in its own statement while this process exports traces (dispatch.ts CLAIM_SQL, through
// the partial index of traced StepScheduled events by step id): no query of its own.
import type { Context } from "@opentelemetry/api";
import { contextOfTraceparent } from "../tracing/spans";
import type { ClaimedStep } from "./dispatch";

export function scheduledTrace(step: Pick<ClaimedStep, "traceparent">): Context {
  return contextOfTraceparent(step.traceparent ?? null);
}
