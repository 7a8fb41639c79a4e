// Users and their role in the team. Every read has an explicit `select`: the password hash
// is read in exactly one place (password sign-in) and never returned from this module.
import { z } from "zod";
import { FORMER_MEMBER } from "../../lib/people";
import { ROLES, type Role } from "../../lib/roles";
import type { PrismaClient } from "../db/generated/client";
import type { Tx } from "../db/pool";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import type { NewEvent } from "../events/types";
import { hashPassword, verifyPassword, ZPassword } from "./passwords";
import { changeTeam, userActor, type TeamDeps } from "./team-changes";

/** The one team for now (inserted by the users migration); roles are per team. */
export const DEFAULT_TEAM_ID = "default";

export const ZEmail = z.string().trim().toLowerCase().pipe(z.email("a valid email address").max(320));
export const ZUserName = z.string().trim().min(1, "say who this is").max(200);
export const ZRole = z.enum(ROLES);
export const ZUserRef = z.object({ userId: z.uuid() });
export { FORMER_MEMBER };

export const ZCreateUserInput = z.object({
  email: ZEmail,
  name: ZUserName,
  password: ZPassword,
  role: ZRole.default("viewer"),
});
export type TCreateUserInput = z.input<typeof ZCreateUserInput>;
export const ZSetRoleInput = ZUserRef.extend({ role: ZRole });
export const ZSetDisabledInput = ZUserRef.extend({ disabled: z.boolean().default(true) });

/** Who is signed in: what the server checks and what the browser may see. */
export interface AuthUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

/** A user as an admin sees it in the users list. */
export interface UserSummary extends AuthUser {
  createdAt: Date;
  disabledAt: Date | null;
  lastSignInAt: Date | null;
}

const userSummarySelect = {
  id: true,
  email: true,
  name: true,
  createdAt: true,
  disabledAt: true,
  lastSignInAt: true,
  memberships: { where: { teamId: DEFAULT_TEAM_ID }, select: { role: true } },
} as const;

type UserRow = {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
  disabledAt: Date | null;
  lastSignInAt: Date | null;
  memberships: Array<{ role: Role }>;
};

function toSummary(row: UserRow): UserSummary {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.memberships[0]?.role ?? "viewer",
    createdAt: row.createdAt,
    disabledAt: row.disabledAt,
    lastSignInAt: row.lastSignInAt,
  };
}

/**
 * The signed-in user behind a session or token: null when the user does not exist, is
 * disabled, or has no role in the team. Read on every request, so disabling a user or
 * changing a role takes effect at once, whatever their session cookie says.
 */
export async function resolveUser(prisma: PrismaClient, id: string | undefined | null): Promise<AuthUser | null> {
  if (!id || !z.uuid().safeParse(id).success) return null;
  return activeUser(await prisma.user.findUnique({ where: { id }, select: userSummarySelect }));
}

function activeUser(row: UserRow | null): AuthUser | null {
  const role = row?.memberships[0]?.role;
  if (!row || row.disabledAt || !role) return null;
  return { id: row.id, email: row.email, name: row.name, role };
}

/**
 * The user of a browser session: as resolveUser, and only while the session's version
 * (`sv` in its token, 0 for sessions from before versions) is the user's current one.
 */
export async function resolveSessionUser(prisma: PrismaClient, id: string | undefined | null, version: unknown): Promise<AuthUser | null> {
  if (!id || !z.uuid().safeParse(id).success) return null;
  // One query for both (a live stream asks this before every batch: docs/scaling.md, "First output and live paint").
  const row = await prisma.user.findUnique({ where: { id }, select: { ...userSummarySelect, sessionVersion: true } });
  const sessionVersion = typeof version === "number" ? version : 0;
  if (!row || row.sessionVersion !== sessionVersion) return null;
  return activeUser(row);
}

/** The version new browser sessions of `id` begin with. */
export async function currentSessionVersion(prisma: PrismaClient, id: string | undefined | null): Promise<number> {
  if (!id || !z.uuid().safeParse(id).success) return 0;
  return (await prisma.user.findUnique({ where: { id }, select: { sessionVersion: true } }))?.sessionVersion ?? 0;
}

/** Sign-out: every browser session of `id` begun so far stops counting (API tokens are revoked on their own). */
export async function endBrowserSessions(prisma: PrismaClient, id: string | undefined | null): Promise<void> {
  if (!id || !z.uuid().safeParse(id).success) return;
  await prisma.user.updateMany({ where: { id }, data: { sessionVersion: { increment: 1 } } });
}

