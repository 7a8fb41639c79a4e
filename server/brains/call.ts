// One streamed call to a model provider over HTTP: waits for the brain's turn under the
// shared rate limit, POSTs (to a host on a non-public address only when the admin allows it:
// server/net/outbound.ts), feeds the event stream through the provider's reader, streams
// text to onChunk as it arrives, and turns every way it can end into an answer or an
// AgentError of the taxonomy. Cancel and deadline abort the HTTP request itself.
import { AgentError, cachedTokenFields, MAX_AGENT_OUTPUT_BYTES, type AgentResponse, type AgentUsage } from "../agent-calls";
import { OutboundRefused, outboundFetch, PRIVATE_HOSTS_SETTING } from "../net/outbound";
import { connectionError, httpError, redact, streamError } from "./errors";
import { StreamFormatError, type BrainProtocol } from "./protocol";
import { SseParser } from "./sse";
import { atTime } from "../deadline";
import { GEN_AI, providerAttributes, usageAttributes } from "../tracing/genai";
import { inSpan, SpanKind } from "../tracing/spans";

/** Event-stream framing (JSON, field names) around the text; beyond this the stream is runaway. */
const MAX_STREAM_BYTES = 8 * MAX_AGENT_OUTPUT_BYTES;
/** How much of an error response body is read. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** An oversized failure keeps only this much of what streamed, for diagnosis. */
const OVERSIZED_PARTIAL_CHARS = 4 * 1024;

/** One brain's place in the shared call schedule: its id and endpoint, and its spacing. */
export interface BrainTurnRequest {
  brainId: string;
  baseUrl: string;
  minIntervalMs: number;
}

export interface BrainTurn {
  /**
   * The call is under way (the provider answered) or failed before it could start; the
   * next turn comes `minIntervalMs` from now, or `notBeforeMs` if the provider asked for more.
   * Idempotent; never rejects. Await it before the process may exit.
   */
  release(options?: { notBeforeMs?: number }): Promise<void>;
}

/** Where a brain waits for its turn under the rate limit shared by all runners (req R5). */
export interface BrainCallGate {
  /** Resolves once this brain may be called; rejects when `signal` aborts first. */
  waitTurn(brain: BrainTurnRequest, signal: AbortSignal): Promise<BrainTurn>;
}

/** What the caller controls of one call: when to stop, where text goes, the rate-limit gate. */
export interface CallControl {
  /** Aborted on cancel, lost lease, timeout or runner shutdown: the HTTP request is aborted. */
  signal: AbortSignal;
  /** Epoch milliseconds by which the provider must have answered. */
  deadline: number;
  /** Streamed text as it arrives. */
  onChunk?: (text: string) => void;
  /** Without one the call goes out at once. */
  callGate?: BrainCallGate;
  /** Hosts on non-public addresses the admin allows (access.privateHosts in force); absent: none (server/net/outbound.ts). */
  privateHosts?: readonly string[];
}

export interface BrainCall {
  protocol: BrainProtocol;
  brainId: string;
  /** The model the body asks for (traces name it: `gen_ai.request.model`). */
  model: string;
  baseUrl: string;
  /** The request body (JSON-serialisable). */
  body: unknown;
  /** The API key, or undefined for endpoints without one (a local Ollama). */
  apiKey: string | undefined;
  /** 0: no rate limit. */
  minIntervalMs: number;
}

/** Why we ended the call ourselves. */
type Stop = { kind: "cancelled" } | { kind: "timeout" } | { kind: "oversized" } | { kind: "chunk_failed"; error: unknown };

/**
 * The call in a GenAI client span, `chat <model>` (docs/operations.md, "Traces"): provider,
 * model, endpoint host and the tokens the provider reported; never the body or the answer.
 */
