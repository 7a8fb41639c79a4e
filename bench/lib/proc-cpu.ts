// CPU time of processes from /proc (Linux): a process's own user + system time, and a
// PostgreSQL server's whole (the postmaster, its live children, and the children it has
// already reaped, so backends that exit mid-run are still counted). In milliseconds. The
// scale run's process table (bench/scale/procs.ts) reads its entries here too.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

let ticksPerSecond: number | undefined;
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

export interface ProcEntry {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime: its own threads, in clock ticks. */
  self: number;
  /** cutime + cstime: the children it reaped, in clock ticks. */
  reaped: number;
}

/** One process's /proc/<pid>/stat, or null when it has exited. */
export function readEntry(pid: number): ProcEntry | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces) start at field 3, "state".
  const close = text.lastIndexOf(")");
  const comm = text.slice(text.indexOf("(") + 1, close);
  const f = text.slice(close + 2).split(" ");
  return { pid, ppid: Number(f[1]), comm, self: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
}

/** User + system CPU of one process (all its threads), in ms; 0 when it is gone. */
export function processCpuMs(pid: number): number {
  const s = readEntry(pid);
  return s ? (s.self * 1000) / clockTicks() : 0;
}

/** CPU of a postmaster and every process under it, alive or reaped, in ms. */
export function postgresCpuMs(postmasterPid: number): number {
  const root = readEntry(postmasterPid);
  if (!root) throw new Error(`no process ${postmasterPid}`);
  let ticks = root.self + root.reaped;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readEntry(Number(entry));
    if (s?.ppid === postmasterPid) ticks += s.self;
  }
  return (ticks * 1000) / clockTicks();
}

/** The pid of a backend's parent: the postmaster. */
export function parentPid(pid: number): number {
  const s = readEntry(pid);
  if (!s) throw new Error(`no process ${pid}`);
  return s.ppid;
}
