// The pure parts of HTTP brains: event-stream parsing, provider event reading, error
// classification, Retry-After, redaction, the chat sent, and the brain configuration.
import { describe, expect, it } from "vitest";
import { ZAgentConfig } from "../../server/agents/config";
import { anthropicProtocol } from "../../server/brains/anthropic";
import { conversationFor } from "../../server/brains/conversation";
import { httpError, redact, retryAfterMs } from "../../server/brains/errors";
import { openaiProtocol } from "../../server/brains/openai";
import { apiUrl, StreamFormatError } from "../../server/brains/protocol";
import { SseParser, type SseEvent } from "../../server/brains/sse";

function parseInPieces(text: string, pieceLength: number): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  for (let i = 0; i < text.length; i += pieceLength) events.push(...parser.push(text.slice(i, i + pieceLength)));
  return [...events, ...parser.end()];
}

describe("SseParser", () => {
  const stream =
    'event: a\ndata: {"x":1}\n\n: a comment\n\ndata: first line\ndata:second line\r\n\r\nevent: b\r\ndata: crlf\r\rdata: cr only\r\r';
  const expected: SseEvent[] = [
    { event: "a", data: '{"x":1}' },
    { event: "message", data: "first line\nsecond line" },
    { event: "b", data: "crlf" },
    { event: "message", data: "cr only" },
  ];

  it("gives the same events whatever the chunk boundaries (every piece length)", () => {
    for (let piece = 1; piece <= stream.length; piece++) expect(parseInPieces(stream, piece), `pieces of ${piece}`).toEqual(expected);
  });

  it("drops an event whose blank line never came, and events without data", () => {
    expect(parseInPieces("event: ping\n\ndata: complete\n\ndata: cut off", 4)).toEqual([{ event: "message", data: "complete" }]);
  });
});

describe("reading provider events", () => {
  const ev = (data: unknown, event = "message"): SseEvent => ({ event, data: typeof data === "string" ? data : JSON.stringify(data) });

  it("OpenAI: deltas, finish reason, a usage chunk with null choices (vLLM), [DONE], and errors", () => {
    expect(openaiProtocol.read(ev({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: null }] }))).toEqual([
      { kind: "text", text: "hi" },
    ]);
    expect(openaiProtocol.read(ev({ choices: [{ index: 0, delta: {}, finish_reason: "length" }] }))).toEqual([{ kind: "finished" }]);
    expect(openaiProtocol.read(ev({ choices: null, usage: { prompt_tokens: 3, completion_tokens: 4 } }))).toEqual([
      { kind: "usage", inputTokens: 3, outputTokens: 4 },
    ]);
    expect(openaiProtocol.read(ev("[DONE]"))).toEqual([{ kind: "done" }]);
    expect(openaiProtocol.read(ev({ error: { message: "boom", type: "server_error" } }))).toEqual([
      { kind: "error", detail: { message: "boom", code: "server_error", detailCode: null } },
    ]);
    expect(() => openaiProtocol.read(ev("{nope"))).toThrow(StreamFormatError);
    expect(() => openaiProtocol.read(ev({ choices: "many" }))).toThrow(StreamFormatError);
  });

  it("Anthropic: text deltas only (not thinking), usage from start and delta, stop, error, unknown events ignored", () => {
    expect(
      anthropicProtocol.read(
        ev({ type: "message_start", message: { usage: { input_tokens: 7, cache_read_input_tokens: 3, output_tokens: 1 } } }),
      ),
    ).toEqual([{ kind: "usage", inputTokens: 10, outputTokens: 1, cachedInputTokens: 3 }]);
    expect(anthropicProtocol.read(ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "yo" } }))).toEqual([
      { kind: "text", text: "yo" },
    ]);
    expect(
      anthropicProtocol.read(ev({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } })),
    ).toEqual([]);
    expect(anthropicProtocol.read(ev({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } }))).toEqual([
      { kind: "usage", inputTokens: undefined, outputTokens: 9 },
      { kind: "finished" },
    ]);
    expect(anthropicProtocol.read(ev({ type: "message_stop" }))).toEqual([{ kind: "done" }]);
    expect(anthropicProtocol.read(ev({ type: "a_future_event" }))).toEqual([]);
    expect(anthropicProtocol.read(ev({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }))[0]).toMatchObject({
      kind: "error",
      detail: { code: "overloaded_error" },
    });
    expect(() => anthropicProtocol.read(ev({ type: "content_block_delta", delta: "text" }))).toThrow(StreamFormatError);
  });
});

