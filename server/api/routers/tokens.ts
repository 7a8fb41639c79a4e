// Personal API tokens: everyone manages their own; an admin may revoke anyone's.
import { TRPCError } from "@trpc/server";
import {
  createApiToken,
  listAllApiTokens,
  listApiTokens,
  revokeApiToken,
  ZCreateTokenInput,
  ZTokenRef,
  type ApiTokenInfo,
} from "../../auth/tokens";
import { adminProcedure, router, viewerProcedure } from "../trpc";

export interface TokenListItem {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  expiresAt: string | null;
}

function toItem(t: ApiTokenInfo): TokenListItem {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    createdAt: t.createdAt.toISOString(),
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
    expiresAt: t.expiresAt?.toISOString() ?? null,
  };
}

export const tokensRouter = router({
  /** The token itself is in this answer only; it cannot be shown again. */
  create: viewerProcedure.input(ZCreateTokenInput).mutation(async ({ ctx, input }) => {
    // A leaked token must not be able to mint tokens that outlive its revocation.
    if (ctx.user.via !== "session")
      throw new TRPCError({
        code: "FORBIDDEN",
        message: "API tokens are created from a signed-in browser session, not with another token",
      });
    const created = await createApiToken(ctx, ctx.user.id, input);
    return { ...toItem(created), token: created.token };
  }),
  list: viewerProcedure.query(async ({ ctx }) => (await listApiTokens(ctx.prisma, ctx.user.id)).map(toItem)),
  /** Everyone's tokens with their owner (admin), to revoke any of them. */
  listAll: adminProcedure.query(async ({ ctx }) =>
    (await listAllApiTokens(ctx.prisma)).map((t) => ({
      ...toItem(t),
      ownerId: t.userId,
      ownerName: t.ownerName,
      ownerEmail: t.ownerEmail,
    })),
  ),
  revoke: viewerProcedure
    .input(ZTokenRef)
    .mutation(async ({ ctx, input }) =>
      toItem(await revokeApiToken(ctx, input, { userId: ctx.user.id, isAdmin: ctx.user.role === "admin" })),
    ),
});
