// Runs git for the workspace module: no shell, an explicit minimal environment (nothing of
// the server's own GIT_DIR, credentials or secrets leaks in), hooks disabled, a worktree's
// `.git` file followed only where untrusted code cannot have planted it (process/git-dir.ts),
// and failures turned into AppError carrying git's stderr.
import fs from "node:fs";
import { AppError } from "../errors";
import { minimalEnv } from "../process/env";
import { TamperedWorktreeError, worktreeGitDirs } from "../process/git-dir";
import { runProcess } from "../process/run";

/** Local git operations finish in seconds; this only stops a wedged process from hanging a step. */
const GIT_TIMEOUT_MS = 120_000;

export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunGitOptions {
  /** Extra environment entries for this call only (e.g. the commit author). */
  env?: Record<string, string>;
  /** Return non-zero exits instead of throwing, for commands whose exit code is an answer. */
  allowFailure?: boolean;
  /** Written to git's standard input. */
  input?: string;
  /** Less than the default limit, for a call a person waits on (a delivery's Test). */
  timeoutMs?: number;
}

function gitEnv(extra: Record<string, string> | undefined): Record<string, string> {
  // The server's HOME: git reads the operator's identity and safe.directory settings there.
  return minimalEnv({ home: process.env.HOME ?? "/", locale: "C", extra: { LC_ALL: "C", GIT_TERMINAL_PROMPT: "0", ...extra } });
}

function describe(args: readonly string[]): string {
  return `git ${args.join(" ")}`;
}

/**
 * Runs `git <args>` in `cwd`. Hooks are pointed at /dev/null: a project's hooks (or a file
 * an agent managed to plant there) must not run code when we check out or commit.
 */
export async function runGit(cwd: string, args: readonly string[], options: RunGitOptions = {}): Promise<GitResult> {
  assertTrustedPointer(cwd);
  const fullArgs = ["-c", "core.hooksPath=/dev/null", ...args];
  const result = await runProcess({
    file: "git",
    args: fullArgs,
    cwd,
    env: gitEnv(options.env),
    timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS,
    ...(options.input !== undefined ? { input: options.input } : {}),
  });

  if (result.exitCode === null) {
    // The process never ran (or was killed): a missing cwd or a missing git binary.
    if (!fs.existsSync(cwd)) throw new AppError("NOT_FOUND", `Directory does not exist: ${cwd}`, { cwd });
    if (result.notStarted?.code === "ENOENT") {
      throw new AppError("PRECONDITION_FAILED", "git is not installed or not on PATH", { cwd });
    }
    const why = result.timedOut
      ? `timed out after ${options.timeoutMs ?? GIT_TIMEOUT_MS} ms`
      : (result.notStarted?.message ?? `was killed by ${result.signal ?? "a signal"}`);
    throw new AppError("INTERNAL", `${describe(args)} ${why}`, { cwd, args: [...args] });
  }

  const out: GitResult = { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr.trim() };
  if (out.exitCode === 0 || options.allowFailure) return out;
  throw gitFailure(cwd, args, out);
}

/**
 * Runs `git <args>` for each of `commands` in `cwd`, one after the other, stopping at the first
 * that fails: the same as runGit for each, in one process start (`sh -c`, which `exec`s the last
 * git). The script names the arguments by position only; they are handed to it as they are,
 * never put into its text. For the path between a step's claim and its agent, where each
 * process start counts (docs/scaling.md, "First output and live paint").
 */
export async function runGitSequence(cwd: string, commands: readonly (readonly string[])[]): Promise<GitResult> {
  assertTrustedPointer(cwd);
  let next = 1;
  const lines = commands.map((args, i) => {
    const refs = args.map(() => `"\${${next++}}"`).join(" ");
    return `${i === commands.length - 1 ? "exec " : ""}git -c core.hooksPath=/dev/null ${refs}`;
  });
  const result = await runProcess({
    file: "sh",
    args: ["-c", lines.join(" && "), "sh", ...commands.flat()],
    cwd,
    env: gitEnv(undefined),
    timeoutMs: GIT_TIMEOUT_MS,
  });
  const described = commands.map(describe).join(" && ");
  if (result.exitCode === null) {
    if (!fs.existsSync(cwd)) throw new AppError("NOT_FOUND", `Directory does not exist: ${cwd}`, { cwd });
    const why = result.timedOut
      ? `timed out after ${GIT_TIMEOUT_MS} ms`
      : (result.notStarted?.message ?? `was killed by ${result.signal ?? "a signal"}`);
    throw new AppError("INTERNAL", `${described} ${why}`, { cwd, args: commands.flat() });
  }
  const out: GitResult = { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr.trim() };
  if (out.exitCode === 0) return out;
  throw gitFailure(cwd, commands.flat(), out, described);
}

/** A worktree whose `.git` file untrusted code redirected is refused before git reads its config. */
function assertTrustedPointer(cwd: string): void {
  if (!fs.existsSync(cwd)) return;
  try {
    worktreeGitDirs(cwd);
  } catch (error) {
    if (error instanceof TamperedWorktreeError) throw new AppError("PRECONDITION_FAILED", error.message, { cwd });
    throw error;
  }
}

export function gitFailure(cwd: string, args: readonly string[], result: GitResult, described = describe(args)): AppError {
  const details = { cwd, args: [...args], exitCode: result.exitCode, stderr: result.stderr };
  const message = `${described} failed (exit ${result.exitCode}): ${result.stderr || "no output"}`;
  // Two git processes in one workspace at once is a concurrency conflict, not a crash.
  if (result.stderr.includes("index.lock")) return new AppError("CONFLICT", message, details);
  return new AppError("INTERNAL", message, details);
}
