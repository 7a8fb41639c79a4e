// How every server-rendered page reads, one way for all: as its visitor, through a tRPC
// caller built from the page's own cookies (the same authentication the API uses), so pages
// call the very procedures, role checks included, that the API serves. `readPage` is the
// pattern each signed-in page follows: sign in first (a redirect back here afterwards),
// then the read, whose failure is either the procedure's refusal for the page to show
// (NOT_FOUND, FORBIDDEN, ...) or a database that does not answer. Server-only.
import "server-only";
import { TRPCError } from "@trpc/server";
import { cookies } from "next/headers";
import { redirect, unstable_rethrow } from "next/navigation";
import { cache } from "react";
import { createCaller } from "@/server/api/root";
import { createContext } from "@/server/api/web";
import type { CurrentUser } from "@/server/auth/request";
import { SIGN_IN_PATH } from "@/server/auth/options";
import { describeDbError } from "@/server/health";
import { logger } from "@/server/log";

export type PageCaller = ReturnType<typeof createCaller>;

export interface Visitor {
  /** Null when nobody is signed in (or the account is disabled). */
  user: CurrentUser | null;
  caller: PageCaller;
}

export interface SignedInPage {
  user: CurrentUser;
  caller: PageCaller;
}

/** The visitor of this request, signed in or not; read once per request however often asked. */
export const visitor = cache(async (): Promise<Visitor> => {
  const cookie = (await cookies())
    .getAll()
    .map((c) => `${c.name}=${encodeURIComponent(c.value)}`)
    .join("; ");
  const ctx = await createContext({ req: new Request("http://page.local/", { headers: { cookie } }) });
  return { user: ctx.user, caller: createCaller(ctx) };
});

/** The signed-in visitor, or a redirect to sign in (and back to `path` afterwards). */
export async function signedInPage(path: string): Promise<SignedInPage> {
  const { user, caller } = await visitor();
  if (!user) redirect(`${SIGN_IN_PATH}?callbackUrl=${encodeURIComponent(path)}`);
  return { user, caller };
}

/** The tRPC code of a failed call (NOT_FOUND, FORBIDDEN, ...), or null for other errors. */
export function trpcCode(err: unknown): TRPCError["code"] | null {
  return err instanceof TRPCError ? err.code : null;
}

export type PageRead<T> =
  | { ok: true; user: CurrentUser; caller: PageCaller; data: T }
  | {
      ok: false;
      /** Null when the database failed before the visitor was known. */
      user: CurrentUser | null;
      /** The procedure's refusal (NOT_FOUND, FORBIDDEN, BAD_REQUEST, ...); null: the database did not answer. */
      code: Exclude<TRPCError["code"], "INTERNAL_SERVER_ERROR"> | null;
      message: string;
    };

/**
 * A signed-in page's read: redirects to sign in (and back to `path`) when nobody is signed
 * in, then runs `read` as the visitor. Failures come back as data for the page to show;
 * one that is not a procedure's refusal is logged with `route` and reads as "database down".
 */
export async function readPage<T>(path: string, route: string, read: (page: SignedInPage) => Promise<T>): Promise<PageRead<T>> {
  let page: SignedInPage;
  try {
    page = await signedInPage(path);
  } catch (err) {
    unstable_rethrow(err); // the redirect to sign in
    logger.error({ err, route }, "page: could not read the visitor");
    return { ok: false, user: null, code: null, message: describeDbError(err) };
  }
  try {
    return { ok: true, ...page, data: await read(page) };
  } catch (err) {
    unstable_rethrow(err); // notFound(), redirect() from inside the read
    const code = trpcCode(err);
    if (code && code !== "INTERNAL_SERVER_ERROR") return { ok: false, user: page.user, code, message: (err as Error).message };
    logger.error({ err, route }, "page: database read failed");
    return { ok: false, user: page.user, code: null, message: describeDbError(err instanceof TRPCError && err.cause ? err.cause : err) };
  }
}