describe("httpError", () => {
  const classify = (status: number, body = "", headers: Record<string, string> = {}) => {
    const e = httpError({ provider: "P", status, headers: new Headers(headers), body, secrets: ["s3cr3t-key"] });
    return [e.errorClass, e.retryable, e.retryAfterMs] as const;
  };

  it("maps statuses onto the taxonomy", () => {
    expect(classify(401)).toEqual(["provider_auth_error", false, undefined]);
    expect(classify(403)).toEqual(["provider_auth_error", false, undefined]);
    expect(classify(402)).toEqual(["provider_auth_error", false, undefined]);
    expect(classify(404)).toEqual(["provider_auth_error", false, undefined]);
    expect(classify(429, "", { "retry-after": "7" })).toEqual(["provider_rate_limit", true, 7000]);
    expect(classify(429, JSON.stringify({ error: { code: "insufficient_quota", message: "quota" } }))).toEqual([
      "provider_rate_limit",
      false,
      undefined,
    ]);
    expect(classify(500)).toEqual(["provider_network_error", true, undefined]);
    expect(classify(503, "", { "retry-after": "3" })).toEqual(["provider_network_error", true, 3000]);
    // Overloaded means "come back later": a rate limit, as for the CLI shells (provider-failures.unit.test.ts).
    expect(classify(529)).toEqual(["provider_rate_limit", true, undefined]);
    expect(classify(408)).toEqual(["provider_network_error", true, undefined]);
    expect(classify(400)).toEqual(["tool_error", false, undefined]);
    expect(classify(422)).toEqual(["tool_error", false, undefined]);
    expect(classify(301)).toEqual(["tool_error", false, undefined]);
  });

  it("quotes the provider's message (Ollama's plain string too), redacted and shortened", () => {
    const e = httpError({
      provider: "P",
      status: 400,
      headers: new Headers(),
      body: JSON.stringify({ error: `bad key s3cr3t-key ${"x".repeat(1000)}` }),
      secrets: ["s3cr3t-key"],
    });
    expect(e.message).toContain("bad key [redacted]");
    expect(e.message).not.toContain("s3cr3t-key");
    expect(e.message.length).toBeLessThan(450);
  });
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const h = (headers: Record<string, string>) => retryAfterMs(new Headers(headers), now);

  it("reads seconds, an HTTP date and OpenAI's retry-after-ms; caps; ignores garbage", () => {
    expect(h({ "retry-after": "2" })).toBe(2000);
    expect(h({ "retry-after": "1.5" })).toBe(1500);
    expect(h({ "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" })).toBe(30_000);
    expect(h({ "retry-after": "Wed, 31 Dec 2025 23:00:00 GMT" })).toBe(0);
    expect(h({ "retry-after-ms": "250", "retry-after": "9" })).toBe(250);
    expect(h({ "retry-after": "999999" })).toBe(3_600_000);
    expect(h({ "retry-after": "soon" })).toBeUndefined();
    expect(h({})).toBeUndefined();
  });
});

describe("redact", () => {
  it("removes the secrets and anything shaped like a provider key", () => {
    expect(redact("key abc123xyz and sk-proj-AbCdEf123456 and sk-ant-api03-xyz_789 end", ["abc123xyz"])).toBe(
      "key [redacted] and [redacted] and [redacted] end",
    );
    expect(redact("nothing here", [""])).toBe("nothing here");
  });
});

