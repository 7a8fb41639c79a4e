// Running one agent CLI to completion: no shell, the workspace as cwd, the environment we
// built and nothing else, the prompt on stdin, stdout handed over line by line as it
// arrives, the end of stderr kept for diagnosis, and the whole run (process group,
// descendants, marked processes) ended on cancel, deadline or runaway output.
import { StringDecoder } from "node:string_decoder";
import { spawnProcess, type StopCause } from "../../process/spawn";
import { spawnError, stderrTailText } from "../command";
import { AgentError, MAX_AGENT_OUTPUT_BYTES } from "../types";

/** JSON event streams are far larger than the text in them (ids, usage, tool results). */
export const MAX_CLI_STDOUT_BYTES = 32 * MAX_AGENT_OUTPUT_BYTES;
const STDERR_TAIL_BYTES = 4 * 1024;

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
  signal: NodeJS.Signals | null;
  stderrTail: string;
}

export interface CliObserver {
  /** One complete stdout line (without its newline). May throw to stop the run (the error is rethrown). */
  line(line: string): void;
  /** Text the CLI wrote to stderr, as it arrives (a CLI that reports its retries only there: Gemini CLI). */
  stderr?(text: string): void;
  /** What the CLI was last doing about a provider failure (a retry notice), to explain a timeout. */
  retryNotice(): string | undefined;
  /** Output so far, kept with a cancel or timeout error. */
  partialText(): string;
}

/** Why the adapter ended the run itself (cancel and deadline are the process module's). */
type CliStop = { kind: "oversized" } | { kind: "observer_failed"; error: unknown };

export async function runCli(invocation: CliInvocation, observer: CliObserver): Promise<CliExit> {
  const { file, args } = invocation;
  let pending = "";
  let stdoutBytes = 0;
  const decoder = new StringDecoder("utf8");
  const deliver = (text: string, final: boolean) => {
    pending += text;
    const lines = pending.split("\n");
    pending = final ? "" : (lines.pop() ?? "");
    for (const raw of lines) {
      const line = raw.replace(/\r$/, "");
      if (line.trim() === "" || run.stoppedBy) continue;
      try {
        observer.line(line);
      } catch (error) {
        run.stop({ kind: "observer_failed", error });
      }
    }
  };
  let stderrTail = Buffer.alloc(0);
  const stderrDecoder = new StringDecoder("utf8");
  const run = spawnProcess<CliStop>({
    file,
    args,
    cwd: invocation.cwd,
    env: invocation.env,
    input: invocation.input,
    signal: invocation.signal,
    deadline: invocation.deadline,
    marker: invocation.marker,
    onStdout: (bytes) => {
      if (run.stoppedBy) return;
      stdoutBytes += bytes.length;
      if (stdoutBytes > MAX_CLI_STDOUT_BYTES) return run.stop({ kind: "oversized" });
      deliver(decoder.write(bytes), false);
    },
    onStderr: (bytes) => {
      stderrTail = Buffer.concat([stderrTail, bytes]).subarray(-STDERR_TAIL_BYTES);
      if (!observer.stderr || run.stoppedBy) return;
      try {
        observer.stderr(stderrDecoder.write(bytes));
      } catch (error) {
        run.stop({ kind: "observer_failed", error });
      }
    },
  });

  const end = await run.done;
  if (!run.stoppedBy) deliver(decoder.end(), true);
  if (run.stoppedBy) throw stopError(run.stoppedBy, observer);
  if (end.kind === "not_started") throw spawnError(file, end.code, end.message);
  return { exitCode: end.exitCode, signal: end.signal, stderrTail: stderrTailText(stderrTail) };
}

function stopError(stop: StopCause<CliStop>, observer: CliObserver): Error {
  const partial = observer.partialText();
  if (stop.kind === "caller") return cliStopError(stop.cause, partial);
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
  }
}

function cliStopError(stop: CliStop, partial: string): Error {
  switch (stop.kind) {
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
