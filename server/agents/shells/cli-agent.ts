// An agent CLI (Claude Code, Codex, Gemini CLI) as an agent: the shared invocation. Each
// shell says how its arguments, its provider variables and its event stream look; this
// builds the environment (a minimal base, a fresh HOME per run, the provider key and
// endpoint, never the runner's secrets), reads what the task's MCP servers name, runs it in the workspace and turns the stream and
// exit status into an answer or a classified AgentError.
import { randomUUID } from "node:crypto";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { recordProviderRetry } from "../../metrics/registry";
import { minimalEnv, noteHandedSecret } from "../../process/env";
import { agentHomesPath, unwrapExit } from "../../process/sandbox";
import { RUN_MARKER_ENV } from "../../process/tree";
import { assertDirectory } from "../command";
import { mcpSecrets, resolveMcpServers, type ResolvedMcpServer } from "../mcp";
import { PROVIDER_HOSTS, urlHostRule, type EgressRules } from "../egress";
import { runTmpDir, sandboxAgent, withRunDir } from "../sandbox";
import type { CliShellAgentConfig } from "../config";
import type { BrainTurn } from "../../brains/call";
import { AgentError, type Agent, type AgentRequest, type AgentResponse } from "../types";
import { locateExecutable, type EnvSource } from "./locate";
import { cliPrompt } from "./prompt";
import { runCli } from "./run-cli";
import type { CliStreamParser, ParserHooks } from "./stream";

export type ShellName = CliShellAgentConfig["kind"];

/** What one run knows when its arguments and variables are built. */
export interface ShellRunContext {
  workspace: string;
  /** A directory of this run's own, removed afterwards (HOME when isolated). */
  runDir: string;
  /** The provider key, when the runner has one. */
  apiKey: string | undefined;
  /** The provider endpoint, when configured. */
  baseUrl: string | undefined;
  /** The task's MCP servers, their named variables read from the runner (empty: none). */
  mcpServers: readonly ResolvedMcpServer[];
}

export abstract class CliShellAgent implements Agent {
  abstract readonly kind: ShellName;
  readonly simulated = false;
  readonly fileWrites = "workspace" as const;
  readonly readsThread = true;
  readonly id: string;
  readonly name: string;

  constructor(readonly config: CliShellAgentConfig) {
    this.id = config.id;
    this.name = config.name ?? config.id;
  }

  /** The executable's name in node_modules/.bin and on PATH. */
  protected abstract readonly defaultCommand: string;
  /** Where the CLI keeps its own login under HOME (writable in the sandbox when isolateHome is off). */
  protected abstract readonly loginPaths: readonly string[];
  /** The variable the CLI reads its key from. */
  abstract readonly defaultApiKeyEnv: string;
  /** Arguments for a non-interactive run in ctx.workspace that reads its prompt from stdin. */
  abstract args(ctx: ShellRunContext): string[];
  /** The CLI's own variables: key, endpoint, retries, switches for unattended use. */
  protected abstract providerEnv(ctx: ShellRunContext): Record<string, string>;
  abstract parser(onChunk: ((text: string) => void) | undefined, secrets: readonly string[], hooks?: ParserHooks): CliStreamParser;
  /** Writes what the CLI must find in its (isolated) HOME before it starts. */
  protected async prepareHome(_ctx: ShellRunContext): Promise<void> {}
  /** Writes what the CLI must find in its run directory, isolated HOME or not (before prepareHome). */
  protected async prepareRun(_ctx: ShellRunContext): Promise<void> {}
  /** Variables the CLI hands on to its MCP servers itself (those of Codex). */
  protected mcpEnv(_ctx: ShellRunContext): Record<string, string> {
    return {};
  }

  /** The file that runs: the configured command, else the CLI's own name, found as locate.ts says. */
  executable(env: EnvSource = process.env): string {
    const command = this.config.command ?? this.defaultCommand;
    return locateExecutable(command, env) ?? command;
  }

  apiKeyEnv(): string {
    return this.config.apiKeyEnv ?? this.defaultApiKeyEnv;
  }

  /** The whole environment of the CLI: a minimal base, passEnv, literal env, its MCP servers', then the CLI's own. */
  environment(ctx: ShellRunContext, runId: string, source: EnvSource = process.env): Record<string, string> {
    return minimalEnv({
      source,
      home: this.config.isolateHome ? ctx.runDir : (source.HOME ?? os.homedir()),
      // Its own temporary directory, under the run directory but not its HOME itself: Codex
      // refuses a HOME under the temporary directory.
      tmp: runTmpDir(ctx.runDir),
      pass: this.config.passEnv,
      extra: { ...this.config.env, ...this.mcpEnv(ctx), ...this.providerEnv(ctx), [RUN_MARKER_ENV]: runId },
    });
  }

  /** The provider endpoint: baseUrl, or the value of baseUrlEnv on this runner. */
  baseUrl(source: EnvSource = process.env): string | undefined {
    if (this.config.baseUrl !== undefined) return this.config.baseUrl;
    if (this.config.baseUrlEnv === undefined) return undefined;
    const value = source[this.config.baseUrlEnv];
    if (!value)
      throw new AgentError(
        "tool_error",
        `${this.kind} agent ${this.id}: environment variable ${this.config.baseUrlEnv} (baseUrlEnv) is not set on this runner`,
        false,
      );
    return value.replace(/\/+$/, "");
  }

