// Tasks (req W1–W13): operators start, confirm, follow up, cancel and rerun; viewers read the
// state. Thin: the domain functions in server/tasks do the work and record the actor.
import type { CurrentUser } from "../../auth/request";
import type { Actor } from "../../events/catalog";
import {
  cancelTask,
  type TaskDeps,
  confirmTask,
  followUpTask,
  loadTask,
  startTask,
  ZCancelInput,
  ZConfirmInput,
  ZFollowUpInput,
  ZSessionRef,
  ZStartTaskInput,
} from "../../tasks/commands";
import { rerunTask } from "../../tasks/fork";
import { tellTracker } from "../../tracker/schedule";
import { runtimeContextFromEvents } from "../../config/runtime-context";
import { liveWorktrees } from "../../pruning/worktrees";
import { AppError } from "../../errors";
import { foldTask, outcomeOf, startedTask, type TaskState } from "../../task-engine";
import { operatorProcedure, router, viewerProcedure } from "../trpc";

export function actorOf(user: CurrentUser): Actor {
  return { kind: "user", id: user.id };
}

export interface TaskSummary {
  sessionId: string;
  version: number;
  fsm: string;
  status: TaskState["status"];
  outcome: string | null;
  iteration: number;
  workflow: string | null;
  mode: string | null;
  prompt: string | null;
  project: { id: string; name: string } | null;
  step: TaskState["step"];
}

/** What a viewer may see of a task's state: no repository paths, agent configs or outputs. */
export function summarizeTask(sessionId: string, state: TaskState): TaskSummary {
  const task = startedTask(state);
  const config = task?.config ?? null;
  return {
    sessionId,
    version: state.version,
    fsm: state.fsm,
    status: state.status,
    outcome: outcomeOf(state),
    iteration: task?.iteration ?? 0,
    workflow: config?.workflow ?? null,
    mode: config?.mode ?? null,
    prompt: config?.prompt ?? null,
    project: config ? { id: config.project.id, name: config.project.name } : null,
    step: state.step,
  };
}

const deps = (ctx: TaskDeps) => ({ store: ctx.store, pool: ctx.pool });

/** A confirm's or cancel's answer, once the tracker's steps for the session's new state are scheduled (server/tracker/schedule.ts). */
export async function toldTracker<T extends { sessionId: string }>(ctx: TaskDeps, answer: Promise<T>): Promise<T> {
  const done = await answer;
  await tellTracker(ctx, done.sessionId);
  return done;
}

export const tasksRouter = router({
  start: operatorProcedure.input(ZStartTaskInput).mutation(({ ctx, input }) => startTask(deps(ctx), input, actorOf(ctx.user))),
  confirm: operatorProcedure
    .input(ZConfirmInput)
    .mutation(({ ctx, input }) => toldTracker(ctx, confirmTask(deps(ctx), input, actorOf(ctx.user)))),
  followUp: operatorProcedure.input(ZFollowUpInput).mutation(({ ctx, input }) => followUpTask(deps(ctx), input, actorOf(ctx.user))),
  cancel: operatorProcedure
    .input(ZCancelInput)
    .mutation(({ ctx, input }) => toldTracker(ctx, cancelTask(deps(ctx), input, actorOf(ctx.user)))),
  rerun: operatorProcedure.input(ZSessionRef).mutation(({ ctx, input }) => rerunTask(deps(ctx), input, actorOf(ctx.user))),
  get: viewerProcedure
    .input(ZSessionRef)
    .query(async ({ ctx, input }) => summarizeTask(input.sessionId, await loadTask(ctx.store, input.sessionId))),
  /** The run's execution context (req M6): agents, shells, brains, FSMs as recorded at start (secrets redacted), history and artifacts. */
  runtimeContext: operatorProcedure.input(ZSessionRef).query(async ({ ctx, input }) => {
    // One read of the stream (a long session's is the cost): NOT_FOUND for what is not a task.
    const events = await ctx.store.readStream(input.sessionId);
    if (foldTask(events).status === "none") throw new AppError("NOT_FOUND", `session ${input.sessionId} is not a task`);
    const context = runtimeContextFromEvents(input.sessionId, events);
    // Where its worktrees are: on the hosts of the runners that made them, as they recorded it (pruning/worktrees.ts).
    return context ? { ...context, worktrees: liveWorktrees(input.sessionId, events) } : null;
  }),
});
