// Invitations (req X2, docs/auth.md, "Invitations"): admins create, list and revoke them;
// the invited person, not signed in, reads one by its link's token and accepts it.
import {
  acceptInvitation,
  createInvitation,
  listPendingInvitations,
  revokeInvitation,
  viewInvitation,
  ZAcceptInvitationInput,
  ZCreateInvitationInput,
  ZInvitationRef,
  type InvitationInfo,
} from "../../auth/invitations";
import { z } from "zod";
import { adminProcedure, publicProcedure, router } from "../trpc";

export interface InvitationItem {
  id: string;
  role: InvitationInfo["role"];
  email: string | null;
  invitedByName: string;
  createdAt: string;
  expiresAt: string;
  status: InvitationInfo["status"];
}

function toItem(i: InvitationInfo): InvitationItem {
  return { ...i, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString() };
}

export const invitationsRouter = router({
  /** The token and the link's path are in this answer only (the browser and the CLI put their host in front). */
  create: adminProcedure.input(ZCreateInvitationInput).mutation(async ({ ctx, input }) => {
    const created = await createInvitation(ctx, input, { userId: ctx.user.id });
    return { ...toItem(created), token: created.token, path: created.path };
  }),
  /** Pending invitations (not used, revoked or expired), newest first. */
  list: adminProcedure.query(async ({ ctx }) => (await listPendingInvitations(ctx.prisma)).map(toItem)),
  revoke: adminProcedure
    .input(ZInvitationRef)
    .mutation(async ({ ctx, input }) => toItem(await revokeInvitation(ctx, input, { userId: ctx.user.id }))),
  /** For the link's page, signed out: the role and who invited, or why the link no longer works. */
  // Any string up to a bound: one that is no invitation's token reads as "unknown", not as bad input.
  view: publicProcedure.input(z.object({ token: z.string().max(1000) })).query(async ({ ctx, input }) => {
    const view = await viewInvitation(ctx.prisma, input.token);
    return view.status === "unknown" ? view : { ...view, expiresAt: view.expiresAt.toISOString() };
  }),
  /** Creates the account with the invitation's role; then the person signs in with the email and password. */
  accept: publicProcedure.input(ZAcceptInvitationInput).mutation(async ({ ctx, input }) => acceptInvitation(ctx, input)),
});
