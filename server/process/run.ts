// A short child process run to completion with its output collected (git, probing an agent
// CLI's version): spawnProcess with a timeout, stdout and stderr kept up to a cap.
import { spawnProcess } from "./spawn";

/** Large enough for any diff git prints for a session; a wedged process never fills memory. */
const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

export interface RunProcessOptions {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  input?: string;
  maxOutputBytes?: number;
}

export interface ProcessResult {
  /** null when killed by a signal, timed out or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Set when the process could not be started (ENOENT: no such executable; EACCES; ...). */
  notStarted: { code: string; message: string } | null;
  stdout: string;
  stderr: string;
  /** True when an output stream passed the cap (the rest was dropped). */
  truncated: boolean;
}

export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const stdout = new Collected(cap);
  const stderr = new Collected(cap);
  const end = await spawnProcess({
    file: options.file,
    args: options.args,
    cwd: options.cwd,
    env: options.env,
    input: options.input,
    deadline: Date.now() + options.timeoutMs,
    onStdout: (chunk) => stdout.push(chunk),
    onStderr: (chunk) => stderr.push(chunk),
  }).done;
  const output = { stdout: stdout.text(), stderr: stderr.text(), truncated: stdout.truncated || stderr.truncated };
  if (end.kind === "not_started") {
    return { exitCode: null, signal: null, timedOut: false, notStarted: { code: end.code, message: end.message }, ...output };
  }
  const timedOut = end.stoppedBy?.kind === "timeout";
  return { exitCode: timedOut ? null : end.exitCode, signal: end.signal, timedOut, notStarted: null, ...output };
}

/** The head of a byte stream, up to a cap. */
class Collected {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.bytes;
    if (chunk.length > room) this.truncated = true;
    const kept = chunk.length > room ? chunk.subarray(0, Math.max(0, room)) : chunk;
    this.bytes += kept.length;
    if (kept.length) this.chunks.push(kept);
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}
