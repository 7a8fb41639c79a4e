// The tRPC endpoint over HTTP, the one place its limits are set: a batch may hold at most
// MAX_BATCH_SIZE calls, and a request whose Content-Length says its body is larger than
// MAX_BODY_BYTES is refused (413) before anything reads it. A 503 tells clients when to
// retry. The route (app/api/trpc) and the tests call it the same way.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { RETRY_AFTER_SECONDS } from "../errors";
import { logger } from "../log";
import type { Context } from "./context";
import { appRouter } from "./root";

/** More calls in one batch than any page of ours makes (the dashboard makes 5). */
export const MAX_BATCH_SIZE = 20;
/** Far above the largest input any procedure takes (a 20,000-character prompt, a project with its agents). */
export const MAX_BODY_BYTES = 1024 * 1024;

export function handleTrpc(req: Request, createContext: (opts: { req: Request }) => Promise<Context>): Promise<Response> | Response {
  const length = Number(req.headers.get("content-length") ?? 0);
  if (length > MAX_BODY_BYTES) {
    return Response.json(
      {
        error: {
          message: `the request body is ${length} bytes; at most ${MAX_BODY_BYTES} are accepted`,
          code: -32600,
          data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413 },
        },
      },
      { status: 413 },
    );
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext,
    maxBatchSize: MAX_BATCH_SIZE,
    // A database that cannot be reached answers 503: tell clients when to try again.
    responseMeta({ errors }) {
      return errors.some((e) => e.code === "SERVICE_UNAVAILABLE") ? { headers: { "Retry-After": String(RETRY_AFTER_SECONDS) } } : {};
    },
    onError({ error, path, type }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path, type }, "tRPC procedure failed");
    },
  });
}
