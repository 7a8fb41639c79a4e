// Runs one allowlisted command (req W8): no shell, in the workspace, with a scrubbed
// environment, stdin closed, a timeout and an abort signal that kill the whole process
// tree, and only a bounded tail of its output kept. A refused command never starts.
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { AppError } from "../errors";
import type { AllowRule, Allowlist } from "./allowlist";
import { checkCommand, type RefusalCode } from "./check";
import { buildCommandEnv, ZExtraEnv } from "./env";
import { OutputTail } from "../process/output-tail";
import { repositoryView } from "../process/git-dir";
import { agentHomesPath, inSandbox, unwrapExit } from "../process/sandbox";
import { spawnProcess } from "../process/spawn";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;
export const DEFAULT_KILL_GRACE_MS = 2_000;

/** Everything about a run except the abort signal, validated once. */
export const ZRunCommandInput = z.object({
  argv: z.array(z.string()),
  cwd: z.string().refine((dir) => path.isAbsolute(dir), "the workspace must be an absolute path"),
  timeoutMs: z.number().int().positive().max(3_600_000).default(DEFAULT_TIMEOUT_MS),
  maxOutputBytes: z
    .number()
    .int()
    .nonnegative()
    .max(16 * 1024 * 1024)
    .default(DEFAULT_MAX_OUTPUT_BYTES),
  killGraceMs: z.number().int().nonnegative().max(60_000).default(DEFAULT_KILL_GRACE_MS),
  env: ZExtraEnv.default({}),
  /** HOME for the command; by default a fresh temporary directory, removed afterwards. */
  home: z
    .string()
    .refine((dir) => path.isAbsolute(dir), "HOME must be an absolute path")
    .optional(),
});
export type TRunCommandInput = z.input<typeof ZRunCommandInput> & { allowlist: Allowlist; signal?: AbortSignal };

export interface SpawnError {
  code: string;
  message: string;
}

export interface CommandRun {
  status: "ran";
  argv: string[];
  rule: AllowRule;
  /** null when killed by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  timeoutMs: number;
  cancelled: boolean;
  /** Set when the process could not be started (ENOENT: executable not found, EACCES, ...). */
  spawnError: SpawnError | null;
  durationMs: number;
  stdoutTail: string;
  stderrTail: string;
  stdoutBytes: number;
  stderrBytes: number;
  /** True when either stream printed more than the cap and only its tail was kept. */
  truncated: boolean;
  /** Whether it ran in the sandbox (bubblewrap). */
  sandboxed: boolean;
}

export type CommandOutcome = { status: "refused"; code: RefusalCode; reason: string } | CommandRun;

function spawnErrorOf(code: string, detail: string, program: string): SpawnError {
  if (code === "ENOENT") return { code, message: `executable not found: \`${program}\`` };
  if (code === "EACCES") return { code, message: `permission denied running \`${program}\`` };
  return { code, message: `could not start \`${program}\`: ${detail}` };
}

async function assertDirectory(dir: string): Promise<void> {
  const stat = await fs.stat(dir).catch(() => null);
  if (!stat?.isDirectory())
    throw new AppError("PRECONDITION_FAILED", `workspace ${dir} does not exist or is not a directory`, { cwd: dir });
}

/**
 * Runs argv if the allowlist allows it. Resolves with `refused` (nothing started) or `ran`
 * (whatever the exit); throws AppError only for bad options or a missing workspace.
 */
export async function runCommand(input: TRunCommandInput): Promise<CommandOutcome> {
  const parsed = ZRunCommandInput.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "options"}: ${issue.message}`).join("; ");
    throw new AppError("INVALID_INPUT", `invalid command options: ${issues}`, { issues: parsed.error.issues });
  }
  const options = parsed.data;
  const check = checkCommand(options.argv, input.allowlist, { workspace: options.cwd });
  if (!check.allowed) return { status: "refused", code: check.code, reason: check.reason };
  await assertDirectory(options.cwd);

  const [program, ...args] = options.argv as [string, ...string[]];
  const stdout = new OutputTail(options.maxOutputBytes);
  const stderr = new OutputTail(options.maxOutputBytes);
  const base = { status: "ran" as const, argv: options.argv, rule: check.rule, timeoutMs: options.timeoutMs };
  let sandboxed = false;
  const outputFields = () => ({
    sandboxed,
    stdoutTail: stdout.text(),
    stderrTail: stderr.text(),
    stdoutBytes: stdout.totalBytes,
    stderrBytes: stderr.totalBytes,
    truncated: stdout.truncated || stderr.truncated,
  });
  if (input.signal?.aborted) {
    return { ...base, exitCode: null, signal: null, timedOut: false, cancelled: true, spawnError: null, durationMs: 0, ...outputFields() };
  }

  // The run's own directory: its HOME (unless the caller gives one) and the sandbox's git config.
  await fs.mkdir(agentHomesPath(), { recursive: true, mode: 0o700 });
  const runDir = await fs.mkdtemp(path.join(agentHomesPath(), "command-"));
  const home = options.home ?? path.join(runDir, "home");
  try {
    const tmp = path.join(runDir, "tmp");
    await fs.mkdir(home, { recursive: true });
    await fs.mkdir(tmp);
    const env = buildCommandEnv({ home, tmp, extra: options.env });
    // Repository code: only the worktree and its own HOME writable, no network, nothing else of the host.
    const boxed = inSandbox(program, args, options.cwd, env, {
      writable: [options.cwd, home, tmp],
      ...(await repositoryView(options.cwd, runDir)),
      network: false,
    });
    sandboxed = boxed.sandboxed;
    const ended = await spawnProcess({
      file: boxed.file,
      args: boxed.args,
      cwd: options.cwd,
      env,
      signal: input.signal,
      deadline: Date.now() + options.timeoutMs,
      killGraceMs: options.killGraceMs,
      onStdout: (chunk) => stdout.push(chunk),
      onStderr: (chunk) => stderr.push(chunk),
    }).done;
    const end = ended.kind === "exited" ? unwrapExit(ended, sandboxed) : ended;
    const stopped = { timedOut: end.stoppedBy?.kind === "timeout", cancelled: end.stoppedBy?.kind === "cancelled" };
    if (end.kind === "not_started") {
      const spawnError = spawnErrorOf(end.code, end.message, program);
      return { ...base, exitCode: null, signal: null, ...stopped, spawnError, durationMs: end.durationMs, ...outputFields() };
    }
    return {
      ...base,
      exitCode: end.exitCode,
      signal: end.signal,
      ...stopped,
      spawnError: null,
      durationMs: end.durationMs,
      ...outputFields(),
    };
  } finally {
    await fs.rm(runDir, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
  }
}
