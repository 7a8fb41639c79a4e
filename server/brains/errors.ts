// How a provider's refusal maps onto the error taxonomy (req W10), the one place that
// decides what is retryable, and the redaction every provider text passes through before
// it can reach an error message (and from there an event): API keys never do (req N4).
//
//   connection refused / reset / dropped mid-stream, 408, 409, 5xx      → provider_network_error (retry)
//   429, 529, a 5xx or stream error saying "overloaded" (and the like)  → provider_rate_limit (retry, after Retry-After)
//   429 for an exhausted quota or spend limit                           → provider_rate_limit (no retry: waiting will not help)
//   401, 403, 402 (billing)                                             → provider_auth_error (no retry)
//   404 (unknown model or wrong endpoint)                               → provider_auth_error (no retry): like a bad key,
//                                                                          only a configuration change fixes it
//   400, 413, 422, 3xx (the request or baseUrl is wrong)                → tool_error (no retry)
//   invalid JSON or an unexpected shape in the stream                   → tool_error (no retry)
//
// The status rule (providerStatusClass) is shared with the CLI shells (agents/shells/failures.ts),
// so one refusal is one failure class whichever adapter met it.
import { AgentError } from "../agent-calls";
import type { ErrorClass } from "../errors";

/** The longest wait a provider may ask for; longer values are capped (a step is not parked for days). */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;
/** How much of a provider's error text is quoted in a message. */
const PROVIDER_MESSAGE_CHARS = 300;

const REDACTED = "[redacted]";
/** Key-shaped tokens (OpenAI sk-..., Anthropic sk-ant-..., masked echoes like sk-ab***yz). */
const KEY_LIKE = /\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{6,}/g;

/** `text` with every secret, and anything shaped like an API key, replaced. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  return out.replace(KEY_LIKE, REDACTED);
}

/**
 * How long the provider asked us to wait: `retry-after-ms` (OpenAI), else `retry-after` as
 * seconds or an HTTP date (RFC 9110). Undefined when absent or unreadable; capped.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.min(Math.ceil(Number(ms)), MAX_RETRY_AFTER_MS);
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(Math.ceil(Number(value) * 1000), MAX_RETRY_AFTER_MS);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** What a provider's error body says: OpenAI {error:{message,code,type}}, Anthropic {error:{type,message}}, Ollama {error:"..."}. */
export interface ProviderErrorDetail {
  message: string | null;
  /** error.code (OpenAI) or error.type (Anthropic), e.g. insufficient_quota, overloaded_error. */
  code: string | null;
  /** Anthropic: error.details.error_code, e.g. enforced_spend_limit_reached. */
  detailCode: string | null;
}

