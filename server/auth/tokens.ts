// Personal API tokens (req U3) for scripts and the CLI: `Authorization: Bearer cc_...`.
// The token is shown once, at creation; only its sha256 is stored (a random 256-bit token
// needs no slow hash), with its first characters to recognise it in a list.
import crypto from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../db/generated/client";
import { AppError } from "../errors";
import { resolveUser, type AuthUser } from "./users";

export const API_TOKEN_PREFIX = "cc_";
/** How much of a token is kept in clear for display: the prefix and 8 random characters. */
const DISPLAY_PREFIX_LENGTH = API_TOKEN_PREFIX.length + 8;
/** lastUsedAt is written at most this often per token, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const ZCreateTokenInput = z.object({ name: z.string().trim().min(1, "name the token (what uses it?)").max(100) });
export const ZTokenRef = z.object({ id: z.uuid() });

export interface ApiTokenInfo {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const tokenInfoSelect = { id: true, userId: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

export function hashToken(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

export function generateToken(): string {
  return `${API_TOKEN_PREFIX}${crypto.randomBytes(32).toString("base64url")}`;
}

export async function createApiToken(
  prisma: PrismaClient,
  userId: string,
  raw: z.input<typeof ZCreateTokenInput>,
): Promise<ApiTokenInfo & { token: string }> {
  const input = ZCreateTokenInput.parse(raw);
  const token = generateToken();
  const row = await prisma.apiToken.create({
    data: { userId, name: input.name, tokenHash: hashToken(token), prefix: token.slice(0, DISPLAY_PREFIX_LENGTH) },
    select: tokenInfoSelect,
  });
  return { ...row, token };
}

export async function listApiTokens(prisma: PrismaClient, userId: string): Promise<ApiTokenInfo[]> {
  return prisma.apiToken.findMany({ where: { userId }, select: tokenInfoSelect, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
}

/**
 * Revokes a token of `by` (or anyone's, for an admin). Someone else's token is NOT_FOUND,
 * not FORBIDDEN, so token ids cannot be probed. Revoking twice keeps the first time.
 */
export async function revokeApiToken(
  prisma: PrismaClient,
  raw: z.input<typeof ZTokenRef>,
  by: { userId: string; isAdmin: boolean },
): Promise<ApiTokenInfo> {
  const { id } = ZTokenRef.parse(raw);
  const where = by.isAdmin ? { id } : { id, userId: by.userId };
  await prisma.apiToken.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: new Date() } });
  const row = await prisma.apiToken.findFirst({ where, select: tokenInfoSelect });
  if (!row) throw new AppError("NOT_FOUND", `no token ${id}`);
  return row;
}

/** The user a bearer token stands for: null for an unknown or revoked token or a disabled user. */
export async function authenticateApiToken(prisma: PrismaClient, token: string): Promise<{ user: AuthUser; tokenId: string } | null> {
  if (!token.startsWith(API_TOKEN_PREFIX) || token.length > 200) return null;
  const row = await prisma.apiToken.findUnique({
    where: { tokenHash: hashToken(token) },
    select: { id: true, userId: true, revokedAt: true },
  });
  if (!row || row.revokedAt) return null;
  const user = await resolveUser(prisma, row.userId);
  if (!user) return null;
  const now = new Date();
  await prisma.apiToken.updateMany({
    where: { id: row.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] },
    data: { lastUsedAt: now },
  });
  return { user, tokenId: row.id };
}