  async invoke(request: AgentRequest): Promise<AgentResponse> {
    const { signal } = request;
    if (signal.aborted) throw new AgentError("cancelled", "invocation cancelled before the CLI started", false);
    const startedAt = Date.now();
    const deadline = Math.min(request.deadline, this.config.timeoutMs === undefined ? Infinity : startedAt + this.config.timeoutMs);
    // Written as "not after" so that a NaN deadline times out at once rather than never.
    if (!(deadline > startedAt)) throw new AgentError("timeout", "the deadline passed before the CLI started", true);
    await assertDirectory(request.workspace);

    const apiKey = process.env[this.apiKeyEnv()] || undefined;
    // An isolated HOME holds no login of the CLI's own: without a key it can only fail later, less clearly.
    if (!apiKey && this.config.isolateHome) {
      throw new AgentError(
        "provider_auth_error",
        `${this.kind} agent ${this.id}: no API key: environment variable ${this.apiKeyEnv()} is not set on this runner (or set isolateHome: false to use the CLI's own login)`,
        false,
      );
    }
    const baseUrl = this.baseUrl();
    const mcpServers = resolveMcpServers(`${this.kind} agent ${this.id}`, request.mcpServers ?? [], process.env);
    // What the CLI is handed is redacted from everything recorded from now on (process/env.ts).
    noteHandedSecret(this.apiKeyEnv(), apiKey);
    for (const value of mcpSecrets(mcpServers)) noteHandedSecret("an MCP server's secret", value);
    return withRunDir(this.kind, async (runDir) => {
      const ctx: ShellRunContext = { workspace: request.workspace, runDir, apiKey, baseUrl, mcpServers };
      await this.prepareRun(ctx);
      if (this.config.isolateHome) await this.prepareHome(ctx);
      const runId = randomUUID();
      const file = this.executable();
      // The CLI talks to its provider (and its MCP servers) through the run's egress proxy, nothing else.
      const boxed = await sandboxAgent({
        file,
        args: this.args(ctx),
        workspace: request.workspace,
        env: this.environment(ctx, runId),
        runDir,
        writable: this.config.isolateHome ? [] : this.ownLogin(process.env.HOME ?? os.homedir()),
        egress: this.egressRules(ctx, request),
      });
      const env = boxed.env;
      // The provider's rate limit, shared with every runner through PostgreSQL: the run starts
      // on its turn and hands the turn on once the provider has answered (or the run ends).
      const turn = await this.waitTurn(request, baseUrl);
      const release = (notBeforeMs?: number) => void turn?.release(notBeforeMs === undefined ? undefined : { notBeforeMs });
      const parser = this.parser(request.onChunk, [...(apiKey ? [apiKey] : []), ...mcpSecrets(mcpServers)], {
        onRetry: (notice) => {
          recordProviderRetry(this.kind);
          request.onProviderRetry?.(notice);
        },
        maxRetries: this.config.providerRetries,
        onProgress: () => release(),
      });
      try {
        const exit = await runCli(
          {
            file: boxed.file,
            args: boxed.args,
            cwd: request.workspace,
            env,
            input: cliPrompt(request),
            marker: `${RUN_MARKER_ENV}=${runId}`,
            deadline,
            signal,
          },
          parser,
        );
        return {
          ...parser.finish(unwrapExit(exit, boxed.sandboxed), file),
          sandboxed: boxed.sandboxed,
          ...(boxed.refused.length ? { egressRefused: [...boxed.refused] } : {}),
        };
      } catch (err) {
        // A provider that asked to wait: nobody sharing its limit goes before that.
        release(err instanceof AgentError ? err.retryAfterMs : undefined);
        throw err;
      } finally {
        release();
        await boxed.close();
      }
    });
  }

  /** Its provider's API (or its base URL), its MCP servers' URLs, and what the admin allows. */
  egressRules(ctx: ShellRunContext, request: Pick<AgentRequest, "egress">): EgressRules {
    const base = urlHostRule(ctx.baseUrl);
    const mcp = ctx.mcpServers.flatMap((s) => (s.kind === "url" ? [urlHostRule(s.url)] : [])).filter((r): r is string => r !== null);
    return {
      needed: [...(base ? [base] : PROVIDER_HOSTS[this.kind]), ...mcp],
      allowed: request.egress?.hosts ?? [],
      ...(request.egress?.resolve ? { resolve: request.egress.resolve } : {}),
    };
  }

  /** This agent's turn under its provider's shared rate limit (none without a gate or with minIntervalMs 0). */
  private async waitTurn(request: AgentRequest, baseUrl: string | undefined): Promise<BrainTurn | null> {
    const { minIntervalMs } = this.config.rateLimit;
    if (!request.callGate || minIntervalMs === 0) return null;
    try {
      return await request.callGate.waitTurn({ brainId: this.id, baseUrl: baseUrl ?? this.kind, minIntervalMs }, request.signal);
    } catch (err) {
      if (request.signal.aborted)
        throw new AgentError("cancelled", "invocation cancelled while waiting for the provider's rate limit", false);
      throw new AgentError(
        "internal_error",
        `waiting for the rate limit of ${this.id} failed: ${(err as Error)?.message ?? String(err)}`,
        false,
      );
    }
  }

  /** The CLI's own login files under `home` that exist (made writable for it inside the sandbox). */
  private ownLogin(home: string): string[] {
    return this.loginPaths.map((p) => path.join(home, p)).filter((p) => fsSync.existsSync(p));
  }
}

/**
 * Where each run's private directory (the isolated HOME) is made: CATCAFE_AGENT_HOMES, or
 * ~/.cache/catcafe/agent-homes. Not under the temporary directory: Codex refuses to place
 * its sandbox helper (codex-linux-sandbox, run through bubblewrap where installed) under a
 * temporary directory, and then every command it runs fails. Private to this user (0700).
 */
export async function agentHomesDir(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = agentHomesPath(env);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}
