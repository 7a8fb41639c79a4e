// What differs between providers, behind one small interface: where to call, which headers
// carry the key, the request body, and what each streamed event means. The HTTP streaming,
// limits and failure handling are shared (call.ts).
import type { ChatRequest } from "./conversation";
import type { ProviderErrorDetail } from "./errors";
import type { SseEvent } from "./sse";

/** What one streamed event means for the answer. */
export type StreamSignal =
  | { kind: "text"; text: string }
  /** inputTokens counts every input token; the cached ones are part of it. */
  | { kind: "usage"; inputTokens?: number; outputTokens?: number; cachedInputTokens?: number; cacheCreationInputTokens?: number }
  /** The model stopped (a stop or finish reason); usage or an end marker may still follow. */
  | { kind: "finished" }
  /** The end marker: nothing more will come. */
  | { kind: "done" }
  | { kind: "error"; detail: ProviderErrorDetail };

/** The stream carried something that is not the provider's format (invalid JSON, wrong shape). */
export class StreamFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamFormatError";
  }
}

/** The model parameters a request carries (a brain agent's configuration has them all). */
export interface BrainParams {
  model: string;
  temperature?: number;
  maxTokens?: number;
  systemPrompt?: string;
}

export interface BrainProtocol {
  /** Names the provider in messages. */
  readonly provider: string;
  /** Its `gen_ai.provider.name` in traces (the OpenTelemetry GenAI conventions). */
  readonly genAiProvider: "openai" | "anthropic";
  /** The streaming endpoint under `baseUrl`. */
  callUrl(baseUrl: string): string;
  /** Where `checkBrain` looks the model up. */
  modelsUrl(baseUrl: string, model: string): string;
  /** Request headers; the key goes here and nowhere else. */
  headers(apiKey: string | undefined): Record<string, string>;
  requestBody(params: BrainParams, request: ChatRequest): unknown;
  /** Reads one event; throws StreamFormatError when it is not the provider's format. */
  read(event: SseEvent): StreamSignal[];
}

/** `path` (e.g. "/chat/completions") under the API root, whether or not baseUrl already ends in /v1. */
export function apiUrl(baseUrl: string, path: string): string {
  const root = baseUrl.replace(/\/+$/, "");
  return /\/v1$/.test(root) ? `${root}${path}` : `${root}/v1${path}`;
}

/** The JSON of an event's data, or a StreamFormatError naming what arrived. */
export function parseEventJson(provider: string, event: SseEvent): unknown {
  try {
    return JSON.parse(event.data);
  } catch {
    const sample = event.data.length > 80 ? `${event.data.slice(0, 80)}…` : event.data;
    throw new StreamFormatError(`${provider} streamed invalid JSON in a "${event.event}" event: ${JSON.stringify(sample)}`);
  }
}
