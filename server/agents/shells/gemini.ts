// Gemini CLI (`gemini`, npm @google/gemini-cli) as an agent.
//
// Run: `gemini -p "" --output-format stream-json --skip-trust`, the prompt on stdin (the
// empty -p makes it headless; stdin is the prompt), in the workspace. Permissions:
// `--approval-mode auto_edit` approves its edit tools; "full" is `yolo` (shell commands too).
// Provider: GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL. With GOOGLE_GEMINI_BASE_URL set,
// Gemini CLI 0.61 picks its "gateway" auth type, which headless mode then rejects ("Invalid
// auth method selected."); the isolated HOME's settings.json therefore selects
// gemini-api-key explicitly (the base URL still applies), and sets general.maxAttempts for
// providerRetries. With isolateHome false the user's own settings must do that.
// MCP servers: `mcpServers` in that settings.json (trusted: nobody is there to confirm a
// tool call), so they need the run's own HOME.
//
// Its stream-json output, one event per line:
//   {"type":"init","session_id":..,"model":..}
//   {"type":"message","role":"user"|"assistant","content":"...","delta":true}
//   {"type":"tool_use","tool_name":"write_file","tool_id":..,"parameters":{...}}
//   {"type":"tool_result","tool_id":..,"status":"success"|"error",...}
//   {"type":"error",...}                                    a non-fatal warning
//   {"type":"result","status":"success"|"error","error":{"type","message"},"stats":{"input_tokens","output_tokens","cached","input",...}}
// Its own retries of a provider request it reports on stderr only (its stream-json has no
// event for them), in one of two forms, the message possibly over several lines:
//   Attempt 1 failed: <message>. Retrying after 3412ms...        the provider said how long
//                                                                 (RetryInfo, "Please retry in")
//   Attempt 1 failed with status 429. Retrying with backoff...   its own backoff, a wait it does not state
import fs from "node:fs/promises";
import path from "node:path";
import { ZGeminiAgentConfig } from "../config";
import { mcpServersJson } from "../mcp";
import { CliShellAgent, type ShellRunContext } from "./cli-agent";
import { AgentError, cachedTokenFields } from "../types";
import { CliStreamParser, isObject, num, str, toolLine, type JsonObject, type ParserHooks, type StreamOutcome } from "./stream";
import type { z } from "zod";

export type GeminiAgentConfigInput = z.input<typeof ZGeminiAgentConfig>;

export class GeminiAgent extends CliShellAgent {
  readonly kind = "gemini";
  protected readonly defaultCommand = "gemini";
  protected readonly loginPaths = [".gemini"];
  readonly defaultApiKeyEnv = "GEMINI_API_KEY";

  constructor(config: GeminiAgentConfigInput) {
    super(ZGeminiAgentConfig.parse(config));
  }

  args(): string[] {
    const { model, permissions, extraArgs } = this.config;
    return [
      "--prompt",
      "",
      "--output-format",
      "stream-json",
      "--skip-trust",
      "--approval-mode",
      permissions === "full" ? "yolo" : "auto_edit",
      ...(model ? ["--model", model] : []),
      ...extraArgs,
    ];
  }

  protected providerEnv(ctx: ShellRunContext): Record<string, string> {
    return {
      ...(ctx.apiKey ? { GEMINI_API_KEY: ctx.apiKey } : {}),
      ...(ctx.baseUrl ? { GOOGLE_GEMINI_BASE_URL: ctx.baseUrl } : {}),
    };
  }

  /** The settings file of the run's own HOME (~/.gemini/settings.json). */
  settings(ctx: ShellRunContext): Record<string, unknown> {
    const { providerRetries } = this.config;
    return {
      ...(ctx.apiKey ? { security: { auth: { selectedType: "gemini-api-key" } } } : {}),
      ...(providerRetries !== undefined ? { general: { maxAttempts: providerRetries + 1 } } : {}),
      privacy: { usageStatisticsEnabled: false },
      ...(ctx.mcpServers.length ? { mcpServers: mcpServersJson(ctx.mcpServers, "gemini") } : {}),
    };
  }

