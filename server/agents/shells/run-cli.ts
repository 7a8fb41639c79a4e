// Running one agent CLI to completion: no shell, the workspace as cwd, the environment we
// built and nothing else, the prompt on stdin, stdout handed over line by line as it
// arrives, the end of stderr kept for diagnosis, and the whole run (process group,
// descendants, marked processes) ended on cancel, deadline or runaway output.
import { StringDecoder } from "node:string_decoder";
import { execa } from "execa";
import { atTime, spawnError, stderrTailText } from "../command";
import { trackProcessGroup } from "../process-tree";
import { AgentError, MAX_AGENT_OUTPUT_BYTES } from "../types";
import { terminateRun } from "./run-processes";

/** JSON event streams are far larger than the text in them (ids, usage, tool results). */
export const MAX_CLI_STDOUT_BYTES = 32 * MAX_AGENT_OUTPUT_BYTES;
const STDERR_TAIL_BYTES = 4 * 1024;
/** After the CLI exited, how long its pipes may stay open (a helper that left the group holds them). */
const PIPE_DRAIN_MS = 1_000;

export interface CliInvocation {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, which is then closed. */
  input: string;
  /** `NAME=value` set in `env`, marking every process of this run. */
  marker: string;
  /** Epoch ms by which the run must end. */
  deadline: number;
  signal: AbortSignal;
}

export interface CliExit {
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
}

export interface CliObserver {
  /** One complete stdout line (without its newline). May throw to stop the run (the error is rethrown). */
  line(line: string): void;
  /** What the CLI was last doing about a provider failure (a retry notice), to explain a timeout. */
  retryNotice(): string | undefined;
  /** Output so far, kept with a cancel or timeout error. */
  partialText(): string;
}

/** Why we ended the run ourselves. */
type Stop =
  { kind: "cancelled" } | { kind: "timeout"; afterMs: number } | { kind: "oversized" } | { kind: "observer_failed"; error: unknown };

export async function runCli(invocation: CliInvocation, observer: CliObserver): Promise<CliExit> {
  const startedAt = Date.now();
  const { file, args, signal } = invocation;
  const subprocess = execa(file, args, {
    cwd: invocation.cwd,
    env: invocation.env,
    extendEnv: false,
    // Its own process group, so a cancel reaches everything that stays in it.
    detached: true,
    cleanup: false,
    forceKillAfterDelay: false,
    reject: false,
    buffer: false,
    input: invocation.input,
    stdout: "pipe",
    stderr: "pipe",
  });
  const { pid } = subprocess;
  const exited = new Promise<void>((resolve) => subprocess.once("exit", () => resolve()));
  const untrack = pid === undefined ? () => {} : trackProcessGroup(pid);

  const ended: { by: Stop | null } = { by: null };
  const halt = (reason: Stop) => {
    if (ended.by) return;
    ended.by = reason;
    if (pid !== undefined) terminateRun(pid, invocation.marker);
  };
  // Whatever the CLI left running when it exited on its own goes too.
  void exited.then(() => {
    if (!ended.by && pid !== undefined) terminateRun(pid, invocation.marker);
  });

  let pending = "";
  let stdoutBytes = 0;
  const decoder = new StringDecoder("utf8");
  const deliver = (text: string, final: boolean) => {
    pending += text;
    const lines = pending.split("\n");
    pending = final ? "" : (lines.pop() ?? "");
    for (const raw of lines) {
      const line = raw.replace(/\r$/, "");
      if (line.trim() === "" || ended.by) continue;
      try {
        observer.line(line);
      } catch (error) {
        halt({ kind: "observer_failed", error });
      }
    }
  };
  subprocess.stdout.on("data", (data: Buffer | string) => {
    if (ended.by) return;
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    stdoutBytes += bytes.length;
    if (stdoutBytes > MAX_CLI_STDOUT_BYTES) return halt({ kind: "oversized" });
    deliver(decoder.write(bytes), false);
  });
  let stderrTail = Buffer.alloc(0);
  subprocess.stderr.on("data", (data: Buffer | string) => {
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    stderrTail = Buffer.concat([stderrTail, bytes]).subarray(-STDERR_TAIL_BYTES);
  });
  // A CLI that exits before reading its whole prompt closes stdin under us: not our failure.
  subprocess.stdin?.on("error", () => {});

  const onAbort = () => halt({ kind: "cancelled" });
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  const clearDeadline = atTime(invocation.deadline, () => halt({ kind: "timeout", afterMs: Date.now() - startedAt }));

  try {
    const result = await Promise.race([
      subprocess.then(
        (r) => r,
        () => null,
      ),
      exited.then(() => new Promise<null>((resolve) => setTimeout(() => resolve(null), PIPE_DRAIN_MS).unref())),
    ]);
    subprocess.stdout.destroy();
    subprocess.stderr.destroy();
    if (!ended.by) deliver(decoder.end(), true);
    if (ended.by) throw stopError(ended.by, observer);
    if (pid === undefined) throw spawnError(file, result?.code, result?.originalMessage);
    return { exitCode: subprocess.exitCode, signal: subprocess.signalCode, stderrTail: stderrTailText(stderrTail) };
  } finally {
    clearDeadline();
    signal.removeEventListener("abort", onAbort);
    untrack();
  }
}

function stopError(stop: Stop, observer: CliObserver): Error {
  const partial = observer.partialText();
  switch (stop.kind) {
    case "cancelled":
      return new AgentError("cancelled", "invocation cancelled; the CLI and everything it started were terminated", false, partial);
    case "timeout": {
      const notice = observer.retryNotice();
      const why = notice ? `; it was still retrying after a provider error: ${notice}` : "";
      return new AgentError(
        "timeout",
        `the CLI did not finish before its deadline (${stop.afterMs} ms)${why}; process tree terminated`,
        true,
        partial,
      );
    }
    case "oversized":
      return new AgentError(
        "tool_error",
        `the CLI wrote more than ${MAX_CLI_STDOUT_BYTES} bytes of output; process tree terminated`,
        false,
        partial,
      );
    case "observer_failed":
      // An AgentError from the parser (oversized answer) or the caller's onChunk: hand it back as it is.
      return stop.error instanceof Error ? stop.error : new Error(String(stop.error));
  }
}
