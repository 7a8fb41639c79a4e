// Real-process helpers for end-to-end tests: start a command with its output captured,
// wait for it to answer or exit, find every process it started (through /proc, Linux),
// kill a whole tree the way `kill -9` would, and prove that nothing was left behind.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StartedProcess {
  child: ChildProcess;
  pid: number;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  exited: Promise<ExitStatus>;
}

/** `detached`: the process leads its own process group, like a job a terminal started. */
export function startProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; detached?: boolean },
): StartedProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: options.detached, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exited = new Promise<ExitStatus>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, pid: child.pid, output: () => output, exited };
}

/** The last lines of a process's output, for failure messages. */
export function tail(text: string, lines = 40): string {
  return text.split("\n").slice(-lines).join("\n");
}

export async function waitForExit(proc: StartedProcess, timeoutMs: number): Promise<ExitStatus> {
  const status = await Promise.race([proc.exited, sleep(timeoutMs).then(() => null)]);
  if (!status) throw new Error(`pid ${proc.pid} did not exit within ${timeoutMs} ms; output:\n${tail(proc.output())}`);
  return status;
}

/** Waits until the process printed something matching `pattern`; fails early if it exits. */
export async function waitForOutput(proc: StartedProcess, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: ExitStatus | null = null;
  void proc.exited.then((s) => (exited = s));
  while (!pattern.test(proc.output())) {
    if (exited) throw new Error(`process exited (${JSON.stringify(exited)}) before printing ${pattern}; output:\n${tail(proc.output())}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${tail(proc.output())}`);
    await sleep(100);
  }
}

interface ProcStat {
  pid: number;
  ppid: number;
  state: string;
}

function readStat(pid: number): ProcStat | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid ...": comm may contain spaces and parentheses.
    const [state, ppid] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, ppid: Number(ppid), state: state ?? "?" };
  } catch {
    return null;
  }
}

function allPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** Alive and not a zombie (a zombie holds nothing: no port, no files, no lock). */
export function isAlive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.state !== "Z" && stat.state !== "X";
}

/** Every live descendant of `pid`, parents before children. */
export function descendantsOf(pid: number): number[] {
  const stats = allPids().flatMap((p) => readStat(p) ?? []);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const s of stats) {
      if (s.ppid === parent && s.state !== "Z") {
        found.push(s.pid);
        queue.push(s.pid);
      }
    }
  }
  return found;
}

/** The first live descendant of `pid` whose command line contains `text`. */
export function descendantRunning(pid: number, text: string): number | undefined {
  return descendantsOf(pid).find((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " ").includes(text);
    } catch {
      return false;
    }
  });
}

/** SIGKILL `pid` and all its descendants at once, like `kill -9` on the whole tree. */
export function killTree(pid: number): number[] {
  const pids = [pid, ...descendantsOf(pid)];
  for (const p of pids) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return pids;
}

export interface ProcessInfo {
  pid: number;
  commandLine: string;
}

/**
 * Live processes (other than this one) whose command line or environment mentions `text`:
 * e.g. a data directory, which every process started for it carries in CATCAFE_DATA_DIR
 * even when it renamed itself (next-server) or dropped its arguments.
 */
export function processesMentioning(text: string): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const pid of allPids()) {
    if (pid === process.pid || !isAlive(pid)) continue;
    let commandLine: string;
    let environment: string;
    try {
      commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      environment = fs.readFileSync(`/proc/${pid}/environ`, "utf8");
    } catch {
      continue; // exited meanwhile, or not ours to read
    }
    if (commandLine.includes(text) || environment.includes(text)) found.push({ pid, commandLine });
  }
  return found;
}

export async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(100);
  }
}

/** The pid PostgreSQL recorded in its data directory, or null when it holds no lock file. */
export function postmasterPid(pgDataDir: string): number | null {
  try {
    const pid = Number.parseInt(fs.readFileSync(`${pgDataDir}/postmaster.pid`, "utf8").split("\n")[0] ?? "", 10);
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

export interface HealthBody {
  ok: boolean;
  db: string;
  runners: number;
  version: string;
}

/**
 * Polls a /api/health URL until it answers ok with at least `minRunners` live runners.
 * Fails early, with its output, if `proc` exits meanwhile.
 */
export async function waitForHealth(
  url: string,
  proc: StartedProcess,
  options: { minRunners?: number; timeoutMs: number },
): Promise<HealthBody> {
  const deadline = Date.now() + options.timeoutMs;
  let exited: ExitStatus | null = null;
  void proc.exited.then((s) => (exited = s));
  let last = "no answer";
  while (Date.now() < deadline) {
    if (exited) throw new Error(`process exited (${JSON.stringify(exited)}) before ${url} was healthy; output:\n${tail(proc.output())}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      const body = (await res.json()) as HealthBody;
      if (res.ok && body.ok && body.runners >= (options.minRunners ?? 1)) return body;
      last = `HTTP ${res.status} ${JSON.stringify(body)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(250);
  }
  throw new Error(`${url} not healthy within ${options.timeoutMs} ms (last: ${last}); output:\n${tail(proc.output())}`);
}
