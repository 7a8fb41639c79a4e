// The three CLI stream parsers, fed the REAL output of each CLI recorded in
// test/fixtures/shells/<cli>/ (see record.ts there), plus edge cases written by hand.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ClaudeStreamParser } from "../../server/agents/shells/claude";
import { CodexStreamParser } from "../../server/agents/shells/codex";
import { GeminiStreamParser } from "../../server/agents/shells/gemini";
import type { CliExit } from "../../server/agents/shells/run-cli";
import type { CliStreamParser } from "../../server/agents/shells/stream";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type AgentResponse, type ProviderRetryNotice } from "../../server/agents/types";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/shells");
const OK: CliExit = { exitCode: 0, signal: null, stderrTail: "" };
const FAILED: CliExit = { exitCode: 1, signal: null, stderrTail: "" };

type Shell = "claude" | "codex" | "gemini";

function parserFor(shell: Shell, onChunk?: (t: string) => void, secrets: string[] = []): CliStreamParser {
  if (shell === "claude") return new ClaudeStreamParser(onChunk, secrets);
  if (shell === "codex") return new CodexStreamParser(onChunk, secrets);
  return new GeminiStreamParser(onChunk, secrets);
}

function recording(shell: Shell, scenario: string): string[] {
  return fs
    .readFileSync(path.join(FIXTURES, shell, `${scenario}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
}

interface Replay {
  chunks: string[];
  response?: AgentResponse;
  error?: AgentError;
}

function replay(shell: Shell, lines: string[], exit: CliExit = OK, secrets: string[] = []): Replay {
  const chunks: string[] = [];
  const parser = parserFor(shell, (t) => chunks.push(t), secrets);
  try {
    for (const line of lines) parser.line(line);
    return { chunks, response: parser.finish(exit, `/usr/bin/${shell}`) };
  } catch (error) {
    if (!(error instanceof AgentError)) throw error;
    return { chunks, error };
  }
}

describe.each(["claude", "codex", "gemini"] as const)("%s stream parser on recorded output", (shell) => {
  it("an answer: the final text, the usage, and the text streamed to the live view", () => {
    const { response, chunks } = replay(shell, recording(shell, "answer"));
    // The model as the CLI's init event names it (Codex's stream names none).
    const model = { claude: { model: "claude-sonnet-4-5" }, codex: {}, gemini: { model: "gemini-2.5-flash" } }[shell];
    expect(response).toEqual({ text: "Hello from the stub.", usage: { inputTokens: 12, outputTokens: 7, ...model } });
    expect(chunks.join("")).toBe("Hello from the stub.");
    // Claude Code and Gemini CLI stream deltas; Codex reports the whole message.
    expect(chunks.length).toBe(shell === "codex" ? 1 : 3);
  });

  it("cached input tokens: the recorded result with its cache counts set is read into cachedInputTokens (and Claude Code's and Codex's cache writes)", () => {
    // The recorded lines, their cache fields (0 in the recording) set as a warm cache would report them.
    const warm = recording(shell, "answer").map((line) => {
      const event = JSON.parse(line) as { type: string; usage?: Record<string, unknown>; stats?: Record<string, unknown> };
      if (shell === "claude" && event.type === "result")
        event.usage = { ...event.usage, input_tokens: 12, cache_read_input_tokens: 800, cache_creation_input_tokens: 150 };
      if (shell === "codex" && event.type === "turn.completed")
        event.usage = { ...event.usage, input_tokens: 812, cached_input_tokens: 800, cache_write_input_tokens: 0 };
      if (shell === "gemini" && event.type === "result") event.stats = { ...event.stats, input_tokens: 812, cached: 800, input: 12 };
      return JSON.stringify(event);
    });
    const usage = replay(shell, warm).response?.usage;
    expect(usage).toMatchObject({ outputTokens: 7, cachedInputTokens: 800 });
    // Every CLI counts the cached tokens in its input (Claude Code: input + reads + writes).
    expect(usage?.inputTokens).toBe(shell === "claude" ? 962 : 812);
    if (shell === "claude") expect(usage?.cacheCreationInputTokens).toBe(150);
    else expect(usage).not.toHaveProperty("cacheCreationInputTokens");
    // The recording itself (a cold cache) reports none: the fields are left out, read as 0.
    expect(replay(shell, recording(shell, "answer")).response?.usage).not.toHaveProperty("cachedInputTokens");
  });

  it("a tool edit: the answer is what came after the tool; the tool shows in the live view", () => {
    const { response, chunks } = replay(shell, recording(shell, "tool-edit"));
    expect(response?.text).toBe("Wrote hello.txt.");
    expect(response?.usage?.outputTokens).toBeGreaterThan(0);
    expect(chunks.join("")).toMatch(/\n› (Write|edit \(add\)|write_file) \S*hello\.txt\n/);
  });

  it("a 401 is provider_auth_error, not retryable", () => {
    const { error } = replay(shell, recording(shell, "auth-401"), FAILED);
    expect(error).toMatchObject({ errorClass: "provider_auth_error", retryable: false });
    expect(error?.message).toMatch(new RegExp(`^${shell} reported an error`));
  });

  it("a 429 is provider_rate_limit, retryable", () => {
    const { error } = replay(shell, recording(shell, "rate-limit-429"), FAILED);
    expect(error).toMatchObject({ errorClass: "provider_rate_limit", retryable: true });
  });

  it("a dropped stream is provider_network_error, with the text that arrived kept", () => {
    const { error } = replay(shell, recording(shell, "disconnect"), FAILED);
    expect(error).toMatchObject({ errorClass: "provider_network_error", retryable: true });
    if (shell !== "codex") expect(error?.partialOutput).toContain("partial");
  });

  it("a stream cut before its result, exit 0, is a tool_error", () => {
    const lines = recording(shell, "answer");
    const { error } = replay(shell, lines.slice(0, -1));
    expect(error).toMatchObject({ errorClass: "tool_error", retryable: false });
    expect(error?.message).toMatch(/without a result event/);
  });

  it("output that is not JSON events, exit 0, is a tool_error quoting it", () => {
    const { error } = replay(shell, ["Welcome to the CLI!", "Please log in: https://example.invalid/login"]);
    expect(error).toMatchObject({ errorClass: "tool_error" });
    expect(error?.message).toContain("not the expected JSON event stream (2 unreadable lines");
    expect(error?.message).toContain("Welcome to the CLI!");
  });

  it("a non-zero exit without a result is command_failed with the end of stderr", () => {
    const { error } = replay(shell, recording(shell, "answer").slice(0, 1), {
      exitCode: 3,
      signal: null,
      stderrTail: "panic: something broke\nat main",
    });
    expect(error).toMatchObject({ errorClass: "command_failed", retryable: false });
    expect(error?.message).toContain(`/usr/bin/${shell} exited with code 3 without a result`);
    expect(error?.message).toContain("panic: something broke");
  });

  it("a process killed by a signal says so", () => {
    const { error } = replay(shell, [], { exitCode: null, signal: "SIGKILL", stderrTail: "" });
    expect(error).toMatchObject({ errorClass: "command_failed" });
    expect(error?.message).toMatch(/killed by SIGKILL/);
  });
});

describe("claude stream parser details", () => {
  const delta = (text: string, extra: object = {}) =>
    JSON.stringify({
      type: "stream_event",
      event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
      parent_tool_use_id: null,
      api_message_id: "msg_1",
      ...extra,
    });
  const result = (extra: object) =>
    JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "done",
      usage: { input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 3 },
      ...extra,
    });

  it("without partial messages, whole assistant messages stream; cache tokens count as input, and are kept apart as cached", () => {
    const assistant = JSON.stringify({
      type: "assistant",
      message: { id: "msg_9", content: [{ type: "text", text: "whole message" }] },
      parent_tool_use_id: null,
    });
    const { response, chunks } = replay("claude", [assistant, result({ result: "whole message" })]);
    expect(chunks).toEqual(["whole message"]);
    expect(response).toEqual({
      text: "whole message",
      usage: { inputTokens: 125, outputTokens: 3, cachedInputTokens: 100, cacheCreationInputTokens: 20 },
    });
  });

  it("a message already streamed as deltas is not repeated", () => {
    const assistant = JSON.stringify({
      type: "assistant",
      message: { id: "msg_1", content: [{ type: "text", text: "ab" }] },
      parent_tool_use_id: null,
    });
    expect(replay("claude", [delta("a"), delta("b"), assistant, result({ result: "ab" })]).chunks).toEqual(["a", "b"]);
  });

  it("a subagent's text is not the answer and does not stream", () => {
    const { chunks } = replay("claude", [delta("inner", { parent_tool_use_id: "toolu_1" }), delta("outer"), result({ result: "outer" })]);
    expect(chunks).toEqual(["outer"]);
  });

  it("an error result without an HTTP status is classified by its message; the key never shows", () => {
    const key = "sk-ant-api03-secretsecretsecret";
    const { error } = replay(
      "claude",
      [result({ is_error: true, subtype: "success", result: `Credit balance is too low for key ${key}` })],
      FAILED,
      [key],
    );
    expect(error).toMatchObject({ errorClass: "provider_auth_error" });
    expect(error?.message).not.toContain(key);
    expect(error?.message).toContain("[redacted]");
  });

  it("an error_max_turns result is a tool_error naming the subtype", () => {
    const { error } = replay(
      "claude",
      [JSON.stringify({ type: "result", subtype: "error_max_turns", is_error: true, num_turns: 30 })],
      FAILED,
    );
    expect(error).toMatchObject({ errorClass: "tool_error" });
    expect(error?.message).toContain("error_max_turns");
  });

  it("a retry notice is kept, to explain a timeout", () => {
    const parser = new ClaudeStreamParser(undefined);
    parser.line(
      JSON.stringify({ type: "system", subtype: "api_retry", attempt: 2, max_retries: 10, error_status: 529, error: "overloaded" }),
    );
    expect(parser.retryNotice()).toBe("overloaded (HTTP 529), attempt 2 of 10");
  });

  it("an answer beyond the size limit ends the run with a tool_error", () => {
    const parser = new ClaudeStreamParser(undefined);
    const block = "x".repeat(64 * 1024);
    expect(() => {
      for (let i = 0; i <= MAX_AGENT_OUTPUT_BYTES / block.length; i++) parser.line(delta(block));
    }).toThrow(/more than 1048576 bytes/);
  });
});

describe("codex stream parser details", () => {
  it("retries are notices; an error then a non-zero exit without turn.failed is classified by the error", () => {
    const parser = new CodexStreamParser(undefined);
    parser.line(JSON.stringify({ type: "error", message: "Reconnecting... 1/5 (stream disconnected before completion)" }));
    expect(parser.retryNotice()).toMatch(/^Reconnecting/);
    parser.line(JSON.stringify({ type: "error", message: "Missing environment variable: `OPENAI_API_KEY`." }));
    expect(() => parser.finish(FAILED, "codex")).toThrow(expect.objectContaining({ errorClass: "provider_auth_error" }));
  });

  it("several agent messages stream as paragraphs; the answer is the last", () => {
    const msg = (id: string, text: string) => JSON.stringify({ type: "item.completed", item: { id, type: "agent_message", text } });
    const { response, chunks } = replay("codex", [
      msg("a", "Looking."),
      msg("b", "Done."),
      JSON.stringify({ type: "turn.completed", usage: { input_tokens: 3, output_tokens: 2 } }),
    ]);
    expect(chunks).toEqual(["Looking.", "\n\nDone."]);
    expect(response).toEqual({ text: "Done.", usage: { inputTokens: 3, outputTokens: 2 } });
  });

  it("commands show in the live view as they start", () => {
    const started = JSON.stringify({
      type: "item.started",
      item: { id: "c", type: "command_execution", command: "/bin/bash -lc 'npm test'", status: "in_progress" },
    });
    expect(replay("codex", [started]).chunks).toEqual(["\n› shell /bin/bash -lc 'npm test'\n"]);
  });
});

describe("gemini stream parser details", () => {
  it("the answer is the text after the last tool call, or all text when nothing followed it", () => {
    const msg = (content: string) => JSON.stringify({ type: "message", role: "assistant", content, delta: true });
    const tool = JSON.stringify({ type: "tool_use", tool_name: "read_file", tool_id: "t1", parameters: { file_path: "a.txt" } });
    const ok = JSON.stringify({ type: "result", status: "success", stats: { input_tokens: 1, output_tokens: 2 } });
    expect(replay("gemini", [msg("Reading. "), tool, msg("It says hi."), ok]).response?.text).toBe("It says hi.");
    expect(replay("gemini", [msg("Reading. "), tool, ok]).response?.text).toBe("Reading. ");
  });

  it("its own retries, reported on stderr only, are retry notices: with the wait when it states one, across writes and lines", () => {
    const notices: ProviderRetryNotice[] = [];
    const parser = new GeminiStreamParser(undefined, ["key-123"], { onRetry: (n) => notices.push(n), maxRetries: 3 });
    parser.stderr("Ripgrep is not available. Falling back to GrepTool.\nAttempt 1 failed: Number of requests has exceeded");
    expect(notices).toEqual([]); // not whole yet
    parser.stderr(" your rate limit (key-123)\nSuggested retry after 3s.. Retrying after 3412ms...\n");
    parser.stderr('Attempt 2 failed with status 503. Retrying with backoff... _ApiError: {"error":{"code":503}}\n    at x (y.js:1:1)\n');
    expect(notices).toEqual([
      {
        retry: 1,
        maxRetries: 3,
        delayMs: 3412,
        error: "Number of requests has exceeded your rate limit ([redacted]) Suggested retry after 3s.",
      },
      { retry: 2, maxRetries: 3, delayMs: null, error: "with status 503" },
    ]);
    expect(parser.retryNotice()).toBe("attempt 2 failed: with status 503");
  });
});
