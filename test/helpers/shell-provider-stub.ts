// A local stand-in for a model provider's HTTP API, for running the real agent CLIs
// (Claude Code, Codex, Gemini CLI) against it: the Anthropic Messages API (SSE), the
// OpenAI Responses API (SSE) and the Gemini API (streamGenerateContent, SSE). It plays a
// script of turns, one per model request (the last repeats): streamed text, a tool call,
// an HTTP error, a connection dropped mid-stream or before any answer, or no answer at all (as one JSON answer
// when a request does not ask to stream); and records every request it received.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type ProviderApi = "anthropic" | "openai" | "gemini";

export type StubTurn =
  /** A streamed answer, one SSE event per chunk. */
  | { kind: "text"; chunks: string[] }
  /** A call of the CLI's own tool (Write, exec_command, write_file...), after optional text. */
  | { kind: "tool"; name: string; input: Record<string, unknown>; text?: string }
  /** An HTTP error; the body defaults to the provider's own error shape for the status. */
  | { kind: "error"; status: number; message?: string; headers?: Record<string, string> }
  /** Starts streaming the chunks, then destroys the socket before the stream is complete. */
  | { kind: "disconnect"; chunks: string[] }
  /** Destroys the connection before answering anything. */
  | { kind: "reset" }
  /** Accepts the request and never answers. */
  | { kind: "hang" };

export interface StubRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  /** When it arrived (epoch ms): to measure the waits between calls. */
  at: number;
}

export interface ProviderStub {
  /** What the CLI's base-URL setting should be (with /v1 for the OpenAI API). */
  baseUrl: string;
  /** Every request, model requests and others alike. */
  requests: StubRequest[];
  /** The model requests only (the ones that played a turn). */
  modelRequests(): StubRequest[];
  close(): Promise<void>;
}

const USAGE = { input: 12, output: 7 };

function isModelRequest(api: ProviderApi, method: string, url: string): boolean {
  if (method !== "POST") return false;
  if (api === "anthropic") return url.startsWith("/v1/messages") && !url.startsWith("/v1/messages/count_tokens");
  if (api === "openai") return url.startsWith("/v1/responses");
  return /:(?:stream)?[gG]enerateContent/.test(url);
}

/** Whether the request asks for server-sent events (Claude Code falls back to a plain request after a failed stream). */
function wantsStream(api: ProviderApi, url: string, body: unknown): boolean {
  if (api === "gemini") return url.includes(":streamGenerateContent");
  return typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true;
}

/**
 * The provider's own error shape for `status`. Google's API says how long to wait in the body
 * (a google.rpc.RetryInfo detail), not in a Retry-After header: a Gemini error given a
 * Retry-After carries it both ways.
 */
