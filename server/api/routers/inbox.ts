// The attention inbox (viewer role to read, operator to acknowledge): sessions waiting for a
// confirm, escalated or failed that nobody has acknowledged, with a live feed over
// Server-Sent Events fed by the web process's one LISTEN connection. Thin: the work is in
// server/sessions/inbox.ts.
import { TRPCError } from "@trpc/server";
import { hasRole } from "../../../lib/roles";
import { resolveUser } from "../../auth/users";
import { actorLabel } from "../../events/catalog";
import { acknowledge, followInbox, readInbox, ZAcknowledgeInput, ZInboxFilters } from "../../sessions/inbox";
import { sessionEventsListener } from "../../sessions/view/listener";
import { operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

export const inboxRouter = router({
  list: viewerProcedure
    .input(ZInboxFilters.default({}))
    .query(({ ctx, input }) => readInbox(ctx.pool, input, actorLabel(actorOf(ctx.user)))),
  acknowledge: operatorProcedure
    .input(ZAcknowledgeInput)
    .mutation(({ ctx, input }) => acknowledge(ctx.store, ctx.pool, input.sessionId, actorOf(ctx.user))),
  live: viewerProcedure.input(ZInboxFilters.default({})).subscription(async function* ({ ctx, input, signal }) {
    const user = ctx.user;
    const principal = ctx.principal ?? (async () => (user ? await resolveUser(ctx.prisma, user.id) : null));
    for await (const inbox of followInbox(ctx.pool, sessionEventsListener(ctx.pool), input, actorLabel(actorOf(user)), signal)) {
      // Sent only to whoever the credentials still name (a revoked token ends the stream).
      const now = await principal();
      if (!now || !hasRole(now.role, "viewer"))
        throw new TRPCError({
          code: "UNAUTHORIZED",
          message: "the credentials of this stream are no longer valid (revoked, disabled or signed out)",
        });
      yield inbox;
    }
  }),
});
