// Where domain errors become wire errors, for tRPC and for the REST aliases alike:
// AppError codes map to tRPC codes here (their HTTP statuses are in server/errors.ts), a
// zod error is a bad request with its field errors, and anything else is an internal error
// whose message is not shown to the client.
import { TRPCError, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { z } from "zod";
import { isConnectionError } from "../db/pool";
import { AppError, HTTP_STATUS, type AppErrorCode } from "../errors";

export const TRPC_CODE: Record<AppErrorCode, TRPC_ERROR_CODE_KEY> = {
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  INVALID_INPUT: "BAD_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  PRECONDITION_FAILED: "PRECONDITION_FAILED",
  UNPROCESSABLE: "UNPROCESSABLE_CONTENT",
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
  INTERNAL: "INTERNAL_SERVER_ERROR",
};

/**
 * The database could not be reached (down, restarting, or every pooled connection busy
 * past the wait): a retryable 503, not a 500. Anything else passes through unchanged.
 */
export function unavailableFrom(err: unknown): unknown {
  if (err instanceof AppError || !isConnectionError(err)) return err;
  return new AppError("UNAVAILABLE", "the database is unreachable or busy right now; retry shortly");
}

export const INTERNAL_MESSAGE = "internal error (details are in the server log)";

export type FieldErrors = Record<string, string[]>;

/** zod's flattened errors; `formErrors` are the issues not tied to a field. */
export function flattenZodError(error: z.ZodError): { formErrors: string[]; fieldErrors: FieldErrors } {
  const flat = z.flattenError(error);
  return { formErrors: flat.formErrors, fieldErrors: flat.fieldErrors as FieldErrors };
}

/**
 * A domain refusal that names its fields (AppError details.fieldErrors: a check the input
 * schema cannot make, like a configuration value judged by the files' schemas), in the
 * shape of zod's flattened errors so a form shows each beside its field; null otherwise.
 */
export function appFieldErrors(cause: unknown): { formErrors: string[]; fieldErrors: FieldErrors } | null {
  const fieldErrors = cause instanceof AppError ? cause.details?.fieldErrors : undefined;
  return fieldErrors && typeof fieldErrors === "object" ? { formErrors: [], fieldErrors: fieldErrors as FieldErrors } : null;
}

/**
 * Where the stream stood when a command on it was refused as a conflict (`details.current`,
 * set by the command handler, events/command-handler.ts): a 409 answers it as `current`, so
 * the client sees the version and state it lost to. Null for any other error.
 */
export function conflictCurrent(cause: unknown): Record<string, unknown> | null {
  const current = cause instanceof AppError && cause.code === "CONFLICT" ? cause.details?.current : undefined;
  return current !== null && typeof current === "object" ? (current as Record<string, unknown>) : null;
}

/** The seconds a refusal asks the client to wait before trying again (AppError details.retryAfter); null for none. */
export function retryAfterOf(cause: unknown): number | null {
  const after = cause instanceof AppError ? cause.details?.retryAfter : undefined;
  return typeof after === "number" ? after : null;
}

/** A zod error as a person reads it: the first problems, each with where it is. */
export function zodSummary(error: z.ZodError, max = 3): string {
  const problems = error.issues.slice(0, max).map((i) => `${i.path.length ? i.path.join(".") : "input"}: ${i.message}`);
  const more = error.issues.length - problems.length;
  return `invalid input: ${problems.join("; ")}${more > 0 ? ` (and ${more} more)` : ""}`;
}

/**
 * What a client is told of a tRPC error: bad input as its first problems; an unknown failure
 * (a database error, a bug) as INTERNAL_MESSAGE, its details left to the server log.
 */
export function clientMessage(error: TRPCError): string {
  const cause = error.cause;
  if (error.code === "INTERNAL_SERVER_ERROR" && !(cause instanceof AppError)) return INTERNAL_MESSAGE;
  return cause instanceof z.ZodError ? zodSummary(cause) : error.message;
}

/** The tRPC error for whatever a procedure threw (tRPC wraps unknown throws in `cause`). */
export function toTRPCError(error: TRPCError): TRPCError {
  const cause = unavailableFrom(error.cause);
  if (cause instanceof AppError) return new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
  if (cause instanceof z.ZodError && error.code === "INTERNAL_SERVER_ERROR")
    return new TRPCError({ code: "BAD_REQUEST", message: "invalid input", cause });
  return error;
}

export interface RestErrorBody {
  error: { code: AppErrorCode; message: string; fieldErrors?: FieldErrors; current?: Record<string, unknown>; retryAfter?: number };
}

/** The REST form of any error: `{ error: { code, message, fieldErrors? } }` and its HTTP status. */
export function toRestError(raw: unknown): { status: number; body: RestErrorBody; internal: boolean } {
  const err = unavailableFrom(raw);
  if (err instanceof AppError) {
    const fields = appFieldErrors(err);
    const current = conflictCurrent(err);
    const retryAfter = retryAfterOf(err);
    return {
      status: HTTP_STATUS[err.code],
      body: {
        error: {
          code: err.code,
          message: err.message,
          ...(fields ? { fieldErrors: fields.fieldErrors } : {}),
          ...(current ? { current } : {}),
          ...(retryAfter !== null ? { retryAfter } : {}),
        },
      },
      internal: err.code === "INTERNAL",
    };
  }
  if (err instanceof z.ZodError) {
    const { formErrors, fieldErrors } = flattenZodError(err);
    return {
      status: HTTP_STATUS.INVALID_INPUT,
      body: { error: { code: "INVALID_INPUT", message: formErrors[0] ?? "invalid input", fieldErrors } },
      internal: false,
    };
  }
  return { status: HTTP_STATUS.INTERNAL, body: { error: { code: "INTERNAL", message: INTERNAL_MESSAGE } }, internal: true };
}
