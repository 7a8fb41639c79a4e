// The process ledger (server/runner/process-ledger.ts), with real processes: what a runner's
// attempts start is written down (0600) while it runs, and the next runner on the host ends
// what a runner that is gone left behind — only that: a live runner's ledger, its own, and a
// pid that now belongs to another process are left alone.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ProcessLedger } from "../../server/runner/process-ledger";
import { processStartTime } from "../../server/process/tree";
import { isAlive, waitUntil } from "../helpers/processes";

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-ledger-"));

/** A process left running, leading its own process group (as the runner starts agents and commands). */
function leftover(): number {
  const child = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
  started.push(child);
  return child.pid!;
}

/** The pid of a process that has exited: a runner that is gone. */
function gonePid(): number {
  const r = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(r.stdout.trim());
}

function writeLedger(dir: string, name: string, body: unknown): string {
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, typeof body === "string" ? body : JSON.stringify(body));
  return file;
}

/** The ledger of a runner that is gone, which left `pid` (recorded with `startTime`) running. */
const goneRunnerLedger = (dir: string, pid: number, startTime: number) =>
  writeLedger(dir, "gone", { runnerId: "gone", runnerPid: gonePid(), runnerStartTime: 1, processes: [{ pid, startTime }] });

describe("a runner's own ledger", () => {
  it("lists the processes its attempts started while they run (0600, named after the runner), and is removed on a clean stop", () => {
    const dir = tempDir();
    const ledger = new ProcessLedger(dir, "host/runner 1");
    const file = path.join(dir, "host_runner_1.json");
    const pid = leftover();
    ledger.observer.spawned({ pid, file: "sleep", marker: "CATCAFE_ATTEMPT=abc" });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({
      runnerId: "host/runner 1",
      runnerPid: process.pid,
      runnerStartTime: processStartTime(process.pid),
      processes: [{ pid, startTime: processStartTime(pid), marker: "CATCAFE_ATTEMPT=abc" }],
    });
    ledger.observer.exited({ pid });
    expect(JSON.parse(fs.readFileSync(file, "utf8")).processes).toEqual([]);
    ledger.close();
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("ending what gone runners left", () => {
  it("kills the process groups a gone runner left running and removes its ledger", async () => {
    const dir = tempDir();
    const pid = leftover();
    const file = goneRunnerLedger(dir, pid, processStartTime(pid)!);
    expect(ProcessLedger.endLeftovers(dir, "me")).toEqual({ ledgers: 1, killed: 1 });
    await waitUntil(() => !isAlive(pid), 5_000, "the leftover killed");
    expect(fs.existsSync(file)).toBe(false);
  });

  it("never signals a pid that now belongs to another process (its start time differs), but still removes the ledger", () => {
    const dir = tempDir();
    const pid = leftover();
    const file = goneRunnerLedger(dir, pid, processStartTime(pid)! + 1);
    expect(ProcessLedger.endLeftovers(dir)).toEqual({ ledgers: 1, killed: 0 });
    expect(isAlive(pid)).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("leaves alone the ledger of a runner that still runs (same pid and start time, or no start time recorded), and its own", () => {
    const dir = tempDir();
    const pid = leftover();
    const processes = [{ pid, startTime: processStartTime(pid) }];
    const live = writeLedger(dir, "live", {
      runnerId: "live",
      runnerPid: process.pid,
      runnerStartTime: processStartTime(process.pid),
      processes,
    });
    const unknownStart = writeLedger(dir, "unknown-start", {
      runnerId: "unknown-start",
      runnerPid: process.pid,
      runnerStartTime: 0,
      processes,
    });
    const own = writeLedger(dir, "me", { runnerId: "me", runnerPid: gonePid(), runnerStartTime: 1, processes });
    expect(ProcessLedger.endLeftovers(dir, "me")).toEqual({ ledgers: 0, killed: 0 });
    expect(isAlive(pid)).toBe(true);
    for (const file of [live, unknownStart, own]) expect(fs.existsSync(file)).toBe(true);
  });

  it("a pid reused by another runner (same pid, another start time) counts as gone", async () => {
    const dir = tempDir();
    const pid = leftover();
    writeLedger(dir, "previous", {
      runnerId: "previous",
      runnerPid: process.pid,
      runnerStartTime: processStartTime(process.pid)! - 1,
      processes: [{ pid, startTime: processStartTime(pid) }],
    });
    expect(ProcessLedger.endLeftovers(dir)).toEqual({ ledgers: 1, killed: 1 });
    await waitUntil(() => !isAlive(pid), 5_000, "the leftover killed");
  });

  it("a runner gone that recorded no start time counts as gone", async () => {
    const dir = tempDir();
    const pid = leftover();
    writeLedger(dir, "gone", {
      runnerId: "gone",
      runnerPid: gonePid(),
      runnerStartTime: 0,
      processes: [{ pid, startTime: processStartTime(pid) }],
    });
    expect(ProcessLedger.endLeftovers(dir)).toEqual({ ledgers: 1, killed: 1 });
    await waitUntil(() => !isAlive(pid), 5_000, "the leftover killed");
  });

  it("a gone runner's ledger that another runner removes between the read and the removal: no error", () => {
    const dir = tempDir();
    const file = writeLedger(dir, "gone", { runnerId: "gone", runnerPid: gonePid(), runnerStartTime: 1, processes: [] });
    // The other runner on this host, ending the same leftovers at the same moment, removes it first.
    const read = fs.readFileSync;
    const spy = vi.spyOn(fs, "readFileSync").mockImplementation(((...args: Parameters<typeof fs.readFileSync>) => {
      const text = read(...args);
      if (args[0] === file) fs.rmSync(file);
      return text;
    }) as typeof fs.readFileSync);
    try {
      expect(ProcessLedger.endLeftovers(dir)).toEqual({ ledgers: 1, killed: 0 });
    } finally {
      spy.mockRestore();
    }
  });

  it("skips a ledger it cannot read (being written this instant), a ledger's temporary file, other files, and a directory that does not exist", () => {
    const dir = tempDir();
    const torn = writeLedger(dir, "torn", '{"runnerId": "torn", "runnerPid": ');
    fs.writeFileSync(path.join(dir, "notes.txt"), "not a ledger");
    // A ledger's temporary file, before its rename: not a ledger yet.
    const pid = leftover();
    const tmp = path.join(dir, "gone.json.tmp");
    fs.writeFileSync(
      tmp,
      JSON.stringify({
        runnerId: "gone",
        runnerPid: gonePid(),
        runnerStartTime: 1,
        processes: [{ pid, startTime: processStartTime(pid) }],
      }),
    );
    expect(ProcessLedger.endLeftovers(dir)).toEqual({ ledgers: 0, killed: 0 });
    expect(fs.existsSync(torn)).toBe(true);
    expect(fs.existsSync(tmp)).toBe(true);
    expect(isAlive(pid)).toBe(true);
    expect(ProcessLedger.endLeftovers(path.join(dir, "missing"))).toEqual({ ledgers: 0, killed: 0 });
  });
});
