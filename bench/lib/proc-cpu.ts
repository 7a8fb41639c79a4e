// CPU time of processes from /proc (Linux): a process's own user + system time, and a
// PostgreSQL server's whole (the postmaster, its live children, and the children it has
// already reaped, so backends that exit mid-run are still counted). In milliseconds.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

interface ProcStat {
  ppid: number;
  /** utime, stime, cutime, cstime in clock ticks. */
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
}

function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces) start at field 3, "state".
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(f[1]), utime: Number(f[11]), stime: Number(f[12]), cutime: Number(f[13]), cstime: Number(f[14]) };
}

/** User + system CPU of one process (all its threads), in ms; 0 when it is gone. */
export function processCpuMs(pid: number): number {
  const s = readStat(pid);
  return s ? ((s.utime + s.stime) * 1000) / clockTicks() : 0;
}

/** CPU of a postmaster and every process under it, alive or reaped, in ms. */
export function postgresCpuMs(postmasterPid: number): number {
  const root = readStat(postmasterPid);
  if (!root) throw new Error(`no process ${postmasterPid}`);
  let ticks = root.utime + root.stime + root.cutime + root.cstime;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s?.ppid === postmasterPid) ticks += s.utime + s.stime;
  }
  return (ticks * 1000) / clockTicks();
}

/** The pid of a backend's parent: the postmaster. */
export function parentPid(pid: number): number {
  const s = readStat(pid);
  if (!s) throw new Error(`no process ${pid}`);
  return s.ppid;
}
