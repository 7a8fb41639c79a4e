// Email + password sign-in from a script, the way a browser signs in: next-auth's CSRF token
// (GET /api/auth/csrf, which also sets the CSRF cookie), then the credentials callback with
// that token and cookie. The answer sets the session cookie. API tokens are minted only by
// a signed-in session (a token cannot mint tokens), so this is how the CLI gets its first
// token without a browser; the session cookie is used for that one call and then dropped.
import os from "node:os";
import { createCatCafeClient, type CatCafeClientOptions } from "./client";
import { CatCafeHttpError } from "./errors";
import { normalizeServerUrl } from "./url";
import type { RouterOutputs } from "./types";

export interface PasswordSignIn {
  url: string;
  email: string;
  password: string;
  fetch?: typeof fetch;
}

export type CreatedToken = RouterOutputs["tokens"]["create"];

/** `name=value` pairs of the Set-Cookie headers (attributes dropped). */
function cookiePairs(response: Response): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const header of response.headers.getSetCookie()) {
    const pair = header.split(";", 1)[0] ?? "";
    const eq = pair.indexOf("=");
    if (eq > 0) pairs.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return pairs;
}

const cookieHeader = (pairs: Map<string, string>) => [...pairs].map(([k, v]) => `${k}=${v}`).join("; ");

/** Why next-auth refused, from the URL it sent us to. */
function refusal(location: string | null, status: number): string {
  const params = location ? new URL(location, "http://x").searchParams : new URLSearchParams();
  if (params.get("error") === "CredentialsSignin") return "wrong email or password (or the account is disabled)";
  if (params.get("csrf") === "true") return "the sign-in form's CSRF check failed; try again";
  if (params.get("error")) return `sign-in refused: ${params.get("error")}`;
  return `sign-in failed (HTTP ${status})`;
}

/** Signs in; returns a `Cookie` header carrying the session. Refused: a CatCafeHttpError `SIGN_IN_REFUSED` saying why. */
export async function signInWithPassword(input: PasswordSignIn): Promise<string> {
  const base = normalizeServerUrl(input.url);
  const fetchImpl = input.fetch ?? globalThis.fetch;
  const csrfResponse = await fetchImpl(`${base}/api/auth/csrf`, { headers: { accept: "application/json" } });
  if (!csrfResponse.ok) throw new Error(`GET ${base}/api/auth/csrf answered HTTP ${csrfResponse.status}: is this a Cat Cafe server?`);
  const { csrfToken } = (await csrfResponse.json()) as { csrfToken?: string };
  if (!csrfToken) throw new Error(`${base}/api/auth/csrf gave no CSRF token`);
  const cookies = cookiePairs(csrfResponse);

  const response = await fetchImpl(`${base}/api/auth/callback/credentials`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieHeader(cookies), accept: "application/json" },
    body: new URLSearchParams({ csrfToken, email: input.email, password: input.password, callbackUrl: base, json: "true" }),
    redirect: "manual",
  });
  for (const [name, value] of cookiePairs(response)) cookies.set(name, value);
  const session = [...cookies.keys()].some((name) => /(^|\.)next-auth\.session-token(\.\d+)?$/.test(name));
  if (!session) {
    const body = (await response.json().catch(() => null)) as { url?: string } | null;
    throw new CatCafeHttpError("SIGN_IN_REFUSED", response.status, refusal(body?.url ?? response.headers.get("location"), response.status));
  }
  return cookieHeader(cookies);
}

/** A default name for a token, saying where it was made. */
export function defaultTokenName(purpose = "catcafe CLI"): string {
  return `${purpose} on ${os.hostname()} (${new Date().toISOString().slice(0, 10)})`;
}

/** Signs in with email + password and creates a personal API token (shown only in this answer). */
export async function createTokenWithPassword(input: PasswordSignIn & { name?: string; expiresInDays?: number }): Promise<CreatedToken> {
  const cookie = await signInWithPassword(input);
  const options: CatCafeClientOptions = { url: input.url, cookie, ...(input.fetch ? { fetch: input.fetch } : {}) };
  return createCatCafeClient(options).tokens.create.mutate({
    name: input.name ?? defaultTokenName(),
    ...(input.expiresInDays ? { expiresInDays: input.expiresInDays } : {}),
  });
}
