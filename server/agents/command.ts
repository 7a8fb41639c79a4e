// The generic command shell: runs any executable as an agent. No shell, the session's
// workspace as cwd, an explicit minimal environment (never the runner's secrets), stdout
// streamed as it arrives and capped, and the whole process tree ended on cancel or deadline.
import fs from "node:fs/promises";
import os from "node:os";
import { StringDecoder } from "node:string_decoder";
import { execa } from "execa";
import {
  PROMPT_PLACEHOLDER,
  RUNNER_SECRET_ENV,
  ZCommandAgentConfig,
  type CommandAgentConfig,
  type CommandAgentConfigInput,
} from "./config";
import { terminateProcessGroup, trackProcessGroup } from "./process-tree";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type Agent, type AgentRequest, type AgentResponse } from "./types";

/** How much of stderr is kept (the end of it) to explain a failure. */
const STDERR_TAIL_BYTES = 4 * 1024;
const STDERR_TAIL_LINES = 20;
/**
 * After the process exited, how long its pipes may stay open before we stop reading: a
 * descendant that left the process group (setsid) can hold them open indefinitely.
 */
const PIPE_DRAIN_MS = 1_000;
/** setTimeout's largest delay; longer deadlines re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin";

/** Why we ended the process ourselves, before it finished on its own. */
type Stop = { kind: "cancelled" } | { kind: "timeout"; afterMs: number } | { kind: "oversized" } | { kind: "chunk_failed"; error: unknown };

export class CommandAgent implements Agent {
  readonly kind = "command";
  readonly simulated = false;
  readonly id: string;
  readonly name: string;
  private readonly config: CommandAgentConfig;

  constructor(config: CommandAgentConfigInput) {
    this.config = ZCommandAgentConfig.parse(config);
    this.id = this.config.id;
    this.name = this.config.name ?? this.config.id;
  }

  /** The whole environment of the process: a minimal base, then passEnv, then literal env. */
  environment(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
    const env: Record<string, string> = {
      PATH: source.PATH ?? FALLBACK_PATH,
      HOME: source.HOME ?? os.homedir(),
      LANG: "C.UTF-8",
      TERM: "dumb",
      NO_COLOR: "1",
    };
    for (const name of this.config.passEnv ?? []) {
      const value = source[name];
      if (value !== undefined) env[name] = value;
    }
    Object.assign(env, this.config.env);
    // The schema already refuses these names; this keeps it true whatever built the config.
    for (const name of RUNNER_SECRET_ENV) delete env[name];
    return env;
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

    const [file, args] = this.argv(request.prompt);
    const subprocess = execa(file, args, {
      cwd: request.workspace,
      env: this.environment(),
      extendEnv: false,
      // Its own process group, so a cancel reaches everything it started.
      detached: true,
      cleanup: false,
      forceKillAfterDelay: false,
      reject: false,
      buffer: false,
      ...(this.config.prompt === "stdin" ? { input: request.prompt } : { stdin: "ignore" as const }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const { pid } = subprocess;
    const exited = new Promise<void>((resolve) => subprocess.once("exit", () => resolve()));
    const untrack = pid === undefined ? () => {} : trackProcessGroup(pid);

    // A holder rather than a `let`: it is set from callbacks, which TypeScript's narrowing ignores.
    const ended: { by: Stop | null } = { by: null };
    const halt = (reason: Stop) => {
      if (ended.by) return;
      ended.by = reason;
      if (pid !== undefined) terminateProcessGroup(pid);
    };
    // Whatever the process left running when it exited on its own goes too.
    void exited.then(() => {
      if (!ended.by && pid !== undefined) terminateProcessGroup(pid);
    });

    let stdout = "";
    let stdoutBytes = 0;
    const decoder = new StringDecoder("utf8");
    const emit = (text: string) => {
      if (text === "") return;
      stdout += text;
      try {
        request.onChunk?.(text);
      } catch (error) {
        halt({ kind: "chunk_failed", error });
      }
    };
    subprocess.stdout.on("data", (data: Buffer | string) => {
      if (ended.by) return;
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      const room = MAX_AGENT_OUTPUT_BYTES - stdoutBytes;
      const kept = bytes.length > room ? bytes.subarray(0, room) : bytes;
      stdoutBytes += kept.length;
      emit(decoder.write(kept));
      if (bytes.length > room) halt({ kind: "oversized" });
    });
    let stderrTail = Buffer.alloc(0);
    subprocess.stderr.on("data", (data: Buffer | string) => {
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      stderrTail = Buffer.concat([stderrTail, bytes]).subarray(-STDERR_TAIL_BYTES);
    });

    const onAbort = () => halt({ kind: "cancelled" });
    signal.addEventListener("abort", onAbort, { once: true });
    const clearDeadline = atTime(deadline, () => halt({ kind: "timeout", afterMs: Date.now() - startedAt }));

    try {
      const result = await Promise.race([
        subprocess.then(
          (r) => r,
          () => null,
        ),
        exited.then(() => delay(PIPE_DRAIN_MS)).then(() => null),
      ]);
      subprocess.stdout.destroy();
      subprocess.stderr.destroy();
      if (!ended.by) emit(decoder.end());
      if (ended.by) throw stopError(ended.by, stdout);

      if (pid === undefined) throw spawnError(file, result?.code, result?.originalMessage);
      if (subprocess.exitCode === 0) return { text: stdout };
      const how = subprocess.signalCode ? `was killed by ${subprocess.signalCode}` : `exited with code ${subprocess.exitCode ?? "unknown"}`;
      const tail = stderrTailText(stderrTail);
      throw new AgentError("command_failed", `${file} ${how}; ${tail ? `stderr:\n${tail}` : "no stderr output"}`, false, stdout);
    } finally {
      clearDeadline();
      signal.removeEventListener("abort", onAbort);
      untrack();
    }
  }
}

function stopError(stop: Stop, partialOutput: string): Error {
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

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Calls `fn` at epoch-ms `time` (re-arming past setTimeout's limit); returns a canceller. */
export function atTime(time: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const remaining = time - Date.now();
    if (!(remaining > 0)) return fn();
    timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
  };
  arm();
  return () => clearTimeout(timer);
}
