// Who sent a request: a personal API token (`Authorization: Bearer cc_...`) or the
// next-auth session cookie (a JWT signed with NEXTAUTH_SECRET). Either way the user is
// read from the database, so a disabled user or a changed role counts at once.
import { getToken } from "next-auth/jwt";
import { NextRequest } from "next/server";
import type { PrismaClient } from "../db/generated/client";
import { authenticateApiToken } from "./tokens";
import { resolveSessionUser, type AuthUser } from "./users";

export interface CurrentUser extends AuthUser {
  /** How this request authenticated; some actions (minting tokens) need a browser session. */
  via: "session" | "token";
}

export interface RequestAuthDeps {
  prisma: PrismaClient;
  /** NEXTAUTH_SECRET; without it no session cookie is accepted. */
  secret: string | undefined;
}

/**
 * The token of an `Authorization: Bearer <token>` header, null without one. A request that
 * sends it is judged by the token alone and its cookie never read: no ambient credential
 * rides on it, which is why the CSRF rule passes it (docs/auth.md, "Cross-site requests").
 */
export function bearerToken(req: Request): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.get("authorization") ?? "");
  return match?.[1] ?? null;
}

export async function authenticateRequest(req: Request, deps: RequestAuthDeps): Promise<CurrentUser | null> {
  if (req.headers.get("authorization") !== null) {
    // A request that presents credentials is judged by them alone: a bad token never
    // falls back to whatever cookie the client also sent.
    const token = bearerToken(req);
    const found = token ? await authenticateApiToken(deps.prisma, token) : null;
    return found ? { ...found.user, via: "token" } : null;
  }
  if (!deps.secret) return null;
  // getToken reads the (possibly chunked, possibly __Secure-) session cookie of a NextRequest;
  // this one carries the cookie header alone, so it cannot take a bearer JWT instead.
  const cookie = req.headers.get("cookie");
  const jwt = await getToken({
    req: new NextRequest(req.url, { headers: cookie === null ? {} : { cookie } }),
    secret: deps.secret,
  });
  const user = await resolveSessionUser(deps.prisma, jwt?.sub, jwt?.sv);
  return user ? { ...user, via: "session" } : null;
}
