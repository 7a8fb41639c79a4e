// /api/trpc/*: the tRPC API (fetch adapter). Auth: session cookie or `Authorization: Bearer`.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/web";
import { RETRY_AFTER_SECONDS } from "@/server/errors";
import { logger } from "@/server/log";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext,
    // A database that cannot be reached answers 503: tell clients when to try again.
    responseMeta({ errors }) {
      return errors.some((e) => e.code === "SERVICE_UNAVAILABLE") ? { headers: { "Retry-After": String(RETRY_AFTER_SECONDS) } } : {};
    },
    onError({ error, path, type }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path, type }, "tRPC procedure failed");
    },
  });
}

export { handler as GET, handler as POST };
