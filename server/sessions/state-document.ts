// A session's runtime state as one document (req M10, docs/session-view.md "The state
// document"): where the session is now — workflow, state, iteration, stage, each role's
// agent, the step in progress, the budget and what is spent, the outcome, the fork it came
// from, and the version it was read at. The counterpart of the seed's state file, read from
// the events instead of written beside them. One builder serves `sessions.state` (and its
// REST alias and `catcafe session state`) and the export's summary.json (`runtime`).
import { z } from "zod";
import type { AppEvent } from "../events/catalog";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import { AppError } from "../errors";
import { foldTask, startedTask, type TaskState } from "../task-engine";

/** What the document reads of the usage projection's figures (server/usage/totals.ts `SessionUsage`). */
export interface SessionCost {
  currency: string;
  total: { cost: number };
}

export const STATE_DOCUMENT_VERSION = 1;

const ZLimit = z.strictObject({ max: z.number().nullable(), used: z.number() });

/** Where the step in progress is in the runners' queue, as its events say. */
export const ZPendingStepStatus = z.enum(["queued", "running", "retry_wait", "completed", "failed", "cancelled"]);
type PendingStepStatus = z.infer<typeof ZPendingStepStatus>;

export const ZSessionStateDocument = z.strictObject({
  format: z.strictObject({ name: z.literal("catcafe-session-state"), version: z.literal(STATE_DOCUMENT_VERSION) }),
  sessionId: z.string(),
  title: z.string().nullable(),
  workflow: z.strictObject({ id: z.string(), version: z.number().int().nullable() }).nullable(),
  mode: z.string().nullable(),
  /** none: no task started (a conversation, or before its start); active; finished. */
  status: z.enum(["none", "active", "finished"]),
  /** The workflow state (FSM). */
  state: z.string(),
  iteration: z.number().int().nonnegative(),
  /** A staged workflow (Forge): the stage it is in, that stage's iteration, the stages completed. */
  stage: z.strictObject({ name: z.string(), iteration: z.number().int().positive(), completed: z.array(z.string()) }).nullable(),
  /** role → the agent that plays it (its id and kind; nothing of how it runs). */
  roles: z.record(z.string(), z.strictObject({ agentId: z.string().nullable(), kind: z.string().nullable() })),
  /** The commit the next step works from (the base commit before the first). */
  head: z.string().nullable(),
  step: z
    .strictObject({
      id: z.string(),
      kind: z.string(),
      state: z.string(),
      role: z.string(),
      /** The attempt that runs or last ran (0 before the first). */
      attempt: z.number().int().nonnegative(),
      status: ZPendingStepStatus,
    })
    .nullable(),
  /** Why it waits for a person, while it does (a loop, a cap, an agent that failed). */
  needed: z.strictObject({ cause: z.string(), stage: z.string().nullable(), message: z.string() }).nullable(),
  budget: z.strictObject({
    iterations: ZLimit,
    /** Agent calls, reserved when scheduled (what the budget counts). */
    calls: ZLimit,
    tokens: ZLimit,
    maxWallMs: z.number().nullable(),
    /** The cost the usage projection prices (null when read without it). */
    cost: z.strictObject({ currency: z.string(), used: z.number() }).nullable(),
  }),
  outcome: z
    .strictObject({
      outcome: z.string(),
      reason: z.string().nullable(),
      errorClass: z.string().nullable(),
      diagnosis: z.string().nullable(),
      at: z.string(),
    })
    .nullable(),
  /** The fork this session is (its parent, where, why); null for an original. */
  fork: z.strictObject({ parentId: z.string(), atVersion: z.number().int(), reason: z.string(), note: z.string().nullable() }).nullable(),
  /** The last event read (inherited ones counted) and when it was recorded. */
  version: z.number().int().nonnegative(),
  updatedAt: z.string().nullable(),
});
export type SessionStateDocument = z.infer<typeof ZSessionStateDocument>;

type Typed = RecordedEvent & AppEvent;

/** The step's kind, attempt and queue status from its own events. */
function stepProgress(events: readonly Typed[], stepId: string): { kind: string; attempt: number; status: PendingStepStatus } {
  let kind = "agent";
  let attempt = 0;
  let status: PendingStepStatus = "queued";
  for (const e of events) {
    if ((e.data as { stepId?: unknown } | null)?.stepId !== stepId) continue;
    switch (e.type) {
      case "StepScheduled":
        kind = e.data.kind;
        break;
      case "StepStarted":
        attempt = e.data.attempt;
        status = "running";
        break;
      case "StepFailed":
        attempt = e.data.attempt;
        status = e.data.retryAt ? "retry_wait" : "failed";
        break;
      case "StepReleased":
        status = "queued";
        break;
      case "StepCompleted":
        status = "completed";
        break;
      case "StepCancelled":
        status = "cancelled";
        break;
    }
  }
  return { kind, attempt, status };
}

