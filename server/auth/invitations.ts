// Invitations (req X2, docs/auth.md, "Invitations"): an admin invites a person with a role
// (and optionally the email they must use); the link `/invite/<token>` is shown once, and
// only the token's sha256 is stored, as for API tokens. Whoever opens the link while it is
// pending (not used, revoked or expired) creates their account with that role. Accepting
// takes the team's lock (./team-changes.ts) and marks the invitation used in the transaction
// that creates the user, so a link makes one user however many accept it at once. Each
// change is a team event; the token is never in one.
import crypto from "node:crypto";
import { z } from "zod";
import type { Role } from "../../lib/roles";
import type { PrismaClient } from "../db/generated/client";
import { AppError } from "../errors";
import { hashPassword, ZPassword } from "./passwords";
import { changeTeam, userActor, type TeamDeps } from "./team-changes";
import { DEFAULT_TEAM_ID, FORMER_MEMBER, insertUser, ZEmail, ZRole, ZUserName } from "./users";

export const INVITATION_TOKEN_PREFIX = "ci_";
export const INVITATION_PATH = "/invite";
export const DEFAULT_INVITATION_DAYS = 7;
export const MAX_INVITATION_DAYS = 30;
const DAY_MS = 86_400_000;

export const ZCreateInvitationInput = z.object({
  role: ZRole,
  /** When given, the account must use this email. */
  email: z.preprocess((v) => (v === "" ? undefined : v), ZEmail.optional()),
  expiresInDays: z
    .number()
    .int()
    .min(1, "at least 1 day")
    .max(MAX_INVITATION_DAYS, `at most ${MAX_INVITATION_DAYS} days`)
    .default(DEFAULT_INVITATION_DAYS),
});
export type TCreateInvitationInput = z.input<typeof ZCreateInvitationInput>;
export const ZInvitationRef = z.object({ id: z.uuid() });
/** The token as it is in a link: bounded, so a long string is refused before it is hashed. */
export const ZInvitationToken = z.string().trim().min(1, "the link has no token").max(200);
export const ZAcceptInvitationInput = z.object({
  token: ZInvitationToken,
  name: ZUserName,
  email: ZEmail,
  password: ZPassword,
});
export type TAcceptInvitationInput = z.input<typeof ZAcceptInvitationInput>;

export type InvitationStatus = "pending" | "accepted" | "revoked" | "expired";

export interface InvitationInfo {
  id: string;
  role: Role;
  email: string | null;
  invitedByName: string;
  createdAt: Date;
  expiresAt: Date;
  status: InvitationStatus;
}

/** What the invited person sees before accepting, or why the link no longer works. */
export type InvitationView =
  { status: "unknown" } | ({ status: InvitationStatus } & Pick<InvitationInfo, "role" | "email" | "invitedByName" | "expiresAt">);

