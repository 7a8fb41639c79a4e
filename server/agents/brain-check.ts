// The "check" action of a brain (req M3): can the endpoint be reached, does it accept the
// key, does it know the model, and how do our rate-limit settings compare with the
// provider's. One cheap request (GET /v1/models for OpenAI-compatible servers, GET
// /v1/models/{model} for Anthropic), never a completion, never through the rate limit; none
// at all to a host on a non-public address the admin did not allow (access.privateHosts,
// server/net/outbound.ts), so a check cannot probe the server's own network.
import { AgentError } from "../agent-calls";
import { readCapped } from "../brains/call";
import { OutboundRefused, outboundFetch } from "../net/outbound";
import { providerErrorDetail, redact, retryAfterMs } from "../brains/errors";
import { brainApiKey, brainProtocol, parseBrainConfig } from "./brain";
import type { BrainAgentConfig, BrainAgentConfigInput } from "./config";
import type { AgentEnvPolicy } from "../process/env";
import { DEFAULT_AGENT_ENV_POLICY } from "./access";

export const DEFAULT_CHECK_TIMEOUT_MS = 10_000;
const MAX_MODELS_BODY_BYTES = 4 * 1024 * 1024;

export interface BrainCheckResult {
  /** Everything needed for a call is in place. */
  ok: boolean;
  /** refused: not called, its host is on a non-public address the admin did not allow. */
  connectivity: "ok" | "unreachable" | "timeout" | "refused";
  /** missing_key: apiKeyEnv names a variable that is not set; unknown: the answer did not tell. */
  auth: "ok" | "rejected" | "missing_key" | "unknown";
  /** null when the endpoint could not tell (no model listing, or it refused to answer). */
  modelExists: boolean | null;
  rateLimit: {
    minIntervalMs: number;
    /** The provider's requests-per-minute limit for this key, when its headers say. */
    providerRequestsPerMinute: number | null;
    /** The check itself was rate limited (HTTP 429). */
    limitedNow: boolean;
    retryAfterMs: number | null;
    /** Set when our interval allows more calls than the provider's limit. */
    warning: string | null;
  };
  /** Time to the provider's answer (headers); null when there was none. */
  latencyMs: number | null;
  /** A one-line diagnosis, never containing the key. */
  message: string;
}

export interface CheckBrainOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Which variables a key may be read from (settings access.agentEnv: server/agents/access.ts `agentEnvPolicy`). */
  keyPolicy?: AgentEnvPolicy;
  /** False: check without sending the key (a repository-defined endpoint, checked by a non-admin). */
  sendKey?: boolean;
  /** Hosts on non-public addresses the admin allows (access.privateHosts in force); absent: none. */
  privateHosts?: readonly string[];
}

