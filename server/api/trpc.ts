// tRPC root: the context type, the one error formatter, and the procedure builders that
// carry authorization. Each builder is a small middleware on the previous one and narrows
// `ctx.user` to non-null for everything after it:
//   publicProcedure → viewerProcedure (signed in) → operatorProcedure → adminProcedure.
import { initTRPC, TRPCError } from "@trpc/server";
import { z } from "zod";
import { hasRole, type Role } from "../../lib/roles";
import type { Context } from "./context";
import { appFieldErrors, clientMessage, conflictCurrent, flattenZodError, retryAfterOf, toTRPCError } from "./errors";
import { unstorableText } from "./text-input";
import { inSpan, markFailed } from "../tracing/spans";

const t = initTRPC.context<Context>().create({
  // Live views are long SSE streams: a ping every 15 s keeps proxies from closing idle ones.
  sse: { ping: { enabled: true, intervalMs: 15_000 } },
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const current = conflictCurrent(cause);
    const retryAfter = retryAfterOf(cause);
    return {
      ...shape,
      // Bad input reads as its first problems, not as a JSON dump of zod's issues; unknown
      // failures (a database error, a bug) keep their details in the server log.
      message: clientMessage(error),
      data: {
        code: shape.data.code,
        httpStatus: shape.data.httpStatus,
        path: shape.data.path,
        zodError: cause instanceof z.ZodError ? flattenZodError(cause) : appFieldErrors(cause),
        // A conflict says where the session stands now (its version and state).
        ...(current ? { current } : {}),
        // A request whose idempotency key is still being carried out: when to try again.
        ...(retryAfter !== null ? { retryAfter } : {}),
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Domain errors (AppError, zod) become the matching tRPC error, for every procedure. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  return result.ok ? result : { ...result, error: toTRPCError(result.error) };
});

/** Strings PostgreSQL cannot store (NUL, lone surrogates) are a 400 naming the field, never a 500. */
const refuseUnstorableText = t.middleware(async ({ getRawInput, next }) => {
  // A procedure without input (a bodiless POST) has no raw input to read: nothing to check.
  const raw = await getRawInput().catch(() => undefined);
  const bad = unstorableText(raw);
  if (bad) throw new TRPCError({ code: "BAD_REQUEST", message: `${bad.path}: ${bad.problem}` });
  return next();
});

/**
 * Each command (a mutation) is a span, the root of its trace: the steps it schedules carry
 * its context to the runners (docs/operations.md, "Traces"). A no-op with tracing off.
 */
const traceCommands = t.middleware(({ type, path, next }) => {
  if (type !== "mutation") return next();
  return inSpan(`command ${path}`, { attributes: { "rpc.system": "trpc", "rpc.method": path } }, async (span) => {
    const result = await next();
    if (!result.ok) markFailed(span, result.error, result.error.code);
    return result;
  });
});

export const publicProcedure = t.procedure.use(traceCommands).use(mapDomainErrors).use(refuseUnstorableText);

/** Signed in (every member of the team is at least a viewer). */
export const viewerProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in, or send an API token as `Authorization: Bearer ...`" });
  return next({ ctx: { user: ctx.user } });
});

function atLeast(role: Role) {
  return viewerProcedure.use(({ ctx, next }) => {
    if (!hasRole(ctx.user.role, role))
      throw new TRPCError({ code: "FORBIDDEN", message: `this needs the ${role} role (you are ${ctx.user.role})` });
    return next();
  });
}

export const operatorProcedure = atLeast("operator");
export const adminProcedure = atLeast("admin");
