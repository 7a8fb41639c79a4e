// The generic command shell: runs any executable as an agent. No shell, in the sandbox
// (./sandbox.ts: the session's workspace as cwd, a HOME of its own, the network only when
// it is configured to call out), an explicit minimal environment (never the runner's
// secrets), stdout streamed as it arrives and capped, and the whole process tree ended on
// cancel or deadline.
import fs from "node:fs/promises";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import { minimalEnv } from "../process/env";
import { unwrapExit } from "../process/sandbox";
import { spawnProcess, type ProcessEnd, type StopCause } from "../process/spawn";
import { PROMPT_PLACEHOLDER, ZCommandAgentConfig, type CommandAgentConfig, type CommandAgentConfigInput } from "./config";
import { PROVIDER_HOSTS, urlHostRule, type EgressRules } from "./egress";
import { runTmpDir, sandboxAgent, withRunDir } from "./sandbox";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type Agent, type AgentRequest, type AgentResponse } from "./types";

/** How much of stderr is kept (the end of it) to explain a failure. */
const STDERR_TAIL_BYTES = 4 * 1024;
const STDERR_TAIL_LINES = 20;

/** Why the agent ended the process itself (cancel and deadline are the process module's). */
type AgentStop = { kind: "oversized" } | { kind: "chunk_failed"; error: unknown };

export class CommandAgent implements Agent {
  readonly kind = "command";
  readonly simulated = false;
  readonly fileWrites = "workspace" as const;
  readonly readsThread = false;
  readonly id: string;
  readonly name: string;
  private readonly config: CommandAgentConfig;

  constructor(config: CommandAgentConfigInput) {
    this.config = ZCommandAgentConfig.parse(config);
    this.id = this.config.id;
    this.name = this.config.name ?? this.config.id;
  }

  /** The whole environment of the process: a minimal base with its own `home`, then passEnv, then literal env. */
  environment(home: string, source: NodeJS.ProcessEnv = process.env, tmp?: string): Record<string, string> {
    return minimalEnv({ source, home, tmp, pass: this.config.passEnv, extra: this.config.env });
  }

  /**
   * Where it may connect: the brain it is bound to (its base URL, else its provider's API)
   * and what the admin allows (docs/security.md "Network").
   */
  egressRules(request: Pick<AgentRequest, "egress">): EgressRules {
    const env = this.config.env ?? {};
    const provider = env.CATCAFE_BRAIN_PROVIDER;
    const base = urlHostRule(env.CATCAFE_BRAIN_BASE_URL);
    const needed = base ? [base] : provider === "openai" || provider === "anthropic" ? [...PROVIDER_HOSTS[provider]] : [];
    return { needed, allowed: request.egress?.hosts ?? [], ...(request.egress?.resolve ? { resolve: request.egress.resolve } : {}) };
  }

  /** Executable and arguments for one prompt ({prompt} substituted in arguments with prompt "arg"). */
  argv(prompt: string): [file: string, args: string[]] {
    const [file = "", ...args] = this.config.argv;
    if (this.config.prompt !== "arg") return [file, args];
    return [file, args.map((arg) => arg.replaceAll(PROMPT_PLACEHOLDER, () => prompt))];
  }

  async invoke(request: AgentRequest): Promise<AgentResponse> {
    const { signal } = request;
    if (signal.aborted) throw stopError({ kind: "cancelled" }, "");
    const startedAt = Date.now();
    const deadline = Math.min(request.deadline, this.config.timeoutMs === undefined ? Infinity : startedAt + this.config.timeoutMs);
    // Written as "not after" so that a NaN deadline times out at once rather than never.
    if (!(deadline > startedAt)) throw stopError({ kind: "timeout", afterMs: 0 }, "");
    await assertDirectory(request.workspace);
    if (signal.aborted) throw stopError({ kind: "cancelled" }, "");

    return withRunDir("command", (runDir) => this.run(request, deadline, runDir));
  }

