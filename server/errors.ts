// The one domain error type. Codes map to tRPC codes and HTTP statuses in one place,
// so a concurrency conflict is always a 409/CONFLICT, never a 500. Also the failure
// taxonomy of steps and agents (req W10), which events, agents, brains, commands and the
// runner all classify by: it sits here, below all of them.
import { z } from "zod";

export const APP_ERROR_CODES = [
  "NOT_FOUND",
  "CONFLICT",
  "INVALID_INPUT",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "PRECONDITION_FAILED",
  /** A request that cannot be taken as sent, though well formed: an idempotency key reused for another request. */
  "UNPROCESSABLE",
  /** A body not sent as JSON where only JSON is taken: a cookie-signed command as a form or text (CSRF, docs/auth.md). */
  "UNSUPPORTED_MEDIA_TYPE",
  /** The database (or another dependency) cannot be reached right now: retry after a while. */
  "UNAVAILABLE",
  "INTERNAL",
] as const;
export type AppErrorCode = (typeof APP_ERROR_CODES)[number];

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: AppErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = details;
  }
}

export const HTTP_STATUS: Record<AppErrorCode, number> = {
  NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_INPUT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  PRECONDITION_FAILED: 412,
  UNPROCESSABLE: 422,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** Seconds a client should wait before retrying an UNAVAILABLE answer (Retry-After). */
export const RETRY_AFTER_SECONDS = 2;

export function isAppError(err: unknown, code?: AppErrorCode): err is AppError {
  return err instanceof AppError && (code === undefined || err.code === code);
}

/** The error taxonomy (req W10): every failure of a step, an agent or a command is exactly one of these. */
export const ERROR_CLASSES = [
  "provider_network_error",
  "provider_rate_limit",
  "provider_auth_error",
  "timeout",
  "cancelled",
  "schema_invalid",
  "command_refused",
  "command_failed",
  "tool_error",
  "internal_error",
] as const;
export const ZErrorClass = z.enum(ERROR_CLASSES);
export type ErrorClass = z.infer<typeof ZErrorClass>;
