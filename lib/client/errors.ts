// Every failure a client can meet, as one shape: the server's error code (tRPC code, or the
// REST aliases' code), its message, zod's field errors for a bad input, or UNREACHABLE when
// no answer came at all.
import { TRPCClientError } from "@trpc/client";
import type { AppRouter } from "./types";

export interface ClientErrorInfo {
  /** UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, BAD_REQUEST, PRECONDITION_FAILED, UNREACHABLE, ... */
  code: string;
  httpStatus: number | null;
  message: string;
  /** Input field → problems (a bad request). */
  fieldErrors: Record<string, string[]>;
  /** Input problems not tied to a field. */
  formErrors: string[];
}

/** A non-2xx answer of a REST endpoint (`{ error: { code, message, fieldErrors? } }`). */
export class CatCafeHttpError extends Error {
  constructor(
    readonly code: string,
    readonly httpStatus: number,
    message: string,
    readonly fieldErrors: Record<string, string[]> = {},
  ) {
    super(message);
    this.name = "CatCafeHttpError";
  }
}

/** The REST aliases' codes in tRPC's words, so callers see one vocabulary. */
const REST_TO_TRPC: Record<string, string> = { INVALID_INPUT: "BAD_REQUEST", INTERNAL: "INTERNAL_SERVER_ERROR" };

/** Reads a REST error answer; anything unexpected keeps its HTTP status. */
export async function httpErrorFrom(response: Response, what: string): Promise<CatCafeHttpError> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; fieldErrors?: unknown } };
    const error = body.error;
    if (error && typeof error.code === "string" && typeof error.message === "string") {
      const code = REST_TO_TRPC[error.code] ?? error.code;
      return new CatCafeHttpError(code, response.status, error.message, (error.fieldErrors as Record<string, string[]> | undefined) ?? {});
    }
  } catch {
    // not JSON: fall through
  }
  return new CatCafeHttpError(`HTTP_${response.status}`, response.status, `${what}: HTTP ${response.status} ${text.slice(0, 200)}`.trim());
}

/** Why a fetch got no answer ("ECONNREFUSED", "bad port", ...), or null when it was not that. */
function networkFailure(err: unknown): string | null {
  let fetchFailed = false;
  let deepest: string | null = null;
  for (let cause: unknown = err, depth = 0; cause && depth < 6; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
    if (cause instanceof TypeError && cause.message === "fetch failed") fetchFailed = true;
    if (cause instanceof Error) deepest = cause.message;
    cause = (cause as { cause?: unknown }).cause;
  }
  return fetchFailed ? (deepest ?? "fetch failed") : null;
}

export function describeError(err: unknown): ClientErrorInfo {
  const none = { fieldErrors: {}, formErrors: [] };
  if (err instanceof CatCafeHttpError)
    return { code: err.code, httpStatus: err.httpStatus, message: err.message, fieldErrors: err.fieldErrors, formErrors: [] };
  if (err instanceof TRPCClientError) {
    const error = err as TRPCClientError<AppRouter>;
    if (!error.data) {
      const net = networkFailure(error);
      if (net) return { code: "UNREACHABLE", httpStatus: null, message: `no answer from the server (${net}): ${error.message}`, ...none };
      return { code: "UNKNOWN", httpStatus: null, message: error.message, ...none };
    }
    const zod = error.data.zodError;
    return {
      code: error.data.code,
      httpStatus: error.data.httpStatus,
      message: error.message,
      fieldErrors: (zod?.fieldErrors as Record<string, string[]> | undefined) ?? {},
      formErrors: zod?.formErrors ?? [],
    };
  }
  const net = networkFailure(err);
  if (net) return { code: "UNREACHABLE", httpStatus: null, message: `no answer from the server (${net})`, ...none };
  return { code: "UNKNOWN", httpStatus: null, message: err instanceof Error ? err.message : String(err), ...none };
}
