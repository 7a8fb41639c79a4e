// Runs one allowlisted command (req W8): no shell, in the workspace, with a scrubbed
// environment, stdin closed, a timeout and an abort signal that kill the whole process
// tree, and only a bounded tail of its output kept. A refused command never starts.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { execa } from "execa";
import { z } from "zod";
import { AppError } from "../errors";
import type { AllowRule, Allowlist } from "./allowlist";
import { checkCommand, type RefusalCode } from "./check";
import { buildCommandEnv, ZExtraEnv } from "./env";
import { OutputTail } from "./output-tail";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;
export const DEFAULT_KILL_GRACE_MS = 2_000;
/** How long the output pipes may stay open after the command exited (a process that left the group holds them). */
const PIPE_DRAIN_MS = 1_000;

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
}

interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export type CommandOutcome = { status: "refused"; code: RefusalCode; reason: string } | CommandRun;

// Process groups of running commands, killed if this process exits first (execa's own
// cleanup does not apply to detached subprocesses).
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const group of liveGroups) killGroup(group, "SIGKILL");
  });
}

function spawnErrorOf(error: unknown, program: string): SpawnError {
  const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : "UNKNOWN";
  if (code === "ENOENT") return { code, message: `executable not found: \`${program}\`` };
  if (code === "EACCES") return { code, message: `permission denied running \`${program}\`` };
  return { code, message: error instanceof Error ? error.message : String(error) };
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
  const outputFields = () => ({
    stdoutTail: stdout.text(),
    stderrTail: stderr.text(),
    stdoutBytes: stdout.totalBytes,
    stderrBytes: stderr.totalBytes,
    truncated: stdout.truncated || stderr.truncated,
  });
  if (input.signal?.aborted) {
    return { ...base, exitCode: null, signal: null, timedOut: false, cancelled: true, spawnError: null, durationMs: 0, ...outputFields() };
  }

  const home = options.home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "catcafe-cmd-home-")));
  const started = performance.now();
  // Written by the timers and listeners below, read once the command is over.
  const state: { timedOut: boolean; cancelled: boolean; exit: ExitStatus | null } = { timedOut: false, cancelled: false, exit: null };
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, action: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
    return timer;
  };
  let onAbort: (() => void) | undefined;
  try {
    const subprocess = execa(program, args, {
      cwd: options.cwd,
      env: buildCommandEnv({ home, extra: options.env }),
      extendEnv: false,
      shell: false,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      buffer: false,
      reject: false,
      // Its own process group, so the timeout can kill grandchildren too.
      detached: true,
      windowsHide: true,
    });
    const pgid = subprocess.pid;
    subprocess.stdout.on("data", (chunk: Buffer | string) => stdout.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)));
    subprocess.stderr.on("data", (chunk: Buffer | string) => stderr.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)));

    if (pgid !== undefined) {
      trackGroup(pgid);
      let forceKill: NodeJS.Timeout | undefined;
      const terminate = () => {
        if (forceKill || state.exit) return;
        killGroup(pgid, "SIGTERM");
        forceKill = later(options.killGraceMs, () => killGroup(pgid, "SIGKILL"));
      };
      const deadline = later(options.timeoutMs, () => {
        state.timedOut = true;
        terminate();
      });
      onAbort = () => {
        if (state.exit) return;
        state.cancelled = true;
        terminate();
      };
      input.signal?.addEventListener("abort", onAbort, { once: true });
      subprocess.once("exit", (code, signal) => {
        state.exit = { code, signal };
        clearTimeout(deadline);
        clearTimeout(forceKill);
        // Whatever the command left behind in its group (background children) goes too.
        killGroup(pgid, "SIGKILL");
        liveGroups.delete(pgid);
        // A process that left the group may still hold the pipes: stop waiting for them.
        later(PIPE_DRAIN_MS, () => {
          subprocess.stdout.destroy();
          subprocess.stderr.destroy();
        });
      });
    }

    const result = await subprocess;
    const durationMs = Math.round(performance.now() - started);
    if (pgid === undefined) {
      const spawnError = spawnErrorOf(result.cause ?? result, program);
      return { ...base, exitCode: null, signal: null, timedOut: false, cancelled: false, spawnError, durationMs, ...outputFields() };
    }
    return {
      ...base,
      exitCode: state.exit ? state.exit.code : (result.exitCode ?? null),
      signal: state.exit ? state.exit.signal : ((result.signal as NodeJS.Signals | undefined) ?? null),
      timedOut: state.timedOut,
      cancelled: state.cancelled,
      spawnError: null,
      durationMs,
      ...outputFields(),
    };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    if (onAbort) input.signal?.removeEventListener("abort", onAbort);
    if (options.home === undefined) await fs.rm(home, { recursive: true, force: true });
  }
}
