// Codex CLI (`codex`, npm @openai/codex) as an agent.
//
// Run: `codex exec --json --cd <workspace> --skip-git-repo-check --ephemeral -`, the prompt
// on stdin. Permissions: the `workspace-write` sandbox lets it edit files and run commands
// inside the workspace; "full" runs without sandbox or approvals.
// Provider: a model provider of our own, `catcafe`, defined with -c overrides: base_url (an
// OpenAI Responses API endpoint: Codex no longer speaks Chat Completions), env_key naming
// the variable that holds the key, and its retry counts. Without baseUrl it is OpenAI's.
// MCP servers: `mcp_servers.<name>` overrides too, secrets never on the command line: a
// command server's envFrom variables are set in Codex's environment and forwarded by name
// (env_vars), a URL server's token is read by Codex from the variable bearer_token_env_var names.
//
// Its --json output (JSONL), one event per line:
//   {"type":"thread.started","thread_id":"..."}   {"type":"turn.started"}
//   {"type":"item.started"|"item.updated"|"item.completed","item":{"id":..,"type":<item type>,...}}
//       agent_message {text}, reasoning {text}, command_execution {command, exit_code, status},
//       file_change {changes:[{path,kind}]}, mcp_tool_call, web_search, todo_list, error {message}
//   {"type":"error","message":"Reconnecting... 1/5 (...)"}   a retry, or the failure itself
//   {"type":"turn.completed","usage":{"input_tokens","cached_input_tokens","cache_write_input_tokens","output_tokens",...}}
//   {"type":"turn.failed","error":{"message":"..."}}
import { ZCodexAgentConfig } from "../config";
import type { ResolvedMcpServer } from "../mcp";
import { CliShellAgent, type ShellRunContext } from "./cli-agent";
import { CliStreamParser, isObject, num, str, toolLine, type JsonObject, type ParserHooks, type StreamOutcome } from "./stream";
import { cachedTokenFields, type AgentUsage } from "../types";
import type { z } from "zod";

export type CodexAgentConfigInput = z.input<typeof ZCodexAgentConfig>;

export const CODEX_PROVIDER_ID = "catcafe";
const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** A -c override; the value is TOML, and a JSON string is a valid TOML basic string. */
function override(key: string, value: string | number): string[] {
  return ["-c", `${key}=${typeof value === "string" ? JSON.stringify(value) : value}`];
}

/** A -c override whose value is an array of strings or a table of them (TOML inline forms). */
function overrideValue(key: string, value: readonly string[] | Record<string, string>): string[] {
  const toml = Array.isArray(value)
    ? `[${value.map((v) => JSON.stringify(v)).join(",")}]`
    : `{${Object.entries(value)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(",")}}`;
  return ["-c", `${key}=${toml}`];
}

/** One MCP server as `mcp_servers.<name>.*` overrides (names and variables only, no secret values). */
export function codexMcpOverrides(server: ResolvedMcpServer): string[] {
  const key = `mcp_servers.${server.name}`;
  if (server.kind === "url") {
    return [
      ...override(`${key}.url`, server.url),
      ...(server.bearerTokenEnv ? override(`${key}.bearer_token_env_var`, server.bearerTokenEnv) : []),
    ];
  }
  const forwarded = Object.keys(server.envFrom);
  return [
    ...override(`${key}.command`, server.command),
    ...overrideValue(`${key}.args`, server.args),
    ...(Object.keys(server.env).length ? overrideValue(`${key}.env`, server.env) : []),
    ...(forwarded.length ? overrideValue(`${key}.env_vars`, forwarded) : []),
  ];
}

export class CodexAgent extends CliShellAgent {
  readonly kind = "codex";
  protected readonly defaultCommand = "codex";
  protected readonly loginPaths = [".codex"];
  readonly defaultApiKeyEnv = "OPENAI_API_KEY";

  constructor(config: CodexAgentConfigInput) {
    super(ZCodexAgentConfig.parse(config));
  }

  /** Our own provider unless the CLI's own configuration (a login in the real HOME) is to be used. */
  private ownsProvider(ctx: ShellRunContext): boolean {
    return this.config.isolateHome || ctx.baseUrl !== undefined || this.config.apiKeyEnv !== undefined;
  }

  args(ctx: ShellRunContext): string[] {
    const { model, permissions, extraArgs, providerRetries } = this.config;
    const provider = `model_providers.${CODEX_PROVIDER_ID}`;
    return [
      "exec",
      "--json",
      "--cd",
      ctx.workspace,
      "--skip-git-repo-check",
      "--ephemeral",
      ...(permissions === "full" ? ["--dangerously-bypass-approvals-and-sandbox"] : ["--sandbox", "workspace-write"]),
      ...(model ? ["--model", model] : []),
      ...(this.ownsProvider(ctx)
        ? [
            ...override("model_provider", CODEX_PROVIDER_ID),
            ...override(`${provider}.name`, CODEX_PROVIDER_ID),
            ...override(`${provider}.base_url`, ctx.baseUrl ?? OPENAI_BASE_URL),
            ...override(`${provider}.wire_api`, "responses"),
            ...(ctx.apiKey ? override(`${provider}.env_key`, this.apiKeyEnv()) : []),
            ...(providerRetries !== undefined
              ? [
                  ...override(`${provider}.request_max_retries`, providerRetries),
                  ...override(`${provider}.stream_max_retries`, providerRetries),
                ]
              : []),
          ]
        : []),
      ...ctx.mcpServers.flatMap(codexMcpOverrides),
      ...extraArgs,
      // The prompt: read from stdin.
      "-",
    ];
  }