/**
 * The state document of `sessionId` from its whole history (inherited events included) and
 * its fold; `usage` (the usage projection's figures, server/usage/totals.ts) adds the cost.
 */
export function sessionStateDocument(
  sessionId: string,
  history: readonly RecordedEvent[],
  final: TaskState,
  usage: SessionCost | null,
): SessionStateDocument {
  const events = history as readonly Typed[];
  const task = startedTask(final);
  const created = events.findLast((e) => e.type === "SessionCreated" || e.type === "SessionForked");
  const started = events.findLast((e) => e.type === "TaskStarted");
  const ownFork = events.find((e) => e.type === "SessionForked" && e.streamId === sessionId);
  const finalized = final.status === "finished" ? events.findLast((e) => e.type === "SessionFinalized") : undefined;
  const workflowId = started?.type === "TaskStarted" ? started.data.workflow : created ? created.data.workflow : null;
  const current = task?.stages.current ?? null;
  const step = final.step ? { ...final.step, ...stepProgress(events, final.step.id) } : null;
  const budget = task?.config.budget;
  const last = history.at(-1);
  return {
    format: { name: "catcafe-session-state", version: STATE_DOCUMENT_VERSION },
    sessionId,
    title: created?.type === "SessionCreated" || created?.type === "SessionForked" ? (created.data.title ?? null) : null,
    workflow: workflowId ? { id: workflowId, version: started?.type === "TaskStarted" ? started.data.workflowVersion : null } : null,
    mode: task?.config.mode ?? null,
    status: final.status,
    state: final.fsm,
    iteration: task?.iteration ?? 0,
    stage:
      task && current ? { name: current, iteration: task.stages.iterations[current] ?? 1, completed: [...task.stages.completed] } : null,
    roles: Object.fromEntries(
      Object.entries(task?.config.agents ?? {}).map(([role, config]) => {
        const c = (typeof config === "object" && config !== null ? config : {}) as { id?: unknown; kind?: unknown };
        return [role, { agentId: typeof c.id === "string" ? c.id : null, kind: typeof c.kind === "string" ? c.kind : null }];
      }),
    ),
    head: task?.head ?? null,
    step: step ? { id: step.id, kind: step.kind, state: step.state, role: step.role, attempt: step.attempt, status: step.status } : null,
    needed:
      final.status === "active" && final.needed
        ? { cause: final.needed.cause, stage: final.needed.stage, message: final.needed.message }
        : null,
    budget: {
      iterations: { max: task?.config.maxIterations ?? null, used: task?.iteration ?? 0 },
      calls: { max: budget?.maxCalls ?? null, used: task?.usage.calls ?? 0 },
      tokens: { max: budget?.maxTokens ?? null, used: task?.usage.tokens ?? 0 },
      maxWallMs: budget?.maxWallMs ?? null,
      cost: usage ? { currency: usage.currency, used: usage.total.cost } : null,
    },
    outcome:
      final.status === "finished"
        ? {
            outcome: final.outcome,
            reason: finalized?.type === "SessionFinalized" ? finalized.data.reason : null,
            errorClass: finalized?.type === "SessionFinalized" ? finalized.data.errorClass : null,
            diagnosis: finalized?.type === "SessionFinalized" ? finalized.data.diagnosis : null,
            at: finalized?.recordedAt ?? last?.recordedAt ?? "",
          }
        : null,
    fork:
      ownFork?.type === "SessionForked"
        ? {
            parentId: ownFork.data.parentId,
            atVersion: ownFork.data.atVersion,
            reason: ownFork.data.reason,
            note: ownFork.data.note ?? null,
          }
        : null,
    version: last?.version ?? 0,
    updatedAt: last?.recordedAt ?? null,
  };
}

/**
 * `sessions.state`: the document of a session as it is now, its cost as `usageOf` (the usage
 * projection, priced) has it; NOT_FOUND for no such session.
 */
export async function readSessionState(
  deps: { store: EventStore },
  sessionId: string,
  usageOf: (sessionId: string) => Promise<SessionCost | null>,
): Promise<SessionStateDocument> {
  const history = await deps.store.readStream(sessionId);
  if (!history.length) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  return sessionStateDocument(sessionId, history, foldTask(history), await usageOf(sessionId));
}
