// Usage and cost (viewer role): one session's tokens and cost by model, and the totals per
// project and per day. Thin: the work is in server/usage/totals.ts; prices come from
// settings.json as the web process reads it.
import { z } from "zod";
import { fileSettings } from "../../projects/config-edits";
import { sessionUsage, usageReport, ZUsageReportQuery } from "../../usage/totals";
import { router, viewerProcedure } from "../trpc";

export const usageRouter = router({
  session: viewerProcedure
    .input(z.object({ sessionId: z.string().min(1).max(100) }))
    .query(({ ctx, input }) => sessionUsage(ctx.pool, input.sessionId, fileSettings().pricing)),
  report: viewerProcedure
    .input(ZUsageReportQuery.prefault({}))
    .query(({ ctx, input }) => usageReport(ctx.pool, input, fileSettings().pricing)),
});