  private async run(request: AgentRequest, deadline: number, runDir: string): Promise<AgentResponse> {
    const { signal } = request;
    const [file, args] = this.argv(request.prompt);
    const home = path.join(runDir, "home");
    await fs.mkdir(home);
    const boxed = await sandboxAgent({
      file,
      args,
      workspace: request.workspace,
      env: this.environment(home, process.env, runTmpDir(runDir)),
      runDir,
      ...(this.config.network ? { egress: this.egressRules(request) } : {}),
    });
    const env = boxed.env;
    let stdout = "";
    let stdoutBytes = 0;
    const decoder = new StringDecoder("utf8");
    let stderrTail = Buffer.alloc(0);
    const run = spawnProcess<AgentStop>({
      file: boxed.file,
      args: boxed.args,
      cwd: request.workspace,
      env,
      signal,
      deadline,
      ...(this.config.prompt === "stdin" ? { input: request.prompt } : {}),
      onStdout: (bytes) => {
        const room = MAX_AGENT_OUTPUT_BYTES - stdoutBytes;
        if (run.stoppedBy) return;
        const kept = bytes.length > room ? bytes.subarray(0, room) : bytes;
        stdoutBytes += kept.length;
        emit(decoder.write(kept));
        if (bytes.length > room) run.stop({ kind: "oversized" });
      },
      onStderr: (bytes) => {
        stderrTail = Buffer.concat([stderrTail, bytes]).subarray(-STDERR_TAIL_BYTES);
      },
    });
    const emit = (text: string) => {
      if (text === "") return;
      stdout += text;
      try {
        request.onChunk?.(text);
      } catch (error) {
        run.stop({ kind: "chunk_failed", error });
      }
    };

    const ended = await run.done.finally(() => boxed.close());
    const end = ended.kind === "exited" ? unwrapExit(ended, boxed.sandboxed) : ended;
    if (!run.stoppedBy) emit(decoder.end());
    if (run.stoppedBy) throw stopError(run.stoppedBy, stdout);
    if (end.kind === "not_started") throw spawnError(file, end.code, end.message);
    if (end.exitCode === 0)
      return { text: stdout, sandboxed: boxed.sandboxed, ...(boxed.refused.length ? { egressRefused: [...boxed.refused] } : {}) };
    throw new AgentError("command_failed", `${file} ${describeExit(end)}; ${stderrOrNone(stderrTail)}`, false, stdout);
  }
}

/** How a process that failed ended: an exit code or the signal that killed it. */
export function describeExit(end: Extract<ProcessEnd<unknown>, { kind: "exited" }>): string {
  return end.signal ? `was killed by ${end.signal}` : `exited with code ${end.exitCode ?? "unknown"}`;
}

function stderrOrNone(tail: Buffer): string {
  const text = stderrTailText(tail);
  return text ? `stderr:\n${text}` : "no stderr output";
}

function stopError(stop: StopCause<AgentStop>, partialOutput: string): Error {
  if (stop.kind === "caller") return agentStopError(stop.cause, partialOutput);
  switch (stop.kind) {
    case "cancelled":
      return new AgentError("cancelled", "invocation cancelled; process tree terminated", false, partialOutput);
    case "timeout":
      return new AgentError(
        "timeout",
        `command did not finish before its deadline (${stop.afterMs} ms); process tree terminated`,
        true,
        partialOutput,
      );
  }
}

function agentStopError(stop: AgentStop, partialOutput: string): Error {
  switch (stop.kind) {
    case "oversized":
      return new AgentError("tool_error", `output exceeded ${MAX_AGENT_OUTPUT_BYTES} bytes; process tree terminated`, false, partialOutput);
    case "chunk_failed":
      // The caller's own callback failed: hand its error back as it is.
      return stop.error instanceof Error ? stop.error : new Error(String(stop.error));
  }
}

export function spawnError(file: string, code: string | undefined, detail: string | undefined): AgentError {
  if (code === "ENOENT") return new AgentError("command_failed", `executable not found: ${file}`, false);
  if (code === "EACCES") return new AgentError("command_failed", `cannot execute ${file}: permission denied`, false);
  return new AgentError("command_failed", `could not start ${file}: ${detail ?? code ?? "unknown error"}`, false);
}

export function stderrTailText(tail: Buffer): string {
  return tail.toString("utf8").trimEnd().split("\n").slice(-STDERR_TAIL_LINES).join("\n");
}

export async function assertDirectory(workspace: string): Promise<void> {
  const stat = await fs.stat(workspace).catch(() => null);
  if (!stat?.isDirectory()) throw new AgentError("internal_error", `workspace not found: ${workspace}`, false);
}
