// Password sign-in under attack: a backoff per account and per address, kept in PostgreSQL
// (sign_in_attempts) so that it holds across web processes, and every attempt logged and
// listed for admins. The first failures are free (a person mistyping); after them each
// further failure doubles the wait before the next try is even checked (1 s, 2 s, 4 s, ... at
// most 15 minutes). During a wait the attempt is refused unchecked, the right password too.
// Failures count within 15 minutes and only since the last success for that account or
// address. The password is never stored or logged.
import type { PrismaClient } from "../db/generated/client";
import { logger } from "../log";
import { authorizeCredentials, ZEmail, type AuthUser } from "./users";

export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
export const FREE_FAILURES = { account: 5, address: 20 } as const;
const MAX_WAIT_MS = 15 * 60 * 1000;

export type SignInOutcome = "ok" | "wrong" | "throttled";

export interface SignInAttemptRow {
  email: string;
  address: string | null;
  outcome: string;
  at: Date;
}

function waitAfter(failures: number, free: number): number {
  return failures < free ? 0 : Math.min(1000 * 2 ** (failures - free), MAX_WAIT_MS);
}

/** Until when `scope` (an account or an address) must wait, or null when it may try now. */
async function blockedUntil(prisma: PrismaClient, where: { email: string } | { address: string }, free: number): Promise<Date | null> {
  const since = new Date(Date.now() - SIGN_IN_WINDOW_MS);
  const lastOk = await prisma.signInAttempt.findFirst({
    where: { ...where, outcome: "ok", at: { gte: since } },
    orderBy: { at: "desc" },
    select: { at: true },
  });
  const failures = await prisma.signInAttempt.findMany({
    where: { ...where, outcome: "wrong", at: { gt: lastOk?.at ?? since } },
    orderBy: { at: "desc" },
    select: { at: true },
    take: 64,
  });
  const wait = waitAfter(failures.length, free);
  if (wait === 0 || !failures[0]) return null;
  const until = new Date(failures[0].at.getTime() + wait);
  return until > new Date() ? until : null;
}

/**
 * authorizeCredentials behind the backoff: the user, or null (wrong, or throttled). Records
 * and logs the attempt either way.
 */
export async function authorizeWithBackoff(
  prisma: PrismaClient,
  credentials: { email?: unknown; password?: unknown } | undefined,
  address: string | null,
): Promise<{ user: AuthUser | null; outcome: SignInOutcome; retryAt: Date | null }> {
  const parsed = ZEmail.safeParse(credentials?.email);
  const email = parsed.success
    ? parsed.data
    : String(credentials?.email ?? "")
        .slice(0, 320)
        .toLowerCase();
  const blocks = await Promise.all([
    blockedUntil(prisma, { email }, FREE_FAILURES.account),
    address ? blockedUntil(prisma, { address }, FREE_FAILURES.address) : null,
  ]);
  const retryAt = blocks.filter((d): d is Date => d !== null).sort((a, b) => b.getTime() - a.getTime())[0] ?? null;
  let user: AuthUser | null = null;
  let outcome: SignInOutcome = "throttled";
  if (!retryAt) {
    user = await authorizeCredentials(prisma, credentials);
    outcome = user ? "ok" : "wrong";
  }
  await prisma.signInAttempt.create({ data: { email, address, outcome } });
  const fields = { email, address, outcome, ...(retryAt ? { retryAt: retryAt.toISOString() } : {}) };
  if (outcome === "ok") logger.info(fields, "sign-in");
  else logger.warn(fields, outcome === "throttled" ? "sign-in refused: too many failures, waiting" : "sign-in failed");
  return { user, outcome, retryAt };
}

/** The latest attempts, newest first (admins). */
export async function recentSignInAttempts(prisma: PrismaClient, limit = 100): Promise<SignInAttemptRow[]> {
  return prisma.signInAttempt.findMany({
    orderBy: { at: "desc" },
    take: limit,
    select: { email: true, address: true, outcome: true, at: true },
  });
}

/** The client's address as the web server sees it: the first X-Forwarded-For hop, else X-Real-IP. */
export function requestAddress(headers: Record<string, string | string[] | undefined> | Headers | undefined): string | null {
  const get = (name: string): string | undefined => {
    if (!headers) return undefined;
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const forwarded = get("x-forwarded-for")?.split(",")[0]?.trim();
  return (forwarded || get("x-real-ip")?.trim() || null)?.slice(0, 100) ?? null;
}
