// Claude Code (`claude`, npm @anthropic-ai/claude-code) as an agent.
//
// Run: `claude -p --output-format stream-json --verbose --include-partial-messages`, the
// prompt on stdin, in the workspace. Permissions: `acceptEdits` lets it create and edit
// files in its working directory without asking; "full" also allows Bash (bypassPermissions
// is refused when running as root, so Bash is allowed by name instead).
// Provider: ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL; CLAUDE_CODE_MAX_RETRIES for its own retries.
// MCP servers: a file in the run directory (`--mcp-config`, with `--strict-mcp-config` so
// no other configuration adds any), their tools allowed by name (`mcp__<server>`): nobody
// is there to approve a call.
//
// Its stream-json output, one event per line:
//   {"type":"system","subtype":"init",...}                 session, tools, model
//   {"type":"system","subtype":"api_retry","error_status":429,"error":"rate_limit",...}
//   {"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"..."}}}
//   {"type":"assistant","message":{"id":..,"content":[{"type":"text"|"tool_use",...}]}}   per content block
//   {"type":"user","message":{"content":[{"type":"tool_result",...}]}}
//   {"type":"result","subtype":"success","is_error":false,"result":"<final text>","usage":{...}}
// A provider failure ends in a result with is_error true, api_error_status and api_error_type.
import fs from "node:fs/promises";
import path from "node:path";
import { ZClaudeAgentConfig } from "../config";
import { mcpServersJson } from "../mcp";
import { CliShellAgent, type ShellRunContext } from "./cli-agent";
import { CliStreamParser, isObject, num, str, toolLine, type JsonObject, type ParserHooks, type StreamOutcome } from "./stream";
import { cachedTokenFields, type AgentUsage } from "../types";
import type { z } from "zod";

export type ClaudeAgentConfigInput = z.input<typeof ZClaudeAgentConfig>;

/** The run's --mcp-config file: in its run directory (private, removed with it), secrets and all. */
export function claudeMcpConfigPath(runDir: string): string {
  return path.join(runDir, "mcp-servers.json");
}

export class ClaudeAgent extends CliShellAgent {
  readonly kind = "claude";
  protected readonly defaultCommand = "claude";
  protected readonly loginPaths = [".claude", ".claude.json"];
  readonly defaultApiKeyEnv = "ANTHROPIC_API_KEY";

  constructor(config: ClaudeAgentConfigInput) {
    super(ZClaudeAgentConfig.parse(config));
  }

  args(ctx: ShellRunContext): string[] {
    const { model, permissions, extraArgs } = this.config;
    const allowed = [...(permissions === "full" ? ["Bash"] : []), ...ctx.mcpServers.map((s) => `mcp__${s.name}`)];
    return [
      "--print",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--no-session-persistence",
      "--permission-mode",
      "acceptEdits",
      ...(allowed.length ? ["--allowedTools", allowed.join(",")] : []),
      ...(ctx.mcpServers.length ? ["--mcp-config", claudeMcpConfigPath(ctx.runDir), "--strict-mcp-config"] : []),
      ...(model ? ["--model", model] : []),
      ...extraArgs,
    ];
  }

  protected providerEnv(ctx: ShellRunContext): Record<string, string> {
    return {
      ...(ctx.apiKey ? { ANTHROPIC_API_KEY: ctx.apiKey } : {}),
      ...(ctx.baseUrl ? { ANTHROPIC_BASE_URL: ctx.baseUrl } : {}),
      ...(this.config.providerRetries !== undefined ? { CLAUDE_CODE_MAX_RETRIES: String(this.config.providerRetries) } : {}),
      // A runner's CLI neither updates itself nor phones home.
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
  }

  protected async prepareRun(ctx: ShellRunContext): Promise<void> {
    if (!ctx.mcpServers.length) return;
    const config = { mcpServers: mcpServersJson(ctx.mcpServers, "claude") };
    await fs.writeFile(claudeMcpConfigPath(ctx.runDir), JSON.stringify(config, null, 2), { mode: 0o600 });
  }

  parser(onChunk: ((text: string) => void) | undefined, secrets: readonly string[], hooks?: ParserHooks): ClaudeStreamParser {
    return new ClaudeStreamParser(onChunk, secrets, hooks);
  }
}

export class ClaudeStreamParser extends CliStreamParser {
  protected readonly shell = "claude";
  /** Messages whose text already streamed as deltas (their whole-message events are not repeated). */
  private readonly streamedMessages = new Set<string>();
  private lastAssistantText = "";
  private result: JsonObject | undefined;
  /** The provider error on the last synthetic error message, if any. */
  private apiError: { status: number | null; code: string | null } | undefined;
  /** The model the run uses, as its init event says (what its usage is priced as). */
  private model: string | undefined;

