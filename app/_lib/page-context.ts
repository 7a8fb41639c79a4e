// What a server-rendered page needs to act as its visitor: the tRPC context built from the
// page's own cookies (the same authentication the API uses) and a caller on it, so pages
// call the very procedures (with their role checks) that the API serves. Server-only.
import "server-only";
import { TRPCError } from "@trpc/server";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { createCaller } from "@/server/api/root";
import type { Context } from "@/server/api/context";
import { createContext } from "@/server/api/web";
import type { CurrentUser } from "@/server/auth/request";
import { SIGN_IN_PATH } from "@/server/auth/options";

export interface PageContext {
  ctx: Context & { user: CurrentUser };
  user: CurrentUser;
  caller: ReturnType<typeof createCaller>;
}

/** The visitor's context, or a redirect to sign in (and back to `path` afterwards). */
export async function signedInPage(path: string): Promise<PageContext> {
  const cookie = (await cookies())
    .getAll()
    .map((c) => `${c.name}=${encodeURIComponent(c.value)}`)
    .join("; ");
  const ctx = await createContext({ req: new Request("http://page.local/", { headers: { cookie } }) });
  const user = ctx.user;
  if (!user) redirect(`${SIGN_IN_PATH}?callbackUrl=${encodeURIComponent(path)}`);
  return { ctx: { ...ctx, user }, user, caller: createCaller(ctx) };
}

/** The tRPC code of a failed call (NOT_FOUND, FORBIDDEN, ...), or null for other errors. */
export function trpcCode(err: unknown): TRPCError["code"] | null {
  return err instanceof TRPCError ? err.code : null;
}