export async function findActiveUserByEmail(prisma: PrismaClient, email: string): Promise<AuthUser | null> {
  const parsed = ZEmail.safeParse(email);
  if (!parsed.success) return null;
  const row = await prisma.user.findUnique({ where: { email: parsed.data }, select: { id: true } });
  return resolveUser(prisma, row?.id);
}

/**
 * Password sign-in: the user when the email and password match an enabled user, else
 * null. Always runs one password verification (see verifyPassword), found or not.
 */
export async function authorizeCredentials(
  prisma: PrismaClient,
  credentials: { email?: unknown; password?: unknown } | undefined,
): Promise<AuthUser | null> {
  const email = ZEmail.safeParse(credentials?.email);
  const password = typeof credentials?.password === "string" ? credentials.password.slice(0, 1024) : "";
  const row = email.success
    ? await prisma.user.findUnique({ where: { email: email.data }, select: { id: true, passwordHash: true } })
    : null;
  const ok = await verifyPassword(row?.passwordHash, password);
  return ok && row ? resolveUser(prisma, row.id) : null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Names of the users behind `user:<id>` actor labels, in one query; others (runners, system)
 * need none. Every user label gets a name, so no page shows a raw id (req X2): a disabled
 * user keeps theirs, and one no longer known reads as {@link FORMER_MEMBER}.
 */
export async function userNames(prisma: PrismaClient, labels: Iterable<string>): Promise<Record<string, string>> {
  const userLabels = [...new Set([...labels].filter((l) => typeof l === "string" && l.startsWith("user:")))];
  if (userLabels.length === 0) return {};
  const ids = userLabels.map((l) => l.slice(5)).filter((id) => UUID.test(id));
  const users = ids.length ? await prisma.user.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } }) : [];
  const known = new Map(users.map((u) => [`user:${u.id}`, u.name]));
  return Object.fromEntries(userLabels.map((l) => [l, known.get(l) ?? FORMER_MEMBER]));
}

/** A successful sign-in (password, GitHub, OIDC): the users page shows when each person last signed in. */
export async function recordSignIn(prisma: PrismaClient, userId: string | undefined | null): Promise<void> {
  if (!userId || !z.uuid().safeParse(userId).success) return;
  await prisma.user.updateMany({ where: { id: userId }, data: { lastSignInAt: new Date() } });
}