  /** What Codex hands on to its MCP servers: envFrom values under their own names, bearer tokens under theirs. */
  protected mcpEnv(ctx: ShellRunContext): Record<string, string> {
    return Object.fromEntries(
      ctx.mcpServers.flatMap((s) =>
        s.kind === "command" ? Object.entries(s.envFrom) : s.bearerTokenEnv && s.bearerToken ? [[s.bearerTokenEnv, s.bearerToken]] : [],
      ),
    );
  }

  protected providerEnv(ctx: ShellRunContext): Record<string, string> {
    // Codex reads the key from the variable env_key names: it keeps its configured name.
    return ctx.apiKey ? { [this.apiKeyEnv()]: ctx.apiKey } : {};
  }

  parser(onChunk: ((text: string) => void) | undefined, secrets: readonly string[], hooks?: ParserHooks): CodexStreamParser {
    return new CodexStreamParser(onChunk, secrets, hooks);
  }
}

export class CodexStreamParser extends CliStreamParser {
  protected readonly shell = "codex";
  private lastMessage: string | undefined;
  private usage: AgentUsage | undefined;
  private completed = false;
  private failure: string | undefined;
  private messages = 0;

  protected event(event: JsonObject): void {
    switch (event.type) {
      case "item.started":
      case "item.completed":
        if (isObject(event.item)) this.item(event.item, event.type === "item.completed");
        return;
      case "error": {
        const message = str(event.message) ?? "error";
        // "Reconnecting... 2/5 (...)" is Codex retrying (it reports no delay; "waiting for network"
        // it repeats without end); anything else is the failure it then ends with.
        if (message.startsWith("Reconnecting")) {
          this.notice = message;
          this.retried({ message: message.replace(/^Reconnecting\.\.\.\s*/, "") });
        } else {
          this.failedAfterRetry();
          this.lastError = { message };
        }
        return;
      }
      case "turn.completed": {
        this.completed = true;
        const usage = isObject(event.usage) ? event.usage : {};
        // input_tokens already counts the cached ones (OpenAI's usage semantics).
        this.usage = {
          inputTokens: (this.usage?.inputTokens ?? 0) + num(usage.input_tokens),
          outputTokens: (this.usage?.outputTokens ?? 0) + num(usage.output_tokens),
          ...cachedTokenFields(
            (this.usage?.cachedInputTokens ?? 0) + num(usage.cached_input_tokens),
            (this.usage?.cacheCreationInputTokens ?? 0) + num(usage.cache_write_input_tokens),
          ),
        };
        return;
      }
      case "turn.failed": {
        const error = isObject(event.error) ? event.error : {};
        this.failedAfterRetry();
        this.failure = str(error.message) ?? this.lastError?.message ?? "turn failed";
        return;
      }
      default:
        return;
    }
  }

  private item(item: JsonObject, completed: boolean): void {
    switch (item.type) {
      case "agent_message": {
        const text = str(item.text);
        if (!completed || text === undefined) return;
        this.emit(this.messages++ > 0 ? `\n\n${text}` : text);
        this.lastMessage = text;
        return;
      }
      case "command_execution":
        if (!completed) this.emit(toolLine("shell", { command: item.command }));
        else {
          const failed = item.status === "failed" || (typeof item.exit_code === "number" && item.exit_code !== 0);
          const output = str(item.aggregated_output)?.trim().split("\n").slice(-2).join(" ");
          this.toolFinished(failed ? `${str(item.command) ?? "command"}: ${output || `exit ${num(item.exit_code)}`}` : undefined);
        }
        return;
      case "file_change":
        if (completed) this.toolFinished(item.status === "failed" ? "a file change failed" : undefined);
        if (completed && Array.isArray(item.changes)) {
          for (const change of item.changes)
            if (isObject(change)) this.emit(toolLine(`edit (${str(change.kind) ?? "change"})`, { path: change.path }));
        }
        return;
      case "mcp_tool_call":
        if (!completed) this.emit(toolLine(`${str(item.server) ?? "mcp"}.${str(item.tool) ?? "tool"}`, item.arguments));
        return;
      case "web_search":
        if (!completed) this.emit(toolLine("web_search", { pattern: item.query }));
        return;
      default:
        // reasoning, todo_list, and warnings (item type "error") are not part of the answer.
        return;
    }
  }

  protected outcome(): StreamOutcome {
    if (this.failure !== undefined) return { kind: "failed", failure: { message: this.failure } };
    if (!this.completed) return { kind: "none" };
    return { kind: "answer", text: this.lastMessage ?? "", ...(this.usage ? { usage: this.usage } : {}) };
  }
}
