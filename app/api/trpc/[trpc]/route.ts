// /api/trpc/*: the tRPC API (fetch adapter, limits in server/api/handler.ts). Auth: session cookie or `Authorization: Bearer`.
import { handleTrpc } from "@/server/api/handler";
import { createContext } from "@/server/api/web";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return Promise.resolve(handleTrpc(req, createContext));
}

export { handler as GET, handler as POST };
