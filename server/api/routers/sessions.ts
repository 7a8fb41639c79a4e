// Sessions: the list (server/sessions/list.ts: filters, search, keyset pages both ways,
// newest first), the counts by state, a session's timeline, and what a person makes of a
// session's history (server/tasks/fork.ts): fork at an event, revert, modify, resume; and the
// clean-up of failed sessions' workspaces (server/pruning/service.ts, req F14).
import { z } from "zod";
import { withUserNames } from "../../auth/names";
import { userNames } from "../../auth/users";
import { readSessionTimeline } from "../../events/timeline";
import { FEEDBACK_HISTORY_TYPES, feedbackHistory } from "../../sessions/feedback";
import { countSessions, readSessionPage, ZListSessionsInput, ZSessionFilters, type SessionListRow } from "../../sessions/list";
import { modifySession, revertSession, ZForkInput, ZModifyInput, ZRevertInput } from "../../tasks/fork";
import { resumeSession, ZResumeInput } from "../../tasks/resume";
import { releaseOrphanedLease } from "../../runner/liveness";
import { compareSessions, ZCompareInput } from "../../tasks/compare";
import { forkAnySession } from "../fork";
import {
  approveDelivery,
  DELIVERY_EVENT_TYPES,
  deliverSession,
  deliveriesOf,
  deliveryApprovals,
  ZApproveDelivery,
  ZDeliverRequest,
} from "../../delivery/service";
import { ZVersion } from "../../events/versions";
import { fileSettings } from "../../projects/config-edits";
import { readSessionState } from "../../sessions/state-document";
import { sessionUsage } from "../../usage/totals";
import {
  PRUNE_STATUS_TYPES,
  pruneSession,
  pruneSessions,
  pruneStatusOf,
  ZPruneSessionInput,
  ZPruneSessionsInput,
} from "../../pruning/service";
import { operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

export const ZTimelineInput = z.object({
  sessionId: z.string().min(1).max(100),
  afterVersion: ZVersion.default(0),
  limit: z.number().int().min(1).max(1000).default(100),
});

export interface SessionListItem extends Omit<SessionListRow, "createdAt" | "updatedAt"> {
  createdAt: string;
  /** Events in the session's own stream (inherited ones not counted). */
  version: number;
  updatedAt: string;
}

function toItem(r: SessionListRow): SessionListItem {
  return { ...r, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() };
}

export const sessionsRouter = router({
  list: viewerProcedure.input(ZListSessionsInput).query(async ({ ctx, input }) => {
    const { rows, ...page } = await readSessionPage(ctx, input);
    return { items: rows.map(toItem), ...page };
  }),

  counts: viewerProcedure.input(ZSessionFilters.prefault({})).query(({ ctx, input }) => countSessions(ctx.pool, input)),

  /** Each entry with its actor's name (`actorName`), and people named in summaries (req X2). */
  timeline: viewerProcedure.input(ZTimelineInput).query(async ({ ctx, input }) => {
    const entries = await readSessionTimeline(ctx.pool, input.sessionId, { afterVersion: input.afterVersion, limit: input.limit });
    const { value, names } = await withUserNames(ctx.prisma, entries);
    return value.map((e) => ({ ...e, actorName: names[e.actor] ?? e.actor }));
  }),

  /** Where the session is now, as one document (req M10; server/sessions/state-document.ts): summary.json's `runtime`. */
  state: viewerProcedure
    .input(z.object({ sessionId: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => readSessionState(ctx, input.sessionId, (id) => sessionUsage(ctx.pool, id, fileSettings().pricing))),

  /** Every piece of feedback the session's events hold, in order (server/sessions/feedback.ts). */
  feedback: viewerProcedure.input(z.object({ sessionId: z.string().min(1).max(100) })).query(async ({ ctx, input }) => {
    // Only the types the history reads: a long session's other events are most of it (NOT_FOUND for no session).
    const history = feedbackHistory(await ctx.store.readStream(input.sessionId, { types: FEEDBACK_HISTORY_TYPES }));
    // People by name (the events name them by id), agents by their id.
    const names = await userNames(
      ctx.prisma,
      history.map((f) => f.by),
    );
    return history.map((f) => ({ ...f, name: names[f.by] ?? f.by.replace(/^agent:/, "") }));
  }),

  /** Two branches of a fork tree side by side (server/tasks/compare.ts). */
  compare: viewerProcedure.input(ZCompareInput).query(async ({ ctx, input }) => {
    const comparison = await compareSessions(ctx, input);
    // Who forked each side, by name (the events name people by id).
    const forkers = [comparison.a.fork?.by, comparison.b.fork?.by].filter((by): by is string => !!by);
    return { ...comparison, names: await userNames(ctx.prisma, forkers) };
  }),

  fork: operatorProcedure.input(ZForkInput).mutation(({ ctx, input }) => forkAnySession(ctx, input, actorOf(ctx.user))),
  /** Deliver an approved session's work as the project's delivery settings say (docs/delivery.md). */
  deliver: operatorProcedure
    .input(ZDeliverRequest)
    .mutation(({ ctx, input }) => deliverSession(ctx, input, actorOf(ctx.user), { publicUrl: process.env.NEXTAUTH_URL })),
  /** Approve the delivery of an approved session (a project may ask for several people's). */
  approveDelivery: operatorProcedure
    .input(ZApproveDelivery)
    .mutation(({ ctx, input }) => approveDelivery(ctx, input, actorOf(ctx.user), { publicUrl: process.env.NEXTAUTH_URL })),
  /** The approvals the project asks for before delivery, and who gave them (by name). */
  deliveryApprovals: viewerProcedure.input(ZDeliverRequest).query(async ({ ctx, input }) => {
    const { needed, approvedBy } = await deliveryApprovals(ctx, input.sessionId);
    const names = await userNames(ctx.prisma, approvedBy);
    return { needed, approvedBy: approvedBy.map((label) => ({ label, name: names[label] ?? label })) };
  }),
  /** The session's deliveries, each with its outcome (null while it runs). */
  deliveries: viewerProcedure.input(ZDeliverRequest).query(async ({ ctx, input }) => {
    // Only the types the deliveries fold: a long session's other events are most of it (NOT_FOUND for no session).
    const deliveries = deliveriesOf(await ctx.store.readStream(input.sessionId, { types: DELIVERY_EVENT_TYPES }));
    // Who asked, by name (an actor label for anyone else: the system, a runner).
    const names = await userNames(
      ctx.prisma,
      deliveries.map((d) => d.requested.by),
    );
    return deliveries.map((d) => ({ ...d, requested: { ...d.requested, byName: names[d.requested.by] ?? d.requested.by } }));
  }),
  /** Clean up one finished, unsuccessful session's workspace (the session page's button). */
  cleanUp: operatorProcedure.input(ZPruneSessionInput).mutation(({ ctx, input }) => pruneSession(ctx, input, actorOf(ctx.user))),
  /** Clean up the workspaces of sessions with these outcomes that ended more than N days ago (`catcafe sessions prune`). */
  prune: operatorProcedure.input(ZPruneSessionsInput).mutation(async ({ ctx, input }) => {
    const result = await pruneSessions(ctx, input, actorOf(ctx.user));
    return { ...result, sessions: result.sessions.map((s) => ({ ...s, endedAt: s.endedAt.toISOString() })) };
  }),
  /** Where the session's workspace clean-up stands, with who asked by name. */
  cleanUpStatus: viewerProcedure.input(ZPruneSessionInput).query(async ({ ctx, input }) => {
    // Only the types the status folds (NOT_FOUND for no session).
    const events = await ctx.store.readStream(input.sessionId, { types: PRUNE_STATUS_TYPES });
    const status = pruneStatusOf(input.sessionId, events);
    if (status.status === "none") return { ...status, askedByName: null };
    const names = await userNames(ctx.prisma, [status.askedBy]);
    return { ...status, askedByName: names[status.askedBy] ?? status.askedBy };
  }),
  revert: operatorProcedure.input(ZRevertInput).mutation(({ ctx, input }) => revertSession(ctx, input, actorOf(ctx.user))),
  modify: operatorProcedure.input(ZModifyInput).mutation(({ ctx, input }) => modifySession(ctx, input, actorOf(ctx.user))),
  resume: operatorProcedure
    .input(ZResumeInput)
    .mutation(({ ctx, input }) =>
      resumeSession({ ...ctx, lease: (stepId) => releaseOrphanedLease(ctx.pool, stepId) }, input, actorOf(ctx.user)),
    ),
});
