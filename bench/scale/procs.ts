// Linux /proc readings for the scale run: the process table (who is whose child), a
// process's resident memory (VmRSS), the CPU of a process tree (live members and the
// children they already reaped) and of the whole machine. Entries are read by
// bench/lib/proc-cpu.ts.
import fs from "node:fs";
import { clockTicks, readEntry, type ProcEntry } from "../lib/proc-cpu";

/** Every process now, by pid. */
export function processTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const e = readEntry(Number(name));
    if (e) table.set(e.pid, e);
  }
  return table;
}

/** The pids under `root` (not itself), in the table. */
export function descendants(table: Map<number, ProcEntry>, root: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of table.values()) {
    const list = children.get(e.ppid);
    if (list) list.push(e.pid);
    else children.set(e.ppid, [e.pid]);
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Resident memory of a process, in kB (0 when it is gone). */
export function rssKb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** CPU (ms) of `root`'s own threads, without its children. */
export function ownCpuMs(table: Map<number, ProcEntry>, root: number): number {
  return ((table.get(root)?.self ?? 0) * 1000) / clockTicks();
}

/** CPU (ms) of `root` and every live process under it, each with the children it reaped. */
export function treeCpuMs(table: Map<number, ProcEntry>, root: number): number {
  const ticks = [root, ...descendants(table, root)].reduce(
    (sum, pid) => sum + (table.get(pid)?.self ?? 0) + (table.get(pid)?.reaped ?? 0),
    0,
  );
  return (ticks * 1000) / clockTicks();
}

/** The machine's CPU counters from /proc/stat: busy and total jiffies over all cores. */
export function machineCpu(): { busy: number; total: number; cores: number } {
  const text = fs.readFileSync("/proc/stat", "utf8");
  const first = text.split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (first[3] ?? 0) + (first[4] ?? 0);
  const total = first.reduce((a, b) => a + b, 0);
  const cores = text.split("\n").filter((l) => /^cpu\d+ /.test(l)).length;
  return { busy: total - idle, total, cores };
}