function errorBody(api: ProviderApi, status: number, message: string, retryAfter?: string): unknown {
  if (api === "anthropic") {
    const type =
      status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : "api_error";
    return { type: "error", error: { type, message } };
  }
  if (api === "openai") return { error: { message, type: status === 429 ? "rate_limit_exceeded" : "invalid_request_error", code: null } };
  const grpcStatus = status === 401 ? "UNAUTHENTICATED" : status === 429 ? "RESOURCE_EXHAUSTED" : "INTERNAL";
  const details = retryAfter ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${retryAfter}s` }] : undefined;
  return { error: { code: status, message, status: grpcStatus, ...(details ? { details } : {}) } };
}

function defaultMessage(status: number): string {
  if (status === 401) return "invalid x-api-key";
  if (status === 429) return "Number of requests has exceeded your rate limit";
  return "internal server error";
}

/** Writes a turn as the provider's server-sent events; `drop` ends with a destroyed socket instead. */
function streamTurn(
  api: ProviderApi,
  turn: Extract<StubTurn, { kind: "text" | "tool" | "disconnect" }>,
  res: http.ServerResponse,
  n: number,
  model: string,
): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunks = turn.kind === "tool" ? (turn.text ? [turn.text] : []) : turn.chunks;
  const tool = turn.kind === "tool" ? turn : null;
  const drop = turn.kind === "disconnect";
  const finish = () => {
    if (drop) setTimeout(() => res.socket?.destroy(), 20);
    else res.end();
  };

  if (api === "anthropic") {
    const send = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send("message_start", {
      message: {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: USAGE.input, output_tokens: 1 },
      },
    });
    let index = 0;
    if (chunks.length) {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of chunks) send("content_block_delta", { index, delta: { type: "text_delta", text } });
      if (drop) return finish();
      send("content_block_stop", { index });
      index++;
    }
    if (tool) {
      send("content_block_start", { index, content_block: { type: "tool_use", id: `toolu_${n}`, name: tool.name, input: {} } });
      send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(tool.input) } });
      send("content_block_stop", { index });
    }
    if (drop) return finish();
    send("message_delta", {
      delta: { stop_reason: tool ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: USAGE.output },
    });
    send("message_stop", {});
    return finish();
  }

  if (api === "openai") {
    const send = (data: { type: string } & Record<string, unknown>) => res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
    send({ type: "response.created", response: { id: `resp_${n}`, status: "in_progress" } });
    let outputIndex = 0;
    if (chunks.length) {
      const item = { type: "message", id: `msg_${n}`, role: "assistant", status: "in_progress", content: [] };
      send({ type: "response.output_item.added", output_index: outputIndex, item });
      for (const delta of chunks)
        send({ type: "response.output_text.delta", item_id: item.id, output_index: outputIndex, content_index: 0, delta });
      if (drop) return finish();
      send({
        type: "response.output_item.done",
        output_index: outputIndex,
        item: { ...item, status: "completed", content: [{ type: "output_text", text: chunks.join(""), annotations: [] }] },
      });
      outputIndex++;
    }
    if (tool) {
      const item = {
        type: "function_call",
        id: `fc_${n}`,
        call_id: `call_${n}`,
        name: tool.name,
        arguments: JSON.stringify(tool.input),
        status: "completed",
      };
      send({ type: "response.output_item.added", output_index: outputIndex, item });
      send({ type: "response.output_item.done", output_index: outputIndex, item });
    }
    if (drop) return finish();
    send({
      type: "response.completed",
      response: {
        id: `resp_${n}`,
        status: "completed",
        usage: {
          input_tokens: USAGE.input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: USAGE.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: USAGE.input + USAGE.output,
        },
      },
    });
    return finish();
  }

  const send = (data: object) => res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
  const usageMetadata = { promptTokenCount: USAGE.input, candidatesTokenCount: USAGE.output, totalTokenCount: USAGE.input + USAGE.output };
  chunks.forEach((text, i) => {
    const last = !tool && !drop && i === chunks.length - 1;
    send({
      candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
      ...(last ? { usageMetadata } : {}),
      modelVersion: model,
    });
  });
  if (drop) return finish();
  if (tool)
    send({
      candidates: [
        { content: { role: "model", parts: [{ functionCall: { name: tool.name, args: tool.input } }] }, finishReason: "STOP", index: 0 },
      ],
      usageMetadata,
      modelVersion: model,
    });
  if (!tool && chunks.length === 0)
    send({ candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP", index: 0 }], usageMetadata });
  return finish();
}

/** A turn as one JSON response, for a model request that did not ask to stream. */
function answerWhole(
  api: ProviderApi,
  turn: Extract<StubTurn, { kind: "text" | "tool" | "disconnect" }>,
  res: http.ServerResponse,
  n: number,
  model: string,
): void {
  if (turn.kind === "disconnect") {
    res.socket?.destroy();
    return;
  }
  const text = turn.kind === "tool" ? turn.text : turn.chunks.join("");
  const tool = turn.kind === "tool" ? turn : null;
  let body: unknown;
  if (api === "anthropic") {
    const content = [
      ...(text ? [{ type: "text", text }] : []),
      ...(tool ? [{ type: "tool_use", id: `toolu_${n}`, name: tool.name, input: tool.input }] : []),
    ];
    body = {
      id: `msg_${n}`,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: tool ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: USAGE.input, output_tokens: USAGE.output },
    };
  } else if (api === "gemini") {
    const parts = [...(text ? [{ text }] : []), ...(tool ? [{ functionCall: { name: tool.name, args: tool.input } }] : [])];
    body = {
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: USAGE.input, candidatesTokenCount: USAGE.output, totalTokenCount: USAGE.input + USAGE.output },
    };
  } else {
    const output = [
      ...(text
        ? [
            {
              type: "message",
              id: `msg_${n}`,
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text, annotations: [] }],
            },
          ]
        : []),
      ...(tool
        ? [
            {
              type: "function_call",
              id: `fc_${n}`,
              call_id: `call_${n}`,
              name: tool.name,
              arguments: JSON.stringify(tool.input),
              status: "completed",
            },
          ]
        : []),
    ];
    body = {
      id: `resp_${n}`,
      status: "completed",
      output,
      usage: { input_tokens: USAGE.input, output_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output },
    };
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export async function startProviderStub(api: ProviderApi, turns: StubTurn[]): Promise<ProviderStub> {
  if (turns.length === 0) throw new Error("a stub needs at least one turn");
  const requests: StubRequest[] = [];
  const models: StubRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const arrivedAt = Date.now();
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => {
      const raw = Buffer.concat(parts).toString("utf8");
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        // not JSON: kept as text
      }
      const recorded: StubRequest = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body, at: arrivedAt };
      requests.push(recorded);
      if (!isModelRequest(api, recorded.method, recorded.url)) {
        // A health probe or the like: not a turn.
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      const n = models.push(recorded);
      const turn = turns[Math.min(n - 1, turns.length - 1)]!;
      const model = typeof (body as { model?: unknown })?.model === "string" ? (body as { model: string }).model : "stub-model";
      switch (turn.kind) {
        case "hang":
          return;
        case "reset":
          req.socket.destroy();
          return;
        case "error":
          res.writeHead(turn.status, { "content-type": "application/json", ...turn.headers });
          res.end(JSON.stringify(errorBody(api, turn.status, turn.message ?? defaultMessage(turn.status), turn.headers?.["retry-after"])));
          return;
        default:
          if (wantsStream(api, recorded.url, body)) streamTurn(api, turn, res, n, model);
          else answerWhole(api, turn, res, n, model);
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: api === "openai" ? `${origin}/v1` : origin,
    requests,
    modelRequests: () => [...models],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
