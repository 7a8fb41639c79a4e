// The read side of a bake-off (viewer role, docs/bake-off.md): the comparison of its
// contenders (`bakeOffView.comparison`) and the same, live (`bakeOffView.updates`, Server-Sent
// Events fed by the web process's one LISTEN connection). Thin: server/agent-record does the work.
import { TRPCError } from "@trpc/server";
import { hasRole } from "../../../lib/roles";
import { bakeOffComparison, bakeOffRole, followBakeOff, ZBakeOffRef, type BakeOffComparison } from "../../agent-record/comparison";
import { resolveUser, userNames } from "../../auth/users";
import type { PrismaClient } from "../../db/generated/client";
import { fileSettings } from "../../projects/config-edits";
import { sessionEventsListener } from "../../sessions/view/listener";
import { router, viewerProcedure } from "../trpc";

/** Who chose, by name (the events name people by id). */
async function withNames(
  prisma: PrismaClient,
  comparison: BakeOffComparison,
): Promise<BakeOffComparison & { names: Record<string, string> }> {
  return {
    ...comparison,
    names: await userNames(
      prisma,
      [comparison.chosen?.by, comparison.dismissed?.by].filter((by): by is string => !!by),
    ),
  };
}

export const bakeOffViewRouter = router({
  /** Whether the session is a bake-off's parent or one of its contenders (null: neither): the session page's link. */
  of: viewerProcedure.input(ZBakeOffRef).query(({ ctx, input }) => bakeOffRole(ctx.pool, input.sessionId)),
  comparison: viewerProcedure
    .input(ZBakeOffRef)
    .query(async ({ ctx, input }) => withNames(ctx.prisma, await bakeOffComparison(ctx, input.sessionId, fileSettings().pricing))),
  updates: viewerProcedure.input(ZBakeOffRef).subscription(async function* ({ ctx, input, signal }) {
    const user = ctx.user;
    const principal = ctx.principal ?? (async () => (user ? await resolveUser(ctx.prisma, user.id) : null));
    const pricing = () => fileSettings().pricing;
    for await (const comparison of followBakeOff(ctx, sessionEventsListener(ctx.pool), input.sessionId, pricing, signal)) {
      // As live.updates: a stream ends when its credentials no longer name a viewer.
      const now = await principal();
      if (!now || !hasRole(now.role, "viewer")) {
        throw new TRPCError({
          code: "UNAUTHORIZED",
          message: "the credentials of this stream are no longer valid (revoked, disabled or signed out)",
        });
      }
      yield await withNames(ctx.prisma, comparison);
    }
  }),
});
