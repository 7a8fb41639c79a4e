// Personal API tokens (req U3) for scripts and the CLI: `Authorization: Bearer cc_...`.
// The token is shown once, at creation; only its sha256 is stored (a random 256-bit token
// needs no slow hash), with its first characters to recognise it in a list. A token may
// expire (`expiresInDays`); creating and revoking one are team events (docs/auth.md, "Audit").
import crypto from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../db/generated/client";
import { AppError } from "../errors";
import { changeTeam, userActor, type TeamDeps } from "./team-changes";
import { FORMER_MEMBER, resolveUser, type AuthUser } from "./users";

export const API_TOKEN_PREFIX = "cc_";
/** How much of a token is kept in clear for display: the prefix and 8 random characters. */
const DISPLAY_PREFIX_LENGTH = API_TOKEN_PREFIX.length + 8;
/** lastUsedAt is written at most this often per token, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** The longest a token may live; left out, a token does not expire (scripts that predate expiries). */
export const MAX_TOKEN_DAYS = 365;

export const ZCreateTokenInput = z.object({
  name: z.string().trim().min(1, "name the token (what uses it?)").max(100),
  expiresInDays: z.number().int().min(1, "at least 1 day").max(MAX_TOKEN_DAYS, `at most ${MAX_TOKEN_DAYS} days`).nullable().optional(),
});
export type TCreateTokenInput = z.input<typeof ZCreateTokenInput>;
export const ZTokenRef = z.object({ id: z.uuid() });

export interface ApiTokenInfo {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
}

/** A token as an admin sees it among everyone's: with its owner's name. */
export interface ApiTokenWithOwner extends ApiTokenInfo {
  ownerName: string;
  ownerEmail: string | null;
}

const tokenInfoSelect = {
  id: true,
  userId: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
  expiresAt: true,
} as const;

const DAY_MS = 86_400_000;

export function hashToken(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

export function generateToken(): string {
  return `${API_TOKEN_PREFIX}${crypto.randomBytes(32).toString("base64url")}`;
}

/** Creates a token of `userId` (recorded as ApiTokenCreated: its id, name and expiry, never the token). */
export async function createApiToken(
  deps: TeamDeps & { prisma: PrismaClient },
  userId: string,
  raw: TCreateTokenInput,
): Promise<ApiTokenInfo & { token: string }> {
  const input = ZCreateTokenInput.parse(raw);
  const token = generateToken();
  const id = crypto.randomUUID();
  const expiresAt = input.expiresInDays ? new Date(Date.now() + input.expiresInDays * DAY_MS) : null;
  await changeTeam(deps, userActor(userId), async (tx) => {
    await tx.query(`INSERT INTO api_tokens (id, user_id, name, token_hash, prefix, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
      id,
      userId,
      input.name,
      hashToken(token),
      token.slice(0, DISPLAY_PREFIX_LENGTH),
      expiresAt,
    ]);
    const data = { tokenId: id, ownerId: userId, name: input.name, expiresAt: expiresAt?.toISOString() ?? null };
    return { result: null, events: [{ type: "ApiTokenCreated", data }] };
  });
  const row = await deps.prisma.apiToken.findUniqueOrThrow({ where: { id }, select: tokenInfoSelect });
  return { ...row, token };
}

export async function listApiTokens(prisma: PrismaClient, userId: string): Promise<ApiTokenInfo[]> {
  return prisma.apiToken.findMany({ where: { userId }, select: tokenInfoSelect, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
}

/** Everyone's tokens, newest first, each with its owner (admins: req U3). */
export async function listAllApiTokens(prisma: PrismaClient): Promise<ApiTokenWithOwner[]> {
  const rows = await prisma.apiToken.findMany({
    select: { ...tokenInfoSelect, user: { select: { name: true, email: true } } },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
  });
  return rows.map(({ user, ...t }) => ({ ...t, ownerName: user.name || FORMER_MEMBER, ownerEmail: user.email }));
}

/**
 * Revokes a token of `by` (or anyone's, for an admin), recorded as ApiTokenRevoked.
 * Someone else's token is NOT_FOUND, not FORBIDDEN, so token ids cannot be probed.
 * Revoking twice keeps the first time and records nothing more.
 */
export async function revokeApiToken(
  deps: TeamDeps & { prisma: PrismaClient },
  raw: z.input<typeof ZTokenRef>,
  by: { userId: string; isAdmin: boolean },
): Promise<ApiTokenInfo> {
  const { id } = ZTokenRef.parse(raw);
  const where = by.isAdmin ? { id } : { id, userId: by.userId };
  await changeTeam(deps, userActor(by.userId), async (tx) => {
    const { rows } = await tx.query<{ user_id: string }>(
      `UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL AND ($2::boolean OR user_id = $3::uuid) RETURNING user_id`,
      [id, by.isAdmin, by.userId],
    );
    const revoked = rows[0];
    return { result: null, events: revoked ? [{ type: "ApiTokenRevoked", data: { tokenId: id, ownerId: revoked.user_id } }] : [] };
  });
  const row = await deps.prisma.apiToken.findFirst({ where, select: tokenInfoSelect });
  if (!row) throw new AppError("NOT_FOUND", `no token ${id}`);
  return row;
}

/** The user a bearer token stands for: null for an unknown or revoked token or a disabled user. */
export async function authenticateApiToken(prisma: PrismaClient, token: string): Promise<{ user: AuthUser; tokenId: string } | null> {
  if (!token.startsWith(API_TOKEN_PREFIX) || token.length > 200) return null;
  const row = await prisma.apiToken.findUnique({
    where: { tokenHash: hashToken(token) },
    select: { id: true, userId: true, revokedAt: true, expiresAt: true },
  });
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt.getTime() <= Date.now())) return null;
  const user = await resolveUser(prisma, row.userId);
  if (!user) return null;
  const now = new Date();
  await prisma.apiToken.updateMany({
    where: { id: row.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] },
    data: { lastUsedAt: now },
  });
  return { user, tokenId: row.id };
}