export function providerErrorDetail(body: unknown): ProviderErrorDetail {
  const none: ProviderErrorDetail = { message: null, code: null, detailCode: null };
  if (!isRecord(body)) return none;
  const error = body.error;
  if (typeof error === "string") return { ...none, message: error };
  if (!isRecord(error)) return typeof body.message === "string" ? { ...none, message: body.message } : none;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
  const details = isRecord(error.details) ? error.details : {};
  return { message: str(error.message), code: str(error.code) ?? str(error.type), detailCode: str(details.error_code) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A provider saying it is overloaded or limiting us. "Overloaded" (Anthropic's 529
 * overloaded_error, a 503 "high demand") counts as a rate limit, not a network error: the
 * provider was reached and answered, and what it says is "not now, come back later", which
 * is what a 429 says too. The cure is the same, waiting with backoff and honouring its
 * Retry-After, and the class tells the operator the provider is busy, not that our
 * connection is broken.
 */
export const RATE_LIMIT_SIGNS = /\b(?:429|529)\b|rate[ _-]?limit|too many requests|resource[ _]?exhausted|quota|overloaded|high demand/i;

export type ProviderFailureClass = Extract<
  ErrorClass,
  "provider_auth_error" | "provider_rate_limit" | "provider_network_error" | "tool_error"
>;

/**
 * The class of a provider's HTTP error status, for HTTP brains and CLI shells alike; `says`
 * is the provider's error code and message (a server error that says it is overloaded is a
 * rate limit). Null below 400: no class follows from the status alone.
 */
export function providerStatusClass(status: number, says: string): ProviderFailureClass | null {
  if (status === 401 || status === 402 || status === 403 || status === 404) return "provider_auth_error";
  if (status === 429 || status === 529) return "provider_rate_limit";
  if (status >= 500) return serverErrorClass(says);
  if (status === 408 || status === 409) return "provider_network_error";
  if (status >= 400) return "tool_error";
  return null;
}

/** A failure on the provider's side: a rate limit when it says it is overloaded, else a network error. */
function serverErrorClass(says: string): "provider_rate_limit" | "provider_network_error" {
  return RATE_LIMIT_SIGNS.test(says) ? "provider_rate_limit" : "provider_network_error";
}

/** Quota or spend exhausted: a 429 that retrying will not cure. */
const EXHAUSTED_CODES = new Set(["insufficient_quota", "billing_hard_limit_reached", "enforced_spend_limit_reached", "billing_error"]);

export interface HttpFailure {
  provider: string;
  status: number;
  headers: Headers;
  /** The response body as far as it was read (capped). */
  body: string;
  secrets: readonly string[];
}

/** The AgentError for a non-2xx answer. */
export function httpError({ provider, status, headers, body, secrets }: HttpFailure): AgentError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    // plain-text or HTML error page: quoted below as it is
  }
  const detail = providerErrorDetail(parsed);
  const quoted = quote(detail.message ?? body, secrets);
  const says = quoted ? `: ${quoted}` : "";
  const what = `${provider} answered HTTP ${status}`;
  switch (providerStatusClass(status, `${detail.code ?? ""} ${detail.message ?? body}`)) {
    case "provider_rate_limit": {
      const exhausted = status === 429 && [detail.code, detail.detailCode].some((c) => c !== null && EXHAUSTED_CODES.has(c));
      if (exhausted) return new AgentError("provider_rate_limit", `${what} (quota or spend limit exhausted, not retried)${says}`, false);
      const wait = retryAfterMs(headers);
      return new AgentError(
        "provider_rate_limit",
        `${what} (${status === 429 ? "rate limited" : "overloaded"}${wait === undefined ? "" : `, retry after ${wait} ms`})${says}`,
        true,
        "",
        wait,
      );
    }
    case "provider_auth_error":
      if (status === 402) return new AgentError("provider_auth_error", `${what} (payment required)${says}`, false);
      if (status === 404)
        return new AgentError("provider_auth_error", `${what} (model or endpoint not found; check model and baseUrl)${says}`, false);
      return new AgentError("provider_auth_error", `${what} (credentials refused; check the key in the brain's apiKeyEnv)${says}`, false);
    case "provider_network_error":
      return new AgentError("provider_network_error", `${what} (server error)${says}`, true, "", retryAfterMs(headers));
    case "tool_error":
      return new AgentError("tool_error", `${what} (request rejected)${says}`, false);
    case null:
      break;
  }
  if (status >= 300 && status < 400) {
    const to = headers.get("location");
    return new AgentError(
      "tool_error",
      `${what} (redirect${to ? ` to ${quote(to, secrets)}` : ""}; redirects are not followed: set baseUrl to the final address)`,
      false,
    );
  }
  return new AgentError("tool_error", `${what} (request rejected)${says}`, false);
}

/** An `error` event inside a stream that had started (OpenAI {error:{...}}, Anthropic event: error). */
export function streamError(provider: string, detail: ProviderErrorDetail, partialOutput: string, secrets: readonly string[]): AgentError {
  const says = detail.message ? `: ${quote(detail.message, secrets)}` : "";
  const code = detail.code ?? "error";
  const what = `${provider} reported ${code} mid-stream${says}`;
  if (/rate_limit/.test(code)) return new AgentError("provider_rate_limit", what, true, partialOutput);
  if (/auth|permission/.test(code)) return new AgentError("provider_auth_error", what, false, partialOutput);
  if (/invalid_request|not_found|request_too_large/.test(code)) return new AgentError("tool_error", what, false, partialOutput);
  // overloaded_error, api_error, server_error and whatever a compatible server names it: a
  // server error, classed as the status rule classes one (overloaded → rate limit).
  return new AgentError(serverErrorClass(`${code} ${detail.message ?? ""}`), what, true, partialOutput);
}

/** A failed connection (refused, reset, dropped mid-stream): always retryable. */
export function connectionError(provider: string, origin: string, cause: unknown, partialOutput: string): AgentError {
  const code = errorCode(cause);
  const when = partialOutput
    ? `connection to ${provider} at ${origin} lost after ${partialOutput.length} characters`
    : `could not reach ${provider} at ${origin}`;
  return new AgentError("provider_network_error", `${when}${code ? ` (${code})` : ""}`, true, partialOutput);
}

/** The most specific code in an error's cause chain (fetch wraps socket errors in TypeError("fetch failed")). */
function errorCode(err: unknown): string | null {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    if (typeof e !== "object") break;
    const { code, cause, message } = e as { code?: unknown; cause?: unknown; message?: unknown };
    if (typeof code === "string" && code !== "") return code;
    if (!cause && typeof message === "string") return message;
    e = cause;
  }
  return null;
}

function quote(text: string, secrets: readonly string[]): string {
  const flat = redact(text, secrets).replace(/\s+/g, " ").trim();
  return flat.length > PROVIDER_MESSAGE_CHARS ? `${flat.slice(0, PROVIDER_MESSAGE_CHARS)}…` : flat;
}
