// Every child process of the server starts here: no shell, the environment the caller built
// (server/process/env.ts) and nothing else, its own process group, and one way to end it —
// on the caller's abort signal, at its deadline, or when the caller stops it — that takes the
// whole tree (tree.ts). Output is handed over as it arrives; after the child exits, pipes held
// open by a descendant that left the group are abandoned after a short drain, and whatever
// the child left running in its group is ended too.
//
// The seams for what comes next sit here, so callers never change for them: every spawn is
// reported to the observer of the current async context (`observeProcesses`: the runner
// records an attempt's process groups to clean up after a crash), and a sandbox (bubblewrap
// around agents and commands) wraps `file`/`args` in this one place.
import { AsyncLocalStorage } from "node:async_hooks";
import { performance } from "node:perf_hooks";
import path from "node:path";
import { execa } from "execa";
import { markFailed, tracer } from "../tracing/spans";
import { atTime } from "../deadline";
import { KILL_GRACE_MS, terminateProcessGroup, terminateRun, trackProcessGroup } from "./tree";

/** After the child exited, how long its pipes may stay open (a helper that left the group holds them). */
const PIPE_DRAIN_MS = 1_000;

export interface SpawnOptions<C> {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment (build it with minimalEnv); nothing is inherited. */
  env: Record<string, string>;
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  input?: string;
  /** Aborting it stops the process tree (`cancelled`). */
  signal?: AbortSignal;
  /** Epoch ms at which the process tree is stopped (`timeout`). */
  deadline?: number;
  /** SIGTERM first, SIGKILL after this long. */
  killGraceMs?: number;
  /** `NAME=value` set in `env`, marking every process of this run (finds helpers that left the group). */
  marker?: string;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /** Only to type `stop(cause)`: what a caller's own reasons to stop look like. */
  stopCause?: C;
}

/** Why the process tree was ended before the child finished on its own. */
export type StopCause<C> = { kind: "cancelled" } | { kind: "timeout"; afterMs: number } | { kind: "caller"; cause: C };

export type ProcessEnd<C> =
  | {
      kind: "exited";
      /** null when killed by a signal. */
      exitCode: number | null;
      signal: NodeJS.Signals | null;
      /** Set when we ended it (cancel, deadline, the caller's stop), null when it finished by itself. */
      stoppedBy: StopCause<C> | null;
      durationMs: number;
    }
  | { kind: "not_started"; code: string; message: string; stoppedBy: StopCause<C> | null; durationMs: number };

export interface ProcessHandle<C> {
  readonly pid: number | undefined;
  /** Ends the process tree (once; later calls are ignored) and records why. */
  stop(cause: C): void;
  /** Why we are ending the tree (cancel, deadline or stop), once we are: later output is moot. */
  readonly stoppedBy: StopCause<C> | null;
  readonly done: Promise<ProcessEnd<C>>;
}

/** Told about every process started inside `observeProcesses` (the runner: one attempt's processes). */
export interface ProcessObserver {
  spawned(process: { pid: number; file: string; marker?: string }): void;
  exited(process: { pid: number }): void;
}

const observers = new AsyncLocalStorage<ProcessObserver>();

/** Runs `fn` with every process it starts (however deep in the call) reported to `observer`. */
export function observeProcesses<T>(observer: ProcessObserver, fn: () => T): T {
  return observers.run(observer, fn);
}

export function spawnProcess<C = never>(options: SpawnOptions<C>): ProcessHandle<C> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const observer = observers.getStore();
  // A span per process (docs/operations.md, "Traces"): its executable's name and how it ended,
  // never its arguments or environment (a prompt can be an argument).
  const span = tracer().startSpan(`process ${path.basename(options.file)}`, {
    attributes: { "process.executable.name": path.basename(options.file) },
  });
  const subprocess = execa(options.file, options.args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    shell: false,
    // Its own process group, so stopping it reaches everything it started.
    detached: true,
    cleanup: false,
    forceKillAfterDelay: false,
    reject: false,
    buffer: false,
    windowsHide: true,
    ...(options.input !== undefined ? { input: options.input } : { stdin: "ignore" as const }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const { pid } = subprocess;
  // Holders rather than `let`s: they are set from callbacks, which TypeScript's narrowing ignores.
  const state: { exit: { code: number | null; signal: NodeJS.Signals | null } | null; stoppedBy: StopCause<C> | null } = {
    exit: null,
    stoppedBy: null,
  };
  const exited = new Promise<void>((resolve) =>
    subprocess.once("exit", (code, signal) => {
      state.exit = { code, signal };
      resolve();
    }),
  );
  const untrack = pid === undefined ? () => {} : trackProcessGroup(pid);
  if (pid !== undefined) observer?.spawned({ pid, file: options.file, marker: options.marker });

  const graceMs = options.killGraceMs ?? KILL_GRACE_MS;
  const endTree = () => {
    if (pid === undefined) return;
    if (options.marker) terminateRun(pid, options.marker, graceMs);
    else terminateProcessGroup(pid, graceMs);
  };
  const halt = (cause: StopCause<C>) => {
    // A cancel or deadline after the child exited changes nothing; the caller's own stop (say,
    // output over its cap arriving while the pipes drain) is still recorded.
    if (state.stoppedBy || (state.exit && cause.kind !== "caller")) return;
    state.stoppedBy = cause;
    endTree();
  };
  // Whatever the child left running when it exited on its own goes too.
  void exited.then(() => {
    if (!state.stoppedBy) endTree();
  });

  subprocess.stdout.on("data", (data: Buffer | string) => options.onStdout?.(typeof data === "string" ? Buffer.from(data) : data));
  subprocess.stderr.on("data", (data: Buffer | string) => options.onStderr?.(typeof data === "string" ? Buffer.from(data) : data));
  // A child that exits before reading all of its input closes stdin under us: not our failure.
  subprocess.stdin?.on("error", () => {});

  const onAbort = () => halt({ kind: "cancelled" });
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const clearDeadline =
    options.deadline === undefined ? () => {} : atTime(options.deadline, () => halt({ kind: "timeout", afterMs: elapsed() }));

  const done = (async (): Promise<ProcessEnd<C>> => {
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
      if (pid === undefined) {
        const code = result?.code ?? "UNKNOWN";
        markFailed(span, null, code);
        return { kind: "not_started", code, message: result?.originalMessage ?? code, stoppedBy: state.stoppedBy, durationMs: elapsed() };
      }
      const status = state.exit ?? { code: subprocess.exitCode ?? null, signal: (subprocess.signalCode as NodeJS.Signals | null) ?? null };
      span.setAttributes({
        ...(status.code !== null ? { "process.exit.code": status.code } : {}),
        ...(status.signal ? { "catcafe.process.signal": status.signal } : {}),
        ...(state.stoppedBy ? { "catcafe.process.stopped_by": state.stoppedBy.kind } : {}),
      });
      return { kind: "exited", exitCode: status.code, signal: status.signal, stoppedBy: state.stoppedBy, durationMs: elapsed() };
    } finally {
      span.end();
      clearDeadline();
      options.signal?.removeEventListener("abort", onAbort);
      untrack();
      if (pid !== undefined) observer?.exited({ pid });
    }
  })();

  return {
    pid,
    stop: (cause) => halt({ kind: "caller", cause }),
    get stoppedBy() {
      return state.stoppedBy;
    },
    done,
  };
}
