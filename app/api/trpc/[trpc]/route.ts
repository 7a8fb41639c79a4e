// /api/trpc/*: the tRPC API (fetch adapter). Auth: session cookie or `Authorization: Bearer`.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/web";
import { logger } from "@/server/log";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext,
    onError({ error, path, type }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path, type }, "tRPC procedure failed");
    },
  });
}

export { handler as GET, handler as POST };
