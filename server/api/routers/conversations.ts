// Conversations and their collaboration modes (req C1–C8): operators start, post, switch the
// mode, note progress and terminate; viewers read a conversation, follow it live (Server-Sent
// Events fed by the web process's one LISTEN connection) and list the modes. Thin: the work
// is in server/conversations.
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { hasRole } from "../../../lib/roles";
import { withUserNames } from "../../auth/names";
import { resolveUser } from "../../auth/users";
import type { PrismaClient } from "../../db/generated/client";
import {
  getMode,
  noteProgress,
  postMessage,
  projectAgents,
  setMode,
  startConversation,
  terminateConversation,
  ZNoteProgressInput,
  ZPostInput,
  ZSetModeInput,
  ZStartConversationInput,
  ZTerminateInput,
} from "../../conversations/service";
import { listConversations, readConversation, type ConversationView } from "../../conversations/view";
import { listModes } from "../../modes/registry";
import { sessionEventsListener } from "../../sessions/view/listener";
import { wakeSignal } from "../../sessions/view/follow";
import { ZEventVersion } from "../../events/versions";
import { operatorProcedure, router, viewerProcedure } from "../trpc";
import { actorOf } from "./tasks";

const ZRef = z.object({ sessionId: z.string().min(1).max(100) });
const ZListInput = z.object({ projectId: z.string().min(1).optional(), limit: z.number().int().min(1).max(200).default(50) });

export const conversationsRouter = router({
  start: operatorProcedure.input(ZStartConversationInput).mutation(({ ctx, input }) => startConversation(ctx, input, actorOf(ctx.user))),
  post: operatorProcedure.input(ZPostInput).mutation(({ ctx, input }) => postMessage(ctx, input, actorOf(ctx.user))),
  setMode: operatorProcedure.input(ZSetModeInput).mutation(({ ctx, input }) => setMode(ctx, input, actorOf(ctx.user))),
  progress: operatorProcedure.input(ZNoteProgressInput).mutation(({ ctx, input }) => noteProgress(ctx, input, actorOf(ctx.user))),
  terminate: operatorProcedure.input(ZTerminateInput).mutation(({ ctx, input }) => terminateConversation(ctx, input, actorOf(ctx.user))),
  list: viewerProcedure.input(ZListInput.default({ limit: 50 })).query(({ ctx, input }) => listConversations(ctx.pool, input)),
  /** Who would take part in a conversation on the project (for @mention completion). */
  agents: viewerProcedure.input(z.object({ projectId: z.string().min(1) })).query(({ ctx, input }) => projectAgents(ctx, input.projectId)),
  /** Now, or as it was at an event (`atVersion`: a replay, moved to the end of its decision). */
  get: viewerProcedure
    .input(ZRef.extend({ atVersion: ZEventVersion.optional() }))
    .query(async ({ ctx, input }) => named(ctx.prisma, await readConversation(ctx.store, input.sessionId, input.atVersion))),
  /** GET /api/sessions/:id/mode (req C7). */
  mode: viewerProcedure.input(ZRef).query(({ ctx, input }) => getMode(ctx, input.sessionId)),
  /** The whole view at once, then again after every change (coalesced). */
  live: viewerProcedure.input(ZRef).subscription(async function* ({ ctx, input, signal }) {
    const user = ctx.user;
    const principal = ctx.principal ?? (async () => (user ? await resolveUser(ctx.prisma, user.id) : null));
    const wake = wakeSignal();
    const unsubscribe = await sessionEventsListener(ctx.pool).subscribe(input.sessionId, wake.wake);
    try {
      let sent = -1;
      while (!signal?.aborted) {
        const view = await named(ctx.prisma, await readConversation(ctx.store, input.sessionId));
        if (view.version !== sent) {
          // Sent only to whoever the credentials still name (a revoked token ends the stream).
          const now = await principal();
          if (!now || !hasRole(now.role, "viewer"))
            throw new TRPCError({
              code: "UNAUTHORIZED",
              message: "the credentials of this stream are no longer valid (revoked, disabled or signed out)",
            });
          sent = view.version;
          yield view;
        }
        await wake.wait(signal);
      }
    } finally {
      unsubscribe();
    }
  }),
});

/**
 * The conversation with its people by name (req X2): each message's, `/task`'s and the end's `byName`,
 * and labels in system lines ("Mode switched … by …") replaced; `by` stays the actor label.
 */
async function named(prisma: PrismaClient, view: ConversationView) {
  const { value, names } = await withUserNames(prisma, view);
  const entries = value.entries.map((e) =>
    e.kind === "person" || e.kind === "terminated" || e.kind === "task" ? { ...e, byName: names[e.by] ?? e.by } : e,
  );
  return { ...value, entries };
}

/** The mode registry (req C7: GET /api/modes). */
export const modesRouter = router({
  list: viewerProcedure.query(() => listModes()),
});