export async function streamBrainCall(call: BrainCall, request: CallControl): Promise<AgentResponse> {
  const url = new URL(call.baseUrl);
  const attributes = {
    [GEN_AI.operation]: "chat",
    ...providerAttributes(call.protocol.genAiProvider),
    [GEN_AI.requestModel]: call.model,
    "server.address": url.hostname,
    ...(url.port ? { "server.port": Number(url.port) } : {}),
    "catcafe.brain.id": call.brainId,
  };
  return inSpan(`chat ${call.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const response = await streamCall(call, request);
    span.setAttributes(usageAttributes(response.usage));
    return response;
  });
}

async function streamCall(call: BrainCall, request: CallControl): Promise<AgentResponse> {
  const { protocol } = call;
  const secrets = call.apiKey ? [call.apiKey] : [];
  const origin = new URL(call.baseUrl).origin;
  const startedAt = Date.now();
  if (request.signal.aborted) throw stopError({ kind: "cancelled" }, "", protocol.provider, 0);
  // Written as "not after" so that a NaN deadline times out at once rather than never.
  if (!(request.deadline > startedAt)) throw stopError({ kind: "timeout" }, "", protocol.provider, 0);

  const http = new AbortController();
  const ended: { by: Stop | null } = { by: null };
  const halt = (reason: Stop) => {
    if (ended.by) return;
    ended.by = reason;
    http.abort();
  };
  const onAbort = () => halt({ kind: "cancelled" });
  request.signal.addEventListener("abort", onAbort, { once: true });
  const clearDeadline = atTime(request.deadline, () => halt({ kind: "timeout" }));
  const stopped = (partial: string) => (ended.by ? stopError(ended.by, partial, protocol.provider, Date.now() - startedAt) : null);

  let turn: BrainTurn | null = null;
  // Released as soon as the provider answers, so the next caller's interval starts then;
  // awaited before returning, so a process that exits next does not leave the turn held.
  let released: Promise<void> | undefined;
  const release = (notBeforeMs?: number) => {
    released ??= turn?.release(notBeforeMs === undefined ? undefined : { notBeforeMs });
  };
  let text = "";
  try {
    if (request.callGate && call.minIntervalMs > 0) {
      try {
        turn = await request.callGate.waitTurn(
          { brainId: call.brainId, baseUrl: call.baseUrl, minIntervalMs: call.minIntervalMs },
          http.signal,
        );
      } catch (err) {
        throw (
          stopped("") ??
          new AgentError(
            "internal_error",
            `waiting for the rate limit of brain ${call.brainId} failed: ${(err as Error)?.message ?? String(err)}`,
            false,
          )
        );
      }
      // The turn may have come just as the call was cancelled.
      const late = stopped("");
      if (late) throw late;
    }

    let response: Response;
    try {
      // A redirect could carry the key to another host: never followed (outboundFetch never does).
      response = await outboundFetch(
        protocol.callUrl(call.baseUrl),
        { method: "POST", headers: protocol.headers(call.apiKey), body: JSON.stringify(call.body), signal: http.signal },
        { privateHosts: request.privateHosts ?? [] },
      );
    } catch (err) {
      const late = stopped("");
      if (late) throw late;
      if (err instanceof OutboundRefused && err.why === "non_public")
        throw new AgentError(
          "tool_error",
          `brain ${call.brainId} refused: ${origin} is on a loopback, link-local or private address; an admin can allow its host in ${PRIVATE_HOSTS_SETTING}`,
          false,
        );
      throw connectionError(protocol.provider, origin, err, "");
    }
    if (!response.ok) {
      const body = await readCapped(response, MAX_ERROR_BODY_BYTES).catch(() => "");
      const error = httpError({ provider: protocol.provider, status: response.status, headers: response.headers, body, secrets });
      release(error.retryAfterMs);
      throw stopped("") ?? error;
    }
    release();
    if (!response.body) throw new AgentError("provider_network_error", `${protocol.provider} answered without a body`, true);
    if (/application\/json/i.test(response.headers.get("content-type") ?? "")) {
      http.abort();
      throw new AgentError(
        "tool_error",
        `${protocol.provider} answered with JSON instead of an event stream (does ${origin} support stream: true?)`,
        false,
      );
    }

    const parser = new SseParser();
    const decoder = new TextDecoder("utf-8");
    const reader = response.body.getReader();
    const usage: Partial<AgentUsage> = {};
    let textBytes = 0;
    let streamBytes = 0;
    let finished = false;
    let done = false;
    const emit = (chunk: string) => {
      const bytes = Buffer.byteLength(chunk);
      if (textBytes + bytes > MAX_AGENT_OUTPUT_BYTES) return halt({ kind: "oversized" });
      textBytes += bytes;
      text += chunk;
      try {
        request.onChunk?.(chunk);
      } catch (error) {
        halt({ kind: "chunk_failed", error });
      }
    };
    const handle = (events: ReturnType<SseParser["push"]>) => {
      for (const event of events) {
        if (done || ended.by) return;
        for (const signal of protocol.read(event)) {
          switch (signal.kind) {
            case "text":
              emit(signal.text);
              break;
            case "usage":
              if (signal.inputTokens !== undefined) usage.inputTokens = signal.inputTokens;
              if (signal.outputTokens !== undefined) usage.outputTokens = signal.outputTokens;
              if (signal.cachedInputTokens !== undefined) usage.cachedInputTokens = signal.cachedInputTokens;
              if (signal.cacheCreationInputTokens !== undefined) usage.cacheCreationInputTokens = signal.cacheCreationInputTokens;
              break;
            case "finished":
              finished = true;
              break;
            case "done":
              done = true;
              break;
            case "error":
              http.abort();
              throw streamError(protocol.provider, signal.detail, text, secrets);
          }
          if (ended.by) return;
        }
      }
    };

    try {
      while (!done) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw stopped(text) ?? connectionError(protocol.provider, origin, err, text);
        }
        if (chunk.done) {
          handle(parser.end());
          break;
        }
        streamBytes += chunk.value.byteLength;
        if (streamBytes > MAX_STREAM_BYTES || parser.bufferedLength > MAX_STREAM_BYTES / 2) halt({ kind: "oversized" });
        const late = stopped(text);
        if (late) throw late;
        handle(parser.push(decoder.decode(chunk.value, { stream: true })));
        const after = stopped(text);
        if (after) throw after;
      }
    } catch (err) {
      http.abort();
      if (err instanceof StreamFormatError) throw new AgentError("tool_error", redact(err.message, secrets), false, text);
      throw err;
    }
    if (done) await reader.cancel().catch(() => {});
    else if (!finished) {
      throw new AgentError(
        "provider_network_error",
        `${protocol.provider} closed the stream before the answer was complete (after ${text.length} characters)`,
        true,
        text,
      );
    }
    const complete = usage.inputTokens !== undefined || usage.outputTokens !== undefined;
    const cached = cachedTokenFields(usage.cachedInputTokens ?? 0, usage.cacheCreationInputTokens ?? 0);
    return {
      text,
      ...(complete ? { usage: { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0, ...cached } } : {}),
    };
  } finally {
    release();
    clearDeadline();
    request.signal.removeEventListener("abort", onAbort);
    await released;
  }
}

function stopError(stop: Stop, partialOutput: string, provider: string, afterMs: number): Error {
  switch (stop.kind) {
    case "cancelled":
      return new AgentError("cancelled", `call to ${provider} cancelled; request aborted`, false, partialOutput);
    case "timeout":
      return new AgentError(
        "timeout",
        `${provider} did not finish before the deadline (${afterMs} ms); request aborted`,
        true,
        partialOutput,
      );
    case "oversized":
      return new AgentError(
        "tool_error",
        `output exceeded ${MAX_AGENT_OUTPUT_BYTES} bytes; request aborted`,
        false,
        partialOutput.slice(0, OVERSIZED_PARTIAL_CHARS),
      );
    case "chunk_failed":
      // The caller's own callback failed: hand its error back as it is.
      return stop.error instanceof Error ? stop.error : new Error(String(stop.error));
  }
}

/** The body as text, reading at most `maxBytes` (an error page can be anything). */
export async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  while (total < maxBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    total += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return Buffer.concat(parts).subarray(0, maxBytes).toString("utf8");
}