function hashInvitationToken(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

function generateInvitationToken(): string {
  return `${INVITATION_TOKEN_PREFIX}${crypto.randomBytes(32).toString("base64url")}`;
}

/** The path of an invitation's link; the browser or the CLI puts the host it uses in front. */
export function invitationPath(token: string): string {
  return `${INVITATION_PATH}/${token}`;
}

const infoSelect = {
  id: true,
  role: true,
  email: true,
  createdAt: true,
  expiresAt: true,
  acceptedAt: true,
  revokedAt: true,
  invitedBy: { select: { name: true } },
} as const;

type InfoRow = {
  id: string;
  role: Role;
  email: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
  invitedBy: { name: string } | null;
};

function statusOf(row: Pick<InfoRow, "acceptedAt" | "revokedAt" | "expiresAt">, now = new Date()): InvitationStatus {
  if (row.acceptedAt) return "accepted";
  if (row.revokedAt) return "revoked";
  if (row.expiresAt.getTime() <= now.getTime()) return "expired";
  return "pending";
}

function toInfo(row: InfoRow): InvitationInfo {
  return {
    id: row.id,
    role: row.role,
    email: row.email,
    invitedByName: row.invitedBy?.name ?? FORMER_MEMBER,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    status: statusOf(row),
  };
}

/** Creates an invitation (InvitationCreated); the answer holds the token, which is not kept and cannot be shown again. */
export async function createInvitation(
  deps: TeamDeps & { prisma: PrismaClient },
  raw: TCreateInvitationInput,
  by: { userId: string },
): Promise<InvitationInfo & { token: string; path: string }> {
  const input = ZCreateInvitationInput.parse(raw);
  const token = generateInvitationToken();
  const id = crypto.randomUUID();
  const expiresAt = new Date(Date.now() + input.expiresInDays * DAY_MS);
  await changeTeam(deps, userActor(by.userId), async (tx) => {
    await tx.query(
      `INSERT INTO invitations (id, team_id, role, email, token_hash, invited_by, expires_at) VALUES ($1, $2, $3::role, $4, $5, $6, $7)`,
      [id, DEFAULT_TEAM_ID, input.role, input.email ?? null, hashInvitationToken(token), by.userId, expiresAt],
    );
    const data = { invitationId: id, role: input.role, email: input.email ?? null, expiresAt: expiresAt.toISOString() };
    return { result: null, events: [{ type: "InvitationCreated", data }] };
  });
  const row = await deps.prisma.invitation.findUniqueOrThrow({ where: { id }, select: infoSelect });
  return { ...toInfo(row), token, path: invitationPath(token) };
}

/** The invitations that can still be accepted, newest first. */
export async function listPendingInvitations(prisma: PrismaClient): Promise<InvitationInfo[]> {
  const rows = await prisma.invitation.findMany({
    where: { acceptedAt: null, revokedAt: null, expiresAt: { gt: new Date() } },
    select: infoSelect,
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
  });
  return rows.map(toInfo);
}

/** Revokes a pending invitation (InvitationRevoked); revoking again changes nothing, one already accepted is refused. */
export async function revokeInvitation(
  deps: TeamDeps & { prisma: PrismaClient },
  raw: z.input<typeof ZInvitationRef>,
  by: { userId: string },
): Promise<InvitationInfo> {
  const { id } = ZInvitationRef.parse(raw);
  await changeTeam(deps, userActor(by.userId), async (tx) => {
    const { rows } = await tx.query<{ accepted: boolean; revoked: boolean }>(
      `SELECT accepted_at IS NOT NULL AS accepted, revoked_at IS NOT NULL AS revoked FROM invitations WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new AppError("NOT_FOUND", `no invitation ${id}`);
    if (row.accepted) throw new AppError("PRECONDITION_FAILED", "this invitation was already accepted: disable the user instead");
    if (row.revoked) return { result: null, events: [] };
    await tx.query(`UPDATE invitations SET revoked_at = now() WHERE id = $1`, [id]);
    return { result: null, events: [{ type: "InvitationRevoked", data: { invitationId: id } }] };
  });
  return toInfo(await deps.prisma.invitation.findUniqueOrThrow({ where: { id }, select: infoSelect }));
}

/** What the link's page shows: the role and who invited, or why the link no longer works ("unknown" for any other string). */
export async function viewInvitation(prisma: PrismaClient, rawToken: unknown): Promise<InvitationView> {
  const token = ZInvitationToken.safeParse(rawToken);
  if (!token.success || !token.data.startsWith(INVITATION_TOKEN_PREFIX)) return { status: "unknown" };
  const row = await prisma.invitation.findUnique({ where: { tokenHash: hashInvitationToken(token.data) }, select: infoSelect });
  if (!row) return { status: "unknown" };
  const info = toInfo(row);
  return { status: info.status, role: info.role, email: info.email, invitedByName: info.invitedByName, expiresAt: info.expiresAt };
}

const NO_LONGER: Record<Exclude<InvitationStatus, "pending"> | "unknown", string> = {
  unknown: "this invitation link is not valid: ask an admin for a new one",
  accepted: "this invitation has already been used: sign in with the account it created, or ask an admin for a new one",
  revoked: "this invitation was revoked: ask an admin for a new one",
  expired: "this invitation has expired: ask an admin for a new one",
};

/**
 * Creates the invited person's account with the invitation's role (InvitationAccepted, the
 * new user as its actor) and marks the invitation used, in one transaction under the team's
 * lock: of two accepts at once, one creates the user and the other is told the link was used.
 */
export async function acceptInvitation(deps: TeamDeps & { prisma: PrismaClient }, raw: TAcceptInvitationInput) {
  const input = ZAcceptInvitationInput.parse(raw);
  // Cheap checks first, so that a bad link never makes the server hash a password; the transaction checks again under the lock.
  const view = await viewInvitation(deps.prisma, input.token);
  if (view.status !== "pending")
    throw new AppError(view.status === "unknown" ? "NOT_FOUND" : "PRECONDITION_FAILED", NO_LONGER[view.status]);
  if (view.email && view.email !== input.email)
    throw new AppError("INVALID_INPUT", `this invitation is for ${view.email}`, {
      fieldErrors: { email: [`this invitation is for ${view.email}`] },
    });
  const passwordHash = await hashPassword(input.password);
  const userId = crypto.randomUUID();
  return changeTeam(deps, userActor(userId), async (tx) => {
    const claimed = await tx.query<{ id: string; role: Role }>(
      `UPDATE invitations SET accepted_at = now(), accepted_user_id = $2
       WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
       RETURNING id, role`,
      [hashInvitationToken(input.token), userId],
    );
    const invitation = claimed.rows[0];
    if (!invitation) {
      const now = await viewInvitation(deps.prisma, input.token);
      const status = now.status === "pending" ? "accepted" : now.status;
      throw new AppError(
        status === "unknown" ? "NOT_FOUND" : status === "accepted" ? "CONFLICT" : "PRECONDITION_FAILED",
        NO_LONGER[status],
      );
    }
    const taken = await tx.query(`SELECT 1 FROM users WHERE email = $1`, [input.email]);
    if (taken.rowCount)
      throw new AppError("CONFLICT", `a user with the email ${input.email} already exists: sign in instead`, {
        fieldErrors: { email: ["a user with this email already exists: sign in instead"] },
      });
    await insertUser(
      tx,
      { id: userId, email: input.email, name: input.name, passwordHash, role: invitation.role },
      `a user with the email ${input.email} already exists: sign in instead`,
    );
    const data = { invitationId: invitation.id, userId, email: input.email, name: input.name, role: invitation.role };
    return {
      result: { id: userId, email: input.email, name: input.name, role: invitation.role },
      events: [{ type: "InvitationAccepted", data }],
    };
  });
}