export async function checkBrain(input: BrainAgentConfigInput, options: CheckBrainOptions = {}): Promise<BrainCheckResult> {
  const config = parseBrainConfig(input);
  const protocol = brainProtocol(config.kind);
  const minIntervalMs = config.rateLimit.minIntervalMs;
  const result: BrainCheckResult = {
    ok: false,
    connectivity: "unreachable",
    auth: "unknown",
    modelExists: null,
    rateLimit: { minIntervalMs, providerRequestsPerMinute: null, limitedNow: false, retryAfterMs: null, warning: null },
    latencyMs: null,
    message: "",
  };
  let apiKey: string | undefined;
  let keyProblem: string | null = null;
  try {
    if (options.sendKey !== false) apiKey = brainApiKey(config, options.env ?? process.env, options.keyPolicy ?? DEFAULT_AGENT_ENV_POLICY);
  } catch (err) {
    if (!(err instanceof AgentError)) throw err;
    result.auth = "missing_key";
    keyProblem = err.message;
  }
  const secrets = apiKey ? [apiKey] : [];
  const url = protocol.modelsUrl(config.baseUrl, config.model);
  const origin = new URL(config.baseUrl).origin;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const { "content-type": _unused, ...headers } = protocol.headers(apiKey);

  const startedAt = performance.now();
  let response: Response;
  let body: string;
  try {
    response = await outboundFetch(
      url,
      { method: "GET", headers: { ...headers, accept: "application/json" }, signal },
      { privateHosts: options.privateHosts ?? [] },
    );
    result.latencyMs = Math.round(performance.now() - startedAt);
    body = await readCapped(response, MAX_MODELS_BODY_BYTES);
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (err instanceof OutboundRefused && err.why === "non_public") {
      result.connectivity = "refused";
      result.message = [`${protocol.provider} at ${origin} not checked: ${err.message}`, keyProblem].filter(Boolean).join("; ");
      return result;
    }
    result.connectivity = timeout.aborted ? "timeout" : "unreachable";
    result.message = timeout.aborted
      ? `${protocol.provider} at ${origin} did not answer within ${options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS} ms`
      : `cannot reach ${protocol.provider} at ${origin}${causeCode(err)}`;
    return result;
  }
  result.connectivity = "ok";
  result.rateLimit.providerRequestsPerMinute = requestsPerMinute(response.headers);
  result.rateLimit.warning = intervalWarning(minIntervalMs, result.rateLimit.providerRequestsPerMinute);
  const providerSays = (() => {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return "";
    }
    const message = providerErrorDetail(json).message;
    return message ? `: ${redact(message, secrets).slice(0, 200)}` : "";
  })();
  const status = response.status;
  const answered = `${protocol.provider} at ${origin} answered HTTP ${status}`;

  if (status === 401 || status === 403) {
    result.auth = keyProblem ? "missing_key" : "rejected";
    result.message = keyProblem ?? `${answered}: the key in ${config.apiKeyEnv ?? "(no apiKeyEnv)"} was refused${providerSays}`;
    return result;
  }
  if (status === 429) {
    result.rateLimit.limitedNow = true;
    result.rateLimit.retryAfterMs = retryAfterMs(response.headers) ?? null;
    result.message = `${answered}: rate limited right now${providerSays}`;
    return result;
  }
  if (status === 404) {
    if (config.kind === "anthropic") {
      result.auth = keyProblem ? "missing_key" : "ok";
      result.modelExists = false;
      result.message = keyProblem ?? `model "${config.model}" not found at ${origin}`;
    } else {
      result.message = `${answered} for ${new URL(url).pathname}: it does not list models; check baseUrl${providerSays}`;
    }
    return result;
  }
  if (!response.ok) {
    result.message = `${answered}${providerSays}`;
    return result;
  }

  result.auth = keyProblem ? "missing_key" : "ok";
  result.modelExists = config.kind === "anthropic" ? true : listedModel(body, config.model);
  const problems = [
    keyProblem,
    result.modelExists === false ? `model "${config.model}" is not among the models ${origin} lists` : null,
    result.modelExists === null ? `could not read the model list of ${origin}` : null,
  ].filter((p): p is string => p !== null);
  result.ok = problems.length === 0 && result.rateLimit.warning === null;
  result.message = problems.length
    ? problems.join("; ")
    : `${describe(config)} reachable in ${result.latencyMs} ms${result.rateLimit.warning ? `; ${result.rateLimit.warning}` : ""}`;
  return result;
}

function describe(config: BrainAgentConfig): string {
  return `${config.kind === "openai" ? "OpenAI-compatible" : "Anthropic"} brain ${config.id} (model ${config.model})`;
}

/** true/false from an OpenAI-style list {data: [{id}]}; Ollama lists "name:latest" for "name". */
function listedModel(body: string, model: string): boolean | null {
  try {
    const json = JSON.parse(body) as { data?: unknown };
    if (!Array.isArray(json.data)) return null;
    const ids = json.data.map((m: unknown) => (typeof m === "object" && m !== null && "id" in m ? String((m as { id: unknown }).id) : ""));
    return ids.includes(model) || ids.includes(`${model}:latest`);
  } catch {
    return null;
  }
}

/** OpenAI: x-ratelimit-limit-requests; Anthropic: anthropic-ratelimit-requests-limit (both per minute). */
function requestsPerMinute(headers: Headers): number | null {
  const value = headers.get("x-ratelimit-limit-requests") ?? headers.get("anthropic-ratelimit-requests-limit");
  const n = value === null ? NaN : Number(value);
  return Number.isFinite(n) && n > 0 ? n : null;
}

function intervalWarning(minIntervalMs: number, providerRpm: number | null): string | null {
  if (providerRpm === null) return null;
  const ours = minIntervalMs > 0 ? 60_000 / minIntervalMs : Infinity;
  if (ours <= providerRpm) return null;
  const suggested = Math.ceil(60_000 / providerRpm);
  return `rateLimit.minIntervalMs ${minIntervalMs} allows ${Number.isFinite(ours) ? Math.floor(ours) : "unlimited"} calls a minute, the provider ${providerRpm}: use at least ${suggested}`;
}

function causeCode(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } })?.cause;
  return typeof cause?.code === "string" ? ` (${cause.code})` : "";
}