export async function listUsers(prisma: PrismaClient): Promise<UserSummary[]> {
  const rows = await prisma.user.findMany({ select: userSummarySelect, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map(toSummary);
}

/**
 * An admin adds a user with a password and a role (recorded as UserCreated, with the admin as
 * the actor); an email already taken is a CONFLICT. The invitation's accept makes its user
 * through the same insert (`insertUser`).
 */
export async function createUser(deps: TeamDeps & { prisma: PrismaClient }, raw: TCreateUserInput, by: Actor): Promise<UserSummary> {
  const input = ZCreateUserInput.parse(raw);
  const passwordHash = await hashPassword(input.password);
  const userId = crypto.randomUUID();
  await changeTeam(deps, by, async (tx) => {
    await insertUser(tx, { id: userId, email: input.email, name: input.name, passwordHash, role: input.role });
    const events: NewEvent[] = [{ type: "UserCreated", data: { userId, email: input.email, name: input.name, role: input.role } }];
    return { result: null, events };
  });
  return userSummary(deps.prisma, userId);
}

/** A new user and their role in the team, in the caller's transaction; CONFLICT when the email is taken. */
export async function insertUser(
  tx: Tx,
  user: { id: string; email: string; name: string; passwordHash: string; role: Role },
  conflict = `a user with the email ${user.email} already exists`,
): Promise<void> {
  await tx
    .query(`INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)`, [
      user.id,
      user.email,
      user.name,
      user.passwordHash,
    ])
    .catch((err: unknown) => {
      if ((err as { code?: unknown }).code === "23505") throw new AppError("CONFLICT", conflict, { fieldErrors: { email: [conflict] } });
      throw err;
    });
  await tx.query(`INSERT INTO memberships (user_id, team_id, role) VALUES ($1, $2, $3::role)`, [user.id, DEFAULT_TEAM_ID, user.role]);
}

/**
 * The admin named by ADMIN_EMAIL / ADMIN_PASSWORD: created, or brought back to admin with
 * that password and enabled. Idempotent, so `npm start` can run it every time.
 */
export async function upsertAdmin(
  prisma: PrismaClient,
  raw: { email: string; password: string; name?: string | undefined },
): Promise<{ user: UserSummary; created: boolean }> {
  const email = ZEmail.parse(raw.email);
  const password = ZPassword.parse(raw.password);
  const name = ZUserName.parse(raw.name ?? email.split("@")[0] ?? email);
  const passwordHash = await hashPassword(password);
  return prisma.$transaction(async (tx) => {
    const existing = await tx.user.findUnique({ where: { email }, select: { id: true } });
    const row = existing
      ? await tx.user.update({
          where: { id: existing.id },
          data: { passwordHash, disabledAt: null, ...(raw.name ? { name } : {}) },
          select: { id: true },
        })
      : await tx.user.create({ data: { email, name, passwordHash }, select: { id: true } });
    await tx.membership.upsert({
      where: { userId_teamId: { userId: row.id, teamId: DEFAULT_TEAM_ID } },
      create: { userId: row.id, teamId: DEFAULT_TEAM_ID, role: "admin" },
      update: { role: "admin" },
    });
    const user = await tx.user.findUniqueOrThrow({ where: { id: row.id }, select: userSummarySelect });
    return { user: toSummary(user), created: !existing };
  });
}

/** The user's role and whether they are disabled, read under the team's lock; NOT_FOUND for an unknown user. */
async function userState(tx: Tx, userId: string): Promise<{ role: Role | null; disabled: boolean }> {
  const { rows } = await tx.query<{ role: Role | null; disabled: boolean }>(
    `SELECT m.role, u.disabled_at IS NOT NULL AS disabled
     FROM users u LEFT JOIN memberships m ON m.user_id = u.id AND m.team_id = $2 WHERE u.id = $1`,
    [userId, DEFAULT_TEAM_ID],
  );
  const row = rows[0];
  if (!row) throw new AppError("NOT_FOUND", `no user ${userId}`);
  return row;
}

/** After a change, under the team's lock: refused (and rolled back) when no enabled admin would remain. */
async function requireAnAdmin(tx: Tx): Promise<void> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM memberships m JOIN users u ON u.id = m.user_id
     WHERE m.team_id = $1 AND m.role = 'admin' AND u.disabled_at IS NULL`,
    [DEFAULT_TEAM_ID],
  );
  if ((rows[0]?.n ?? 0) === 0) throw new AppError("PRECONDITION_FAILED", "at least one enabled admin must remain");
}

async function userSummary(prisma: PrismaClient, userId: string): Promise<UserSummary> {
  return toSummary(await prisma.user.findUniqueOrThrow({ where: { id: userId }, select: userSummarySelect }));
}

/** Gives a user a role (recorded as UserRoleChanged); the same role again changes and records nothing. */
export async function setUserRole(
  deps: TeamDeps & { prisma: PrismaClient },
  raw: z.input<typeof ZSetRoleInput>,
  by: { userId: string },
): Promise<UserSummary> {
  const input = ZSetRoleInput.parse(raw);
  await changeTeam(deps, userActor(by.userId), async (tx) => {
    const before = await userState(tx, input.userId);
    if (before.role === input.role) return { result: null, events: [] };
    await tx.query(
      `INSERT INTO memberships (user_id, team_id, role) VALUES ($1, $2, $3::role)
       ON CONFLICT (user_id, team_id) DO UPDATE SET role = EXCLUDED.role`,
      [input.userId, DEFAULT_TEAM_ID, input.role],
    );
    await requireAnAdmin(tx);
    const events: NewEvent[] = [{ type: "UserRoleChanged", data: { userId: input.userId, from: before.role, to: input.role } }];
    return { result: null, events };
  });
  return userSummary(deps.prisma, input.userId);
}

/** Disables or enables a user (UserDisabled / UserEnabled); nobody disables themselves, and an enabled admin remains. */
export async function setUserDisabled(
  deps: TeamDeps & { prisma: PrismaClient },
  raw: z.input<typeof ZSetDisabledInput>,
  by: { userId: string },
): Promise<UserSummary> {
  const input = ZSetDisabledInput.parse(raw);
  if (input.disabled && input.userId === by.userId) throw new AppError("PRECONDITION_FAILED", "you cannot disable yourself");
  await changeTeam(deps, userActor(by.userId), async (tx) => {
    const before = await userState(tx, input.userId);
    if (before.disabled === input.disabled) return { result: null, events: [] };
    await tx.query(`UPDATE users SET disabled_at = ${input.disabled ? "now()" : "NULL"} WHERE id = $1`, [input.userId]);
    await requireAnAdmin(tx);
    const events: NewEvent[] = [{ type: input.disabled ? "UserDisabled" : "UserEnabled", data: { userId: input.userId } }];
    return { result: null, events };
  });
  return userSummary(deps.prisma, input.userId);
}

export async function countUsers(prisma: PrismaClient): Promise<number> {
  return prisma.user.count();
}
