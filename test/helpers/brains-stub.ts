// A stand-in model provider for brain tests: a node:http server on 127.0.0.1 that records
// every request (headers, body, arrival and close times) and answers through a handler the
// test supplies, plus the streaming formats of both providers, written out by hand.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export interface StubRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** performance.timeOrigin + performance.now() when the request arrived (ms, comparable across processes). */
  arrivedAt: number;
  /** When the connection or response closed, if it has. */
  closedAt: number | null;
}

/** May return a promise; a rejection answers 599 with the error. */
export type StubHandler = (req: StubRequest, res: http.ServerResponse) => unknown;

export interface BrainStub {
  url: string;
  requests: StubRequest[];
  /** Replaces the handler for later requests. */
  handle(handler: StubHandler): void;
  close(): Promise<void>;
}

export const wallClock = () => performance.timeOrigin + performance.now();

/**
 * The stub's host as an admin allows it (access.privateHosts, docs/configuration.md
 * "Outbound calls"): a brain on 127.0.0.1 is called only with this allowance. `stubAccess`
 * is a project's settings override giving it; `STUB_PRIVATE_HOSTS` is what a runner hands
 * a brain call, or a check is given, when it is in force.
 */
export const STUB_PRIVATE_HOSTS: readonly string[] = ["127.0.0.1"];
export const stubAccess = { access: { privateHosts: [...STUB_PRIVATE_HOSTS] } };

export async function startBrainStub(handler: StubHandler = () => {}): Promise<BrainStub> {
  let current = handler;
  const requests: StubRequest[] = [];
  const server = http.createServer((req, res) => {
    const record: StubRequest = {
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: "",
      arrivedAt: wallClock(),
      closedAt: null,
    };
    requests.push(record);
    res.on("close", () => (record.closedAt ??= wallClock()));
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      record.body = Buffer.concat(parts).toString("utf8");
      Promise.resolve(current(record, res)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(599);
        res.end(String(err));
      });
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (h) => (current = h),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// --- streaming formats ------------------------------------------------------------------

export interface Usage {
  /** Every input token, the cached ones included (OpenAI's prompt_tokens; Anthropic's three input counts added up). */
  input: number;
  output: number;
  /** Of `input`, read from the prompt cache: OpenAI's prompt_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens. */
  cached?: number;
  /** Of `input`, written to the prompt cache: Anthropic's cache_creation_input_tokens. */
  cacheWrite?: number;
}

export type Provider = "openai" | "anthropic";

/** The SSE text of a whole streamed answer (one event per chunk), ending as the provider ends it. */
export function streamOf(provider: Provider, chunks: string[], usage?: Usage): string[] {
  return provider === "openai" ? openaiStream(chunks, usage) : anthropicStream(chunks, usage);
}

/** SSE events carrying `chunks`, without any ending (for streams cut short). */
export function deltasOf(provider: Provider, chunks: string[]): string[] {
  return provider === "openai" ? chunks.map(openaiDelta) : chunks.map(anthropicDelta);
}

export function openaiDelta(text: string): string {
  return `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "stub", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
}

function openaiStream(chunks: string[], usage?: Usage): string[] {
  const events = [
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "stub", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`,
    ...chunks.map(openaiDelta),
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "stub", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
  ];
  if (usage) {
    events.push(
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "stub", choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output, ...(usage.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached, audio_tokens: 0 } }) } })}\n\n`,
    );
  }
  events.push("data: [DONE]\n\n");
  return events;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export function anthropicDelta(text: string): string {
  return sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
}

function anthropicStream(chunks: string[], usage?: Usage): string[] {
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        content: [],
        model: "stub",
        stop_reason: null,
        usage: {
          input_tokens: (usage?.input ?? 0) - (usage?.cached ?? 0) - (usage?.cacheWrite ?? 0),
          cache_creation_input_tokens: usage?.cacheWrite ?? 0,
          cache_read_input_tokens: usage?.cached ?? 0,
          output_tokens: 1,
        },
      },
    }),
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ": keep-alive comment\n\n",
    sse("ping", { type: "ping" }),
    ...chunks.map(anthropicDelta),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: usage?.output ?? 0 },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

export function startEventStream(res: http.ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
}

/**
 * Writes `events` in pieces of `pieceBytes` bytes (splitting lines, and CRLFs, anywhere),
 * pausing `delayMs` between pieces; ends the response unless `end` is false.
 */
export async function writeStream(
  res: http.ServerResponse,
  events: string[],
  options: { pieceBytes?: number; delayMs?: number; end?: boolean } = {},
): Promise<void> {
  const bytes = Buffer.from(events.join(""));
  const piece = options.pieceBytes ?? bytes.length;
  for (let at = 0; at < bytes.length; at += piece) {
    if (res.destroyed) return;
    res.write(bytes.subarray(at, at + piece));
    if (options.delayMs) await sleep(options.delayMs);
  }
  if (options.end !== false) res.end();
}

/** Answers with a JSON error body in the provider's shape. */
export function sendError(
  res: http.ServerResponse,
  provider: Provider,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code?: string,
): void {
  const body =
    provider === "openai"
      ? { error: { message, type: "invalid_request_error", code: code ?? null } }
      : {
          type: "error",
          error: { type: code ?? (status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : "api_error"), message },
        };
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
