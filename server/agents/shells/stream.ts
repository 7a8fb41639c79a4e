// What the three CLI parsers share: one JSON event per stdout line in, text for the live
// view out, and at the end one verdict from the last events and the exit status: the
// answer, the failure the CLI reported (classified), a crash (command_failed with the end
// of stderr), or output we could not read (tool_error).
import type { AgentToolCalls, ProviderRetryNotice } from "../../agent-calls";
import { redact } from "../../brains/errors";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type AgentResponse, type AgentUsage } from "../types";
import { cliFailureError, type CliFailure } from "./failures";
import type { CliExit, CliObserver } from "./run-cli";

export type JsonObject = Record<string, unknown>;

/** How the event stream ended, as far as the CLI's own events tell. */
export type StreamOutcome =
  { kind: "answer"; text: string; usage?: AgentUsage } | { kind: "failed"; failure: CliFailure } | { kind: "none" };

const TOOL_DETAIL_CHARS = 160;
const QUOTED_LINE_CHARS = 200;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** One line saying which tool a CLI used on what (a path, a command), for the live view. */
export function toolLine(name: string, input: unknown): string {
  const fields = isObject(input) ? input : {};
  const detail = [fields.file_path, fields.path, fields.command, fields.cmd, fields.pattern, fields.url].find(
    (v) => typeof v === "string",
  ) as string | undefined;
  const shown = detail ? ` ${detail.replace(/\s+/g, " ").slice(0, TOOL_DETAIL_CHARS)}` : "";
  return `\n› ${name}${shown}\n`;
}

/** What the runner wants to hear from a parser besides the text. */
export interface ParserHooks {
  /** The CLI is retrying its provider request (recorded as ProviderRetried). */
  onRetry?: (notice: ProviderRetryNotice) => void;
  /**
   * The retries the CLI may make (providerRetries). One more is not waited for: the run ends
   * with the failure the CLI reports (Codex waits for the network without end otherwise).
   */
  maxRetries?: number;
  /** The provider has answered something (text, a tool call, a retry notice). */
  onProgress?: () => void;
}

export abstract class CliStreamParser implements CliObserver {
  protected abstract readonly shell: string;
  private streamed = "";
  private streamedBytes = 0;
  private unparseable = 0;
  private firstUnparseable = "";
  /** A provider error the CLI said it is retrying. */
  protected notice: string | undefined;
  /** The last non-fatal error event: the explanation when the CLI then exits without a result. */
  protected lastError: CliFailure | undefined;
  /** The CLI's tool calls that finished, and which failed (a sandbox that refuses every command shows here). */
  private readonly tools: AgentToolCalls = { calls: 0, failed: 0 };

  private retries = 0;
  private lastRetryAt: number | undefined;
  /** How long the provider asked to wait (a CLI's reported retry delay, or the wait it was seen to make). */
  private retryAfterMs: number | undefined;

  constructor(
    private readonly onChunk: ((text: string) => void) | undefined,
    /** Values (API keys) that must never appear in an error message. */
    protected readonly secrets: readonly string[] = [],
    private readonly hooks: ParserHooks = {},
  ) {}

  /**
   * The CLI said it is retrying after `failure` (waiting `delayMs` first, when it says). Told
   * to the runner; past the allowed retries the run ends here with that failure.
   */
  protected retried(failure: CliFailure, delayMs?: number): void {
    this.retries++;
    this.lastRetryAt = Date.now();
    if (delayMs !== undefined) this.retryAfterMs = delayMs;
    const error = redact(failure.message, this.secrets).slice(0, QUOTED_LINE_CHARS);
    this.hooks.onRetry?.({ retry: this.retries, maxRetries: this.hooks.maxRetries ?? null, delayMs: delayMs ?? null, error });
    const allowed = this.hooks.maxRetries;
    if (allowed !== undefined && this.retries > allowed) {
      const gaveUp = { ...failure, message: `gave up after ${allowed} retr${allowed === 1 ? "y" : "ies"}: ${failure.message}` };
      throw cliFailureError(this.shell, gaveUp, this.streamed, this.secrets, this.retryAfterMs);
    }
  }

  /** The CLI reported a failure after a retry: the time it waited is at least what the provider asked. */
  protected failedAfterRetry(): void {
    if (this.lastRetryAt !== undefined && this.retryAfterMs === undefined) this.retryAfterMs = Date.now() - this.lastRetryAt;
  }

  /** Handles one parsed event. */
  protected abstract event(event: JsonObject): void;
  /** The outcome the events so far describe. */
  protected abstract outcome(): StreamOutcome;

  line(line: string): void {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      event = undefined;
    }
    if (!isObject(event)) {
      if (this.unparseable++ === 0) this.firstUnparseable = line.slice(0, QUOTED_LINE_CHARS);
      return;
    }
    this.event(event);
  }

  retryNotice(): string | undefined {
    return this.notice;
  }

  partialText(): string {
    return this.streamed;
  }

  /** One of the CLI's tool calls finished: `error` says how it failed, undefined when it did not. */
  protected toolFinished(error: string | undefined): void {
    this.tools.calls++;
    if (error === undefined) return;
    this.tools.failed++;
    this.tools.lastError = error.slice(0, QUOTED_LINE_CHARS);
  }

  /** Forwards text to the live view; an answer beyond the size limit ends the run. */
  protected emit(text: string): void {
    if (text === "") return;
    this.streamedBytes += Buffer.byteLength(text);
    if (this.streamedBytes > MAX_AGENT_OUTPUT_BYTES) {
      throw new AgentError(
        "tool_error",
        `${this.shell} produced more than ${MAX_AGENT_OUTPUT_BYTES} bytes of output; process tree terminated`,
        false,
        this.streamed.slice(0, 4096),
      );
    }
    this.streamed += text;
    this.hooks.onProgress?.();
    this.onChunk?.(text);
  }

  /** The answer, or the AgentError explaining why there is none. */
  finish(exit: CliExit, file: string): AgentResponse {
    const outcome = this.outcome();
    if (outcome.kind === "failed") throw cliFailureError(this.shell, outcome.failure, this.streamed, this.secrets, this.retryAfterMs);
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode ?? "unknown"}`;
    if (exit.exitCode !== 0) {
      if (this.lastError) throw cliFailureError(this.shell, this.lastError, this.streamed, this.secrets, this.retryAfterMs);
      const said = exit.stderrTail
        ? `stderr:\n${exit.stderrTail}`
        : this.firstUnparseable
          ? `output: ${this.firstUnparseable}`
          : "no stderr output";
      throw new AgentError("command_failed", `${file} ${how} without a result; ${said}`, false, this.streamed);
    }
    if (outcome.kind === "answer") {
      if (Buffer.byteLength(outcome.text) > MAX_AGENT_OUTPUT_BYTES) {
        throw new AgentError(
          "tool_error",
          `${this.shell}'s answer exceeds ${MAX_AGENT_OUTPUT_BYTES} bytes`,
          false,
          outcome.text.slice(0, 4096),
        );
      }
      return {
        text: outcome.text,
        ...(outcome.usage ? { usage: outcome.usage } : {}),
        ...(this.tools.calls > 0 ? { tools: { ...this.tools } } : {}),
      };
    }
    const why =
      this.unparseable > 0
        ? `its output is not the expected JSON event stream (${this.unparseable} unreadable line${this.unparseable === 1 ? "" : "s"}, first: ${JSON.stringify(this.firstUnparseable)})`
        : "it ended without a result event";
    throw new AgentError("tool_error", `${this.shell} ${how} but ${why}`, false, this.streamed);
  }
}