describe("conversationFor", () => {
  it("labels other speakers, makes this role's own earlier turns assistant turns, merges runs and opens with the user", () => {
    expect(
      conversationFor({
        role: "coder",
        prompt: "Build it.",
        context: [
          { from: "coder", text: "My proposal." },
          { from: "reviewer", text: "Looks fine." },
          { from: "tester", text: "Add a test." },
          { from: "operator", text: "" },
        ],
      }),
    ).toEqual([
      { role: "user", content: "(The conversation so far.)" },
      { role: "assistant", content: "My proposal." },
      { role: "user", content: "[reviewer] Looks fine.\n\n[tester] Add a test.\n\nBuild it.", threadEndChars: 44 },
    ]);
  });

  it("says where the stable part and the thread end (cache markers go there); no thread, no thread end", () => {
    const turns = conversationFor({
      role: "coder",
      prompt: "Task: T.\nBuild it.",
      promptStableChars: 9,
      context: [
        { from: "reviewer", text: "Looks fine." },
        { from: "coder", text: "Noted." },
      ],
    });
    expect(turns).toEqual([
      { role: "user", content: "Task: T.\n\n\n[reviewer] Looks fine.", stableChars: 9 },
      { role: "assistant", content: "Noted.", threadEndChars: 6 },
      { role: "user", content: "Build it." },
    ]);
    expect(conversationFor({ role: "coder", prompt: "Task: T.\nBuild it.", promptStableChars: 9, context: [] })).toEqual([
      { role: "user", content: "Task: T.\n\n\nBuild it.", stableChars: 9 },
    ]);
  });
});

describe("brain configuration", () => {
  const parse = (c: Record<string, unknown>) => ZAgentConfig.safeParse({ id: "b", model: "m", ...c });

  it("applies defaults: endpoint, one call per 2 s", () => {
    const openai = parse({ kind: "openai" });
    expect(openai.success && openai.data).toMatchObject({ baseUrl: "https://api.openai.com/v1", rateLimit: { minIntervalMs: 2000 } });
    const anthropic = parse({ kind: "anthropic", baseUrl: "http://localhost:8080/" });
    expect(anthropic.success && anthropic.data).toMatchObject({ baseUrl: "http://localhost:8080", rateLimit: { minIntervalMs: 2000 } });
  });

  it("refuses credentials in the URL, other schemes, runner secrets as key variables, and unknown fields", () => {
    const problems = (c: Record<string, unknown>) => {
      const r = parse(c);
      return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    };
    expect(problems({ kind: "openai", baseUrl: "http://user:pw@host/v1" }).join()).toMatch(/baseUrl: must not contain credentials/);
    expect(problems({ kind: "openai", baseUrl: "file:///etc/passwd" }).join()).toMatch(/baseUrl/);
    expect(problems({ kind: "anthropic", apiKeyEnv: "DATABASE_URL" }).join()).toMatch(/apiKeyEnv: must not be one of the runner's secrets/);
    expect(problems({ kind: "anthropic", apiKey: "sk-inline" }).join()).toMatch(/apiKey/);
    expect(problems({ kind: "anthropic", temperature: 1.5 }).join()).toMatch(/temperature/);
    expect(problems({ kind: "openai", temperature: 1.5, rateLimit: { minIntervalMs: 0 } })).toEqual([]);
  });

  it("finds the endpoint with or without /v1 in baseUrl", () => {
    expect(apiUrl("http://h:11434/v1", "/chat/completions")).toBe("http://h:11434/v1/chat/completions");
    expect(apiUrl("http://h:8000", "/chat/completions")).toBe("http://h:8000/v1/chat/completions");
    expect(anthropicProtocol.modelsUrl("https://api.anthropic.com", "claude x")).toBe("https://api.anthropic.com/v1/models/claude%20x");
  });
});