  protected event(event: JsonObject): void {
    // Subagents' events carry the tool call that started them: only the main thread is the answer.
    const main = event.parent_tool_use_id == null;
    switch (event.type) {
      case "system":
        if (event.subtype === "init") this.model = str(event.model);
        if (event.subtype === "api_retry") {
          const status = typeof event.error_status === "number" ? ` (HTTP ${event.error_status})` : "";
          this.notice = `${str(event.error) ?? "error"}${status}, attempt ${num(event.attempt)} of ${num(event.max_retries)}`;
          // retry_delay_ms follows the provider's Retry-After when it sent one.
          const delay = typeof event.retry_delay_ms === "number" ? Math.round(event.retry_delay_ms) : undefined;
          const httpStatus = typeof event.error_status === "number" ? event.error_status : null;
          this.retried({ message: `${str(event.error) ?? "error"}${status}`, status: httpStatus, code: str(event.error) ?? null }, delay);
        }
        return;
      case "stream_event": {
        const inner = isObject(event.event) ? event.event : {};
        if (!main || inner.type !== "content_block_delta" || !isObject(inner.delta) || inner.delta.type !== "text_delta") return;
        const id = str(event.api_message_id);
        if (id) this.streamedMessages.add(id);
        this.emit(str(inner.delta.text) ?? "");
        return;
      }
      case "assistant":
        return this.assistant(event, main);
      case "user": {
        // Tool results come back as the user's turn: is_error marks a tool that failed.
        const content = isObject(event.message) && Array.isArray(event.message.content) ? event.message.content : [];
        for (const block of content) {
          if (!isObject(block) || block.type !== "tool_result") continue;
          const text = typeof block.content === "string" ? block.content : JSON.stringify(block.content ?? "");
          this.toolFinished(block.is_error === true ? text : undefined);
        }
        return;
      }
      case "result":
        this.result = event;
        return;
      default:
        return;
    }
  }

  private assistant(event: JsonObject, main: boolean): void {
    const message = isObject(event.message) ? event.message : {};
    if (event.is_api_error_message === true) {
      this.apiError = {
        status: typeof event.api_error_status === "number" ? event.api_error_status : null,
        code: str(event.api_error_type) ?? str(event.api_error) ?? str(event.error) ?? null,
      };
      return;
    }
    if (!main) return;
    const content = Array.isArray(message.content) ? message.content : [];
    const alreadyStreamed = this.streamedMessages.has(str(message.id) ?? "");
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === "text") {
        const text = str(block.text) ?? "";
        if (text) this.lastAssistantText = text;
        if (!alreadyStreamed) this.emit(text);
      } else if (block.type === "tool_use") {
        this.emit(toolLine(str(block.name) ?? "tool", block.input));
      }
    }
  }

  protected outcome(): StreamOutcome {
    const result = this.result;
    if (!result) return { kind: "none" };
    const text = str(result.result);
    if (result.is_error === true || (typeof result.subtype === "string" && result.subtype.startsWith("error"))) {
      const errors = Array.isArray(result.errors) ? result.errors.filter((e): e is string => typeof e === "string") : [];
      const status = typeof result.api_error_status === "number" ? result.api_error_status : (this.apiError?.status ?? null);
      const code = str(result.api_error_type) ?? str(result.api_error) ?? this.apiError?.code ?? null;
      const message = text ?? (errors.join("; ") || `result ${str(result.subtype) ?? "error"}`);
      return { kind: "failed", failure: { message, status, code } };
    }
    return { kind: "answer", text: text ?? this.lastAssistantText, usage: claudeUsage(result.usage, this.model) };
  }
}

/** Tokens the whole run used; cache reads and writes are input the model processed too, and are priced at their own rates. */
function claudeUsage(usage: unknown, model: string | undefined): AgentUsage | undefined {
  if (!isObject(usage)) return undefined;
  return {
    inputTokens: num(usage.input_tokens) + num(usage.cache_creation_input_tokens) + num(usage.cache_read_input_tokens),
    outputTokens: num(usage.output_tokens),
    ...cachedTokenFields(num(usage.cache_read_input_tokens), num(usage.cache_creation_input_tokens)),
    ...(model ? { model } : {}),
  };
}
