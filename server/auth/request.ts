// Who sent a request: a personal API token (`Authorization: Bearer cc_...`) or the
// next-auth session cookie (a JWT signed with NEXTAUTH_SECRET). Either way the user is
// read from the database, so a disabled user or a changed role counts at once.
import { getToken, type JWT } from "next-auth/jwt";
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
  return requestAuthenticator(req, deps)();
}

/** The leeway next-auth's own decoding gives a session token's expiry (its `clockTolerance`). */
const SESSION_EXPIRY_LEEWAY_S = 15;

/**
 * Asks who `req`'s credentials name now, as often as called (a live stream asks before every
 * batch): the database is read each time, so a token revoked, a user disabled or demoted, or
 * the browser sessions ended count at once; the session cookie is decrypted once, and its
 * expiry checked against the clock at each call.
 */
export function requestAuthenticator(req: Request, deps: RequestAuthDeps): () => Promise<CurrentUser | null> {
  if (req.headers.get("authorization") !== null) {
    // A request that presents credentials is judged by them alone: a bad token never
    // falls back to whatever cookie the client also sent.
    const token = bearerToken(req);
    return async () => {
      const found = token ? await authenticateApiToken(deps.prisma, token) : null;
      return found ? { ...found.user, via: "token" } : null;
    };
  }
  const secret = deps.secret;
  if (!secret) return async () => null;
  let decoded: Promise<JWT | null> | null = null;
  return async () => {
    // getToken reads the (possibly chunked, possibly __Secure-) session cookie of a NextRequest;
    // this one carries the cookie header alone, so it cannot take a bearer JWT instead.
    const cookie = req.headers.get("cookie");
    decoded ??= getToken({ req: new NextRequest(req.url, { headers: cookie === null ? {} : { cookie } }), secret });
    const jwt = await decoded;
    if (!jwt || (typeof jwt.exp === "number" && jwt.exp + SESSION_EXPIRY_LEEWAY_S < Date.now() / 1000)) return null;
    const user = await resolveSessionUser(deps.prisma, jwt.sub, jwt.sv);
    return user ? { ...user, via: "session" } : null;
  };
}
