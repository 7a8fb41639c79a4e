// Resume (req F6): an interrupted session goes on in its own stream from the first step that
// did not complete (no fork: ./fork.ts makes those). What "interrupted" means decides what is
// done; the decision goes through the command handler like every action on a task.
import { z } from "zod";
import { INTERRUPTED_OUTCOMES } from "../../lib/outcomes";
import { AppError } from "../errors";
import { ZBudget, type Actor } from "../events/catalog";
import type { RecordedEvent } from "../events/types";
import { definitionFor, foldTask } from "../task-engine";
import type { WorkflowDefinition } from "../workflow/definition";
import { decideOnTask, sessionHistory, type TaskDeps } from "./commands";

export const ZResumeInput = z.object({
  /** Default: the latest session (of `workflow`, when given) that was interrupted. */
  sessionId: z.string().min(1).max(100).optional(),
  workflow: z.string().min(1).max(100).optional(),
  /** A new budget for a session that ran out of it. */
  budget: ZBudget.optional(),
});

export interface Resumed {
  sessionId: string;
  /** resumed: it runs again; released: a dead runner's step was handed to the others; else nothing was needed. */
  status: "resumed" | "released" | "running" | "queued" | "waiting";
  message: string;
  version: number;
}

/**
 * The state whose work an interrupted session stopped in: the one the budget could not pay
 * for, else the one left for the cancel or the failure (before a person's stop after a failure).
 */
function interruptedIn(def: WorkflowDefinition, history: RecordedEvent[], outcome: string): string | null {
  if (outcome === "budget_exhausted") {
    const unpaid = (history.findLast((e) => e.type === "BudgetExhausted")?.data as { state?: string } | undefined)?.state;
    if (unpaid) return unpaid;
  }
  const moves = history.filter((e) => e.type === "SessionStateChanged").map((e) => e.data as { from: string; to: string });
  for (const move of moves.reverse()) {
    const spec = def.states[move.from];
    if (!spec || spec.type === "terminal" || move.from === def.global.step_failed) continue;
    return move.from;
  }
  return null;
}

async function latestInterrupted(deps: TaskDeps, workflow: string | undefined): Promise<string> {
  const r = await deps.pool.query<{ id: string }>(
    `SELECT s.id FROM sessions s JOIN streams st ON st.id = s.id
     WHERE ($1::text IS NULL OR s.workflow = $1)
       AND (s.outcome = ANY($2::text[]) OR (s.outcome IS NULL AND s.state = 'agent_failed'))
     ORDER BY st.updated_at DESC LIMIT 1`,
    [workflow ?? null, [...INTERRUPTED_OUTCOMES]],
  );
  const id = r.rows[0]?.id;
  if (!id) throw new AppError("NOT_FOUND", `no interrupted ${workflow ? `${workflow} ` : ""}session to resume`);
  return id;
}

/** What the runners' side says of a step's lease (server/runner/liveness.ts `releaseOrphanedLease`). */
export interface StepLease {
  /** released: its runner was gone and the lease is handed over now. */
  state: "running" | "released" | "queued" | "done";
  attempt: number;
  liveRunners: number;
}

export interface ResumeDeps extends TaskDeps {
  lease: (stepId: string) => Promise<StepLease>;
}

/**
 * Resume (req F6): an interrupted session goes on from the first step that did not
 * complete; nothing completed runs again. What "interrupted" means decides what is done:
 *   - it ended cancelled, failed or out of budget: SessionResumed, and the state whose work
 *     stopped is entered again (with a new budget, when it was spent);
 *   - it waits for a person after an agent failure: the retry is chosen;
 *   - its step's runner died (killed, machine gone): the lease is released now, so a
 *     runner takes the step over at once instead of when the lease expires;
 *   - its step runs or waits for a runner, or it waits for a person's decision: nothing to
 *     do, and the answer says so.
 */
export async function resumeSession(deps: ResumeDeps, raw: z.input<typeof ZResumeInput>, actor: Actor): Promise<Resumed> {
  const input = ZResumeInput.parse(raw);
  const sessionId = input.sessionId ?? (await latestInterrupted(deps, input.workflow));
  const history = await sessionHistory(deps, sessionId);
  const state = foldTask(history);
  if (state.status === "finished") {
    // The decider refuses a session that was not interrupted, and a budget still spent.
    const target = interruptedIn(definitionFor(state), history, state.outcome) ?? state.fsm;
    const r = await decideOnTask(deps, sessionId, actor, {
      type: "Resume",
      state: target,
      ...(input.budget ? { budget: input.budget } : {}),
    });
    return { sessionId, status: "resumed", message: `resumed: ${target} runs again (it had ended ${state.outcome})`, version: r.version };
  }
  if (state.status !== "active") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  if (state.needed?.cause === "agent_failed") {
    const r = await decideOnTask(deps, sessionId, actor, { type: "Choose", choice: "retry" });
    return {
      sessionId,
      status: "resumed",
      message: `resumed: ${state.needed.resume ?? "the failed step"} is tried again`,
      version: r.version,
    };
  }
  if (!state.step) {
    return { sessionId, status: "waiting", message: `nothing to resume: it waits for a person in "${state.fsm}"`, version: state.version };
  }
  const lease = await deps.lease(state.step.id);
  const noRunner = lease.liveRunners === 0 ? " No runner is live: start one (npm run runner)." : "";
  if (lease.state === "released") {
    return {
      sessionId,
      status: "released",
      message: `the runner that held ${state.step.state} (attempt ${lease.attempt}) is gone: its lease is released, and the next runner continues it.${noRunner}`,
      version: state.version,
    };
  }
  if (lease.state === "running") {
    return {
      sessionId,
      status: "running",
      message: `nothing to resume: ${state.step.state} is running (attempt ${lease.attempt})`,
      version: state.version,
    };
  }
  return {
    sessionId,
    status: "queued",
    message: `nothing to resume: ${state.step.state} waits for a runner.${noRunner}`,
    version: state.version,
  };
}
