// How a failure a CLI reports about its provider maps onto the error taxonomy (req W10).
// The CLIs say it differently (Claude Code: HTTP status and error type fields; Codex: only a
// message; Gemini CLI: the API's JSON error inside a message), so the status and code are
// used when given and the message is read otherwise:
//
//   401, 402, 403, 404, bad or missing key, billing          → provider_auth_error (no retry)
//   429, 529, rate limit, quota, overloaded, high demand     → provider_rate_limit (retry)
//   reset / refused / dropped stream, fetch failed, 408, 5xx → provider_network_error (retry)
//   anything else the CLI calls an error                     → tool_error (no retry)
//
// A status is classed by the rule the HTTP brains use (brains/errors.ts providerStatusClass,
// which also says why "overloaded" is a rate limit), so the same refusal is the same class
// whether a CLI or one of our brains met it.
import { providerStatusClass, RATE_LIMIT_SIGNS, redact, type ProviderFailureClass } from "../../brains/errors";
import { AgentError } from "../types";

export interface CliFailure {
  message: string;
  /** The provider's HTTP status, when the CLI reports it. */
  status?: number | null;
  /** The provider's or the CLI's error type, e.g. authentication_error, rate_limit, RESOURCE_EXHAUSTED. */
  code?: string | null;
}

const MESSAGE_CHARS = 500;

const AUTH =
  /\b(?:401|402|403)\b|unauthori[sz]ed|unauthenticated|permission[_ ]denied|authentication|invalid[ _-]?(?:x-)?api[ _-]?key|api key not valid|incorrect api key|missing environment variable|credit balance|billing|forbidden|\/login\b/i;
const NETWORK =
  /ECONNRESET|ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EPIPE|socket hang up|fetch failed|network|connection|disconnect|terminated|transport error|error sending request|stream (?:closed|ended)|premature close|timed? ?out|\b50[0234]\b|internal server error|bad gateway|service unavailable/i;

export function classifyCliFailure(failure: CliFailure): ProviderFailureClass {
  const text = `${failure.code ?? ""} ${failure.message}`;
  const byStatus = failure.status != null ? providerStatusClass(failure.status, text) : null;
  if (byStatus) return byStatus;
  if (AUTH.test(text)) return "provider_auth_error";
  if (RATE_LIMIT_SIGNS.test(text)) return "provider_rate_limit";
  if (NETWORK.test(text)) return "provider_network_error";
  return "tool_error";
}

/** The AgentError for a failure `shell` reported; secrets and key-shaped text never reach the message. */
export function cliFailureError(
  shell: string,
  failure: CliFailure,
  partialOutput: string,
  secrets: readonly string[],
  /** How long the provider asked to wait (the runner's next attempt waits at least that). */
  retryAfterMs?: number,
): AgentError {
  const errorClass = classifyCliFailure(failure);
  const status = failure.status != null ? ` (HTTP ${failure.status})` : "";
  const message = redact(failure.message, secrets).trim().slice(0, MESSAGE_CHARS) || "no message";
  const retryable = errorClass === "provider_rate_limit" || errorClass === "provider_network_error";
  return new AgentError(
    errorClass,
    `${shell} reported an error${status}: ${message}`,
    retryable,
    partialOutput,
    retryable ? retryAfterMs : undefined,
  );
}
