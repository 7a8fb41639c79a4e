// Sessions: the list (sessions projection with its stream's event count and last
// activity), newest first with cursor pagination, and a session's timeline.
import { z } from "zod";
import { AppError } from "../../errors";
import { readTimeline } from "../../events/timeline";
import { router, viewerProcedure } from "../trpc";

export const ZListSessionsInput = z
  .object({
    state: z.string().trim().min(1).max(100).optional(),
    workflow: z.string().trim().min(1).max(100).optional(),
    /** An actor label as stored on the session, e.g. `user:<id>`. */
    createdBy: z.string().trim().min(1).max(200).optional(),
    limit: z.number().int().min(1).max(200).default(50),
    /** The `nextCursor` of the previous page. */
    cursor: z.string().min(1).max(100).nullish(),
  })
  // No input at all lists the first page.
  .prefault({});

export const ZTimelineInput = z.object({
  sessionId: z.string().min(1).max(100),
  afterVersion: z.number().int().nonnegative().default(0),
  limit: z.number().int().min(1).max(1000).default(100),
});

export interface SessionListItem {
  id: string;
  title: string;
  workflow: string;
  state: string;
  parentId: string | null;
  forkVersion: number | null;
  createdBy: string;
  createdAt: string;
  /** Events in the session's own stream. */
  version: number;
  updatedAt: string;
}

export const sessionsRouter = router({
  list: viewerProcedure
    .input(ZListSessionsInput)
    .query(async ({ ctx, input }): Promise<{ items: SessionListItem[]; nextCursor: string | null }> => {
      // Ordered by creation (stable while sessions keep changing), the id breaking ties;
      // Prisma's cursor compares in SQL, so microsecond timestamps never skip a row.
      const rows = await ctx.prisma.session.findMany({
        where: { state: input.state, workflow: input.workflow, createdBy: input.createdBy },
        select: {
          id: true,
          title: true,
          workflow: true,
          state: true,
          parentId: true,
          forkVersion: true,
          createdBy: true,
          createdAt: true,
          stream: { select: { version: true, updatedAt: true } },
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: input.limit + 1,
        ...(input.cursor ? { cursor: { id: input.cursor }, skip: 1 } : {}),
      });
      const page = rows.slice(0, input.limit);
      return {
        items: page.map(({ stream, createdAt, ...s }) => ({
          ...s,
          createdAt: createdAt.toISOString(),
          version: stream.version,
          updatedAt: stream.updatedAt.toISOString(),
        })),
        nextCursor: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null,
      };
    }),

  timeline: viewerProcedure.input(ZTimelineInput).query(async ({ ctx, input }) => {
    const stream = await ctx.prisma.stream.findUnique({ where: { id: input.sessionId }, select: { id: true } });
    if (!stream) throw new AppError("NOT_FOUND", `no session ${input.sessionId}`);
    return readTimeline(ctx.pool, input.sessionId, { afterVersion: input.afterVersion, limit: input.limit });
  }),
});
