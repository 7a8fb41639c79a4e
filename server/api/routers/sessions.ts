// Sessions: the list (server/sessions/list.ts: filters, search, keyset pages both ways,
// newest first), the counts by state, and a session's timeline.
import { z } from "zod";
import { readSessionTimeline } from "../../events/timeline";
import { countSessions, readSessionPage, ZListSessionsInput, ZSessionFilters, type SessionListRow } from "../../sessions/list";
import { router, viewerProcedure } from "../trpc";

export const ZTimelineInput = z.object({
  sessionId: z.string().min(1).max(100),
  afterVersion: z.number().int().nonnegative().default(0),
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

  timeline: viewerProcedure
    .input(ZTimelineInput)
    .query(({ ctx, input }) => readSessionTimeline(ctx.pool, input.sessionId, { afterVersion: input.afterVersion, limit: input.limit })),
});
