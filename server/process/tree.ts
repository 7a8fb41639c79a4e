// Ending a child's whole process tree. Children are spawned detached, so each leads its own
// process group and everything it starts (unless it calls setsid) shares that group:
// signalling the group reaches grandchildren that outlive their parent. Some programs start
// helpers that leave the group (Codex runs each command in a sandbox with its own session), so
// a run may also carry a marker variable (`NAME=value` in its environment): on Linux every
// live process carrying it is found through /proc, even one orphaned and reparented before we
// looked. Processes are matched by pid and start time, so a recycled pid is never signalled.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

/** How long a group gets to exit after SIGTERM before SIGKILL. */
export const KILL_GRACE_MS = 500;

/**
 * Sends `signal` to every process in the group `pgid`; false when it could not (the group is
 * gone, or is not ours to signal). Never throws: it runs from timers and exit hooks.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the group now, SIGKILL to whatever is left of it after `graceMs`. */
export function terminateProcessGroup(pgid: number, graceMs = KILL_GRACE_MS): void {
  if (!signalProcessGroup(pgid, "SIGTERM")) return;
  // unref: a pending SIGKILL must not keep a finishing runner alive.
  setTimeout(() => signalProcessGroup(pgid, "SIGKILL"), graceMs).unref();
}

// Groups still running when this process exits (a crash, process.exit) are killed rather
// than left behind: detached children are not cleaned up by Node itself.
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Remembers `pgid` until the returned function is called; kills it if this process exits first. */
export function trackProcessGroup(pgid: number): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const group of liveGroups) signalProcessGroup(group, "SIGKILL");
    });
  }
  liveGroups.add(pgid);
  return () => liveGroups.delete(pgid);
}

/** Set in the environment of every marked run; its value is unique per run. */
export const RUN_MARKER_ENV = "CATCAFE_AGENT_RUN";

interface ProcessEntry {
  pid: number;
  ppid: number;
  /** Start time (clock ticks since boot, Linux) so a recycled pid is never signalled; 0 when unknown. */
  startTime: number;
}

const hasProc = process.platform === "linux" && fs.existsSync("/proc/self/stat");

function readProcStat(pid: number): ProcessEntry | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid ...": comm may contain spaces and parentheses.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z" || fields[0] === "X") return null;
    return { pid, ppid: Number(fields[1]), startTime: Number(fields[19]) };
  } catch {
    return null;
  }
}

function processTable(): ProcessEntry[] {
  if (hasProc) {
    return fs
      .readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .flatMap((name) => readProcStat(Number(name)) ?? []);
  }
  try {
    const out = execFileSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8", timeout: 2_000 });
    return out
      .split("\n")
      .map((line) => line.trim().split(/\s+/).map(Number))
      .filter(([pid, ppid]) => Number.isInteger(pid) && Number.isInteger(ppid))
      .map(([pid, ppid]) => ({ pid: pid!, ppid: ppid!, startTime: 0 }));
  } catch {
    return [];
  }
}

function carriesMarker(pid: number, marker: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(marker);
  } catch {
    return false;
  }
}

/** The live processes of a run: `rootPid`, its descendants, and whatever carries `marker` (NAME=value). */
function runProcesses(rootPid: number, marker: string): ProcessEntry[] {
  const table = processTable();
  const found = new Map<number, ProcessEntry>();
  const root = table.find((p) => p.pid === rootPid);
  if (root) found.set(root.pid, root);
  const queue = [rootPid];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const p of table) {
      if (p.ppid === parent && !found.has(p.pid)) {
        found.set(p.pid, p);
        queue.push(p.pid);
      }
    }
  }
  if (hasProc) {
    for (const p of table) if (p.pid !== process.pid && !found.has(p.pid) && carriesMarker(p.pid, marker)) found.set(p.pid, p);
  }
  return [...found.values()];
}

function signalProcess(entry: ProcessEntry, signal: NodeJS.Signals): void {
  if (entry.startTime !== 0 && readProcStat(entry.pid)?.startTime !== entry.startTime) return;
  try {
    process.kill(entry.pid, signal);
  } catch {
    // gone already, or not ours
  }
}

/**
 * SIGTERM to the run's group and every process of the run now; SIGKILL to all of them,
 * looked up again, after `graceMs`. Never throws.
 */
export function terminateRun(rootPid: number, marker: string, graceMs = KILL_GRACE_MS): void {
  const first = runProcesses(rootPid, marker);
  signalProcessGroup(rootPid, "SIGTERM");
  for (const p of first) signalProcess(p, "SIGTERM");
  // unref: a pending SIGKILL must not keep a finishing runner alive.
  setTimeout(() => {
    signalProcessGroup(rootPid, "SIGKILL");
    const again = new Map(first.map((p) => [p.pid, p]));
    for (const p of runProcesses(rootPid, marker)) again.set(p.pid, p);
    for (const p of again.values()) signalProcess(p, "SIGKILL");
  }, graceMs).unref();
}

/** The start time of `pid` (clock ticks since boot, Linux), or null when it is not running. */
export function processStartTime(pid: number): number | null {
  return readProcStat(pid)?.startTime ?? null;
}

/**
 * Ends what is left of a process group started by a process that is gone (a runner killed
 * with SIGKILL): SIGKILL to the group and to every process carrying `marker`, but only if
 * the group's leader is still the process recorded (same start time), so a recycled pid is
 * never signalled. True when something was signalled.
 */
export function killLeftoverGroup(pgid: number, startTime: number, marker?: string): boolean {
  const leader = readProcStat(pgid);
  let killed = false;
  if (leader && (startTime === 0 || leader.startTime === startTime)) killed = signalProcessGroup(pgid, "SIGKILL");
  if (marker && hasProc) {
    for (const p of processTable()) {
      if (p.pid !== process.pid && carriesMarker(p.pid, marker)) {
        signalProcess(p, "SIGKILL");
        killed = true;
      }
    }
  }
  return killed;
}