  protected async prepareRun(ctx: ShellRunContext): Promise<void> {
    // Its MCP servers can only be set in a settings file; the user's own is not ours to write.
    if (ctx.mcpServers.length && !this.config.isolateHome)
      throw new AgentError(
        "tool_error",
        `gemini agent ${this.id}: the project's MCP servers are written to the run's own ~/.gemini/settings.json, which needs isolateHome: true (the default)`,
        false,
      );
  }

  protected async prepareHome(ctx: ShellRunContext): Promise<void> {
    const dir = path.join(ctx.runDir, ".gemini");
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, "settings.json"), JSON.stringify(this.settings(ctx), null, 2));
  }

  parser(onChunk: ((text: string) => void) | undefined, secrets: readonly string[], hooks?: ParserHooks): GeminiStreamParser {
    return new GeminiStreamParser(onChunk, secrets, hooks);
  }
}

/** A retry notice on stderr (see the header): its attempt, what failed, and the wait when stated. */
const RETRY_NOTICE = /Attempt (\d+) failed(?::\s*|\s+)([\s\S]*?)\.\s*Retrying (?:after (\d+)ms|with backoff)/;
/** How much unmatched stderr is kept to find a notice split across writes. */
const STDERR_SCAN_CHARS = 16 * 1024;

export class GeminiStreamParser extends CliStreamParser {
  protected readonly shell = "gemini";
  private stderrPending = "";
  private allText = "";
  /** The answer: what the model said after its last tool call. */
  private finalText = "";
  private result: JsonObject | undefined;
  /** The model the run uses, as its init event says (what its usage is priced as). */
  private model: string | undefined;

  protected event(event: JsonObject): void {
    switch (event.type) {
      case "init":
        this.model = str(event.model);
        return;
      case "message": {
        if (event.role !== "assistant") return;
        const text = str(event.content) ?? "";
        this.emit(text);
        this.allText += text;
        this.finalText += text;
        return;
      }
      case "tool_use":
        this.emit(toolLine(str(event.tool_name) ?? "tool", event.parameters));
        this.finalText = "";
        return;
      case "tool_result": {
        const error = isObject(event.error) ? str(event.error.message) : str(event.output);
        this.toolFinished(event.status === "error" ? (error ?? "the tool failed") : undefined);
        return;
      }
      case "error": {
        const message = str(event.message) ?? (isObject(event.error) ? str(event.error.message) : undefined);
        if (message) this.lastError = { message, code: str(event.severity) ?? null };
        return;
      }
      case "result":
        this.result = event;
        if (event.status !== "success") this.failedAfterRetry();
        return;
      default:
        return;
    }
  }

  /** Finds the CLI's retry notices in its stderr (recorded as ProviderRetried, with the wait when stated). */
  stderr(text: string): void {
    this.stderrPending = (this.stderrPending + text).slice(-STDERR_SCAN_CHARS);
    for (let m = RETRY_NOTICE.exec(this.stderrPending); m; m = RETRY_NOTICE.exec(this.stderrPending)) {
      this.stderrPending = this.stderrPending.slice(m.index + m[0].length);
      const message = m[2]!.replace(/\s+/g, " ").trim() || "a provider request failed";
      this.notice = `attempt ${m[1]} failed: ${message}`;
      this.retried({ message }, m[3] !== undefined ? Number(m[3]) : undefined);
    }
  }

  protected outcome(): StreamOutcome {
    const result = this.result;
    if (!result) return { kind: "none" };
    if (result.status !== "success") {
      const error = isObject(result.error) ? result.error : {};
      return {
        kind: "failed",
        failure: { message: str(error.message) ?? `result status ${str(result.status) ?? "unknown"}`, code: str(error.type) ?? null },
      };
    }
    const stats = isObject(result.stats) ? result.stats : undefined;
    const text = this.finalText.trim() !== "" ? this.finalText : this.allText;
    return {
      kind: "answer",
      text,
      ...(stats
        ? {
            usage: {
              // input_tokens counts the cached ones too (`input` is the rest).
              inputTokens: num(stats.input_tokens),
              outputTokens: num(stats.output_tokens),
              ...cachedTokenFields(num(stats.cached), 0),
              ...(this.model ? { model: this.model } : {}),
            },
          }
        : {}),
    };
  }
}
