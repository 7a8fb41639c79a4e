// The attention inbox (viewer role to read, operator to acknowledge): sessions waiting for a
// confirm, escalated or failed that nobody has acknowledged, with a live feed over
// Server-Sent Events fed by the web process's one LISTEN connection. Thin: the work is in
// server/sessions/inbox.ts.
import { TRPCError } from "@trpc/server";
import { hasRole } from "../../../lib/roles";
import { resolveUser } from "../../auth/users";
import { actorLabel } from "../../events/catalog";
import { acknowledge, followInbox, inboxCountFeed, readInbox, ZAcknowledgeInput, ZInboxFilters, type Inbox } from "../../sessions/inbox";
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
    // The header's count is read once for every page of this process; a list (the inbox page), per stream.
    const inboxes = input.countOnly
      ? countsAsInboxes(inboxCountFeed(ctx.pool).follow(signal))
      : followInbox(ctx.pool, sessionEventsListener(ctx.pool), input, actorLabel(actorOf(user)), signal);
    for await (const inbox of inboxes) {
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

async function* countsAsInboxes(counts: AsyncGenerator<number>): AsyncGenerator<Inbox> {
  for await (const count of counts) yield { count, items: [] };
}
