// First-run setup without touching the database: while no user exists, `npm start` prints
// a one-time link (/setup?token=...) whose holder creates the first admin. Only the
// token's sha256 is stored; it expires, and consuming it and creating the admin happen in
// one transaction, so a link works exactly once.
import crypto from "node:crypto";
import { z } from "zod";
import type { PrismaClient } from "../db/generated/client";
import { AppError } from "../errors";
import { hashPassword, ZPassword } from "./passwords";
import { DEFAULT_TEAM_ID, ZEmail, ZUserName, type UserSummary } from "./users";

export const SETUP_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
/** Serialises first-admin creation: two setup links used at once make one admin. */
const SETUP_LOCK = 0x63617453; // "catS"

const INVALID_LINK = "this setup link is not valid: it was used already, has expired, or was replaced by a newer one";
const ALREADY_SET_UP = "Cat Cafe is already set up: sign in instead";

export const ZSetupInput = z.object({
  token: z.string().min(1).max(200),
  email: ZEmail,
  name: ZUserName,
  password: ZPassword,
});
export type TSetupInput = z.input<typeof ZSetupInput>;

export type SetupTokenStatus = "valid" | "invalid" | "already_set_up";

function hashSetupToken(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

/** A new setup link's token. Earlier unused links stop working: only the latest printed one counts. */
export async function createSetupToken(prisma: PrismaClient, ttlMs = SETUP_TOKEN_TTL_MS): Promise<{ token: string; expiresAt: Date }> {
  const token = crypto.randomBytes(24).toString("base64url");
  const expiresAt = new Date(Date.now() + ttlMs);
  await prisma.$transaction([
    prisma.setupToken.deleteMany({ where: { usedAt: null } }),
    prisma.setupToken.create({ data: { tokenHash: hashSetupToken(token), expiresAt }, select: { id: true } }),
  ]);
  return { token, expiresAt };
}

export async function setupTokenStatus(prisma: PrismaClient, token: string | undefined): Promise<SetupTokenStatus> {
  if ((await prisma.user.count()) > 0) return "already_set_up";
  if (!token) return "invalid";
  const row = await prisma.setupToken.findUnique({
    where: { tokenHash: hashSetupToken(token) },
    select: { usedAt: true, expiresAt: true },
  });
  return row && !row.usedAt && row.expiresAt > new Date() ? "valid" : "invalid";
}

export async function completeSetup(prisma: PrismaClient, raw: TSetupInput): Promise<UserSummary> {
  const input = ZSetupInput.parse(raw);
  // Cheap checks first, so guessing tokens cannot make the server hash passwords; the
  // transaction below checks again, under the lock.
  const status = await setupTokenStatus(prisma, input.token);
  if (status === "already_set_up") throw new AppError("PRECONDITION_FAILED", ALREADY_SET_UP);
  if (status === "invalid") throw new AppError("FORBIDDEN", INVALID_LINK);
  const passwordHash = await hashPassword(input.password);
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SETUP_LOCK})`;
    const consumed = await tx.setupToken.updateMany({
      where: { tokenHash: hashSetupToken(input.token), usedAt: null, expiresAt: { gt: new Date() } },
      data: { usedAt: new Date() },
    });
    if (consumed.count !== 1) throw new AppError("FORBIDDEN", INVALID_LINK);
    if ((await tx.user.count()) > 0) throw new AppError("PRECONDITION_FAILED", ALREADY_SET_UP);
    const user = await tx.user.create({
      data: { email: input.email, name: input.name, passwordHash, memberships: { create: { teamId: DEFAULT_TEAM_ID, role: "admin" } } },
      select: { id: true, email: true, name: true, createdAt: true, disabledAt: true, lastSignInAt: true },
    });
    return { ...user, role: "admin" as const };
  });
}
