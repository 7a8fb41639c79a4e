// The tRPC endpoint over HTTP, the one place its limits are set: a batch may hold at most
// MAX_BATCH_SIZE calls, and a request whose Content-Length says its body is larger than
// MAX_BODY_BYTES is refused (413) before anything reads it. A 503 (and a 409 for a request
// whose idempotency key is still being carried out) tells clients when to retry. A mutation
// signed in by the session cookie is taken only as same-site JSON (./csrf.ts, docs/auth.md),
// refused before anything else reads it. A POST with an `Idempotency-Key` is carried out once
// per key (./idempotency.ts). The route (app/api/trpc) and the tests call it the same way.
import { getErrorShape, TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { AppError, RETRY_AFTER_SECONDS } from "../errors";
import { logger } from "../log";
import type { Context } from "./context";
import { crossSiteRefusal } from "./csrf";
import { retryAfterOf, TRPC_CODE, unavailableFrom } from "./errors";
import { idempotent } from "./idempotency";
import { appRouter } from "./root";

/** More calls in one batch than any page of ours makes (the dashboard makes 5). */
export const MAX_BATCH_SIZE = 20;
/** Far above the largest input any procedure takes (a 20,000-character prompt, a project with its agents). */
export const MAX_BODY_BYTES = 1024 * 1024;

export async function handleTrpc(req: Request, createContext: (opts: { req: Request }) => Promise<Context>): Promise<Response> {
  const length = Number(req.headers.get("content-length") ?? 0);
  if (length > MAX_BODY_BYTES) {
    const message = `the request body is ${length} bytes; at most ${MAX_BODY_BYTES} are accepted`;
    return refused(req, new TRPCError({ code: "PAYLOAD_TOO_LARGE", message }));
  }
  // Before the sign-in, the key's claim and the procedure: a forged request reads and records nothing.
  const crossSite = crossSiteRefusal(req);
  if (crossSite) return refused(req, new TRPCError({ code: TRPC_CODE[crossSite.code], message: crossSite.message, cause: crossSite }));
  let ctx: Context;
  try {
    ctx = await createContext({ req });
  } catch (err) {
    return serve(req, () => Promise.reject(err));
  }
  if (!ctx.user || req.method !== "POST") return serve(req, () => Promise.resolve(ctx));
  try {
    return await idempotent(ctx.pool, req, ctx.user.id, (r) => serve(r, () => Promise.resolve(ctx)));
  } catch (err) {
    // Refused by the key (reused for another request, or still being carried out): answered in tRPC's shape.
    const refusal = unavailableFrom(err);
    if (!(refusal instanceof AppError)) throw err;
    return serve(req, () => Promise.reject(new TRPCError({ code: TRPC_CODE[refusal.code], message: refusal.message, cause: refusal })));
  }
}

/** The answer to a request refused before tRPC reads it, in the shape of every other tRPC error (the router's formatter). */
function refused(req: Request, error: TRPCError): Response {
  const path = new URL(req.url).pathname.replace(/^\/api\/trpc\/?/, "");
  const shape = getErrorShape({ config: appRouter._def._config, error, type: "unknown", path, input: undefined, ctx: undefined });
  return Response.json({ error: shape }, { status: getHTTPStatusCodeFromError(error) });
}

/** tRPC's fetch handler for `req`, with the context `createContext` gives (or the error it throws, answered in tRPC's shape). */
function serve(req: Request, createContext: () => Promise<Context>): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext,
    maxBatchSize: MAX_BATCH_SIZE,
    // A database that cannot be reached answers 503, a key still being carried out 409: tell clients when to try again.
    responseMeta({ errors }) {
      const later = errors.some((e) => e.code === "SERVICE_UNAVAILABLE" || retryAfterOf(e.cause) !== null);
      return later ? { headers: { "Retry-After": String(RETRY_AFTER_SECONDS) } } : {};
    },
    onError({ error, path, type }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path, type }, "tRPC procedure failed");
    },
  });
}
