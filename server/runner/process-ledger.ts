// The processes a runner's attempts started, written down so that a runner killed with
// SIGKILL (whose exit hooks never ran) leaves nothing running for good: the next runner on
// the same host reads the ledgers of runners that are gone and ends what they left behind.
// One file per runner in CATCAFE_RUNNER_STATE_DIR (default $CATCAFE_DATA_DIR/runners), 0600,
// rewritten whenever a process starts or ends. Pids are checked against their start time.
import fs from "node:fs";
import path from "node:path";
import type { ProcessObserver } from "../process/spawn";
import { killLeftoverGroup, processStartTime } from "../process/tree";

interface LedgerEntry {
  pid: number;
  startTime: number;
  marker?: string;
}

interface LedgerFile {
  runnerId: string;
  runnerPid: number;
  runnerStartTime: number;
  processes: LedgerEntry[];
}

export interface LeftoverReport {
  /** Ledgers of runners that are gone, read and removed. */
  ledgers: number;
  /** Process groups (or marked processes) found still running and killed. */
  killed: number;
}

export class ProcessLedger {
  private readonly entries = new Map<number, LedgerEntry>();
  private readonly file: string;
  /** This process's start time, read once: the ledger is rewritten at every process start and end on a step's path. */
  private readonly runnerStartTime = processStartTime(process.pid) ?? 0;

  constructor(
    private readonly dir: string,
    private readonly runnerId: string,
  ) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = path.join(dir, `${runnerId.replace(/[^\w.-]/g, "_")}.json`);
  }

  /** Reports the processes one attempt starts (pass to observeProcesses). */
  readonly observer: ProcessObserver = {
    spawned: ({ pid, marker }) => {
      this.entries.set(pid, { pid, startTime: processStartTime(pid) ?? 0, marker });
      this.write();
    },
    exited: ({ pid }) => {
      if (this.entries.delete(pid)) this.write();
    },
  };

  /** Removes this runner's ledger (a clean stop). */
  close(): void {
    fs.rmSync(this.file, { force: true });
  }

  private write(): void {
    const body: LedgerFile = {
      runnerId: this.runnerId,
      runnerPid: process.pid,
      runnerStartTime: this.runnerStartTime,
      processes: [...this.entries.values()],
    };
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(body), { mode: 0o600 });
    fs.renameSync(tmp, this.file);
  }

  /**
   * Ends the processes that runners no longer alive on this host left behind, and removes
   * their ledgers. A ledger whose runner still runs (same pid and start time) is left alone.
   */
  static endLeftovers(dir: string, exceptRunnerId?: string): LeftoverReport {
    const report: LeftoverReport = { ledgers: 0, killed: 0 };
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter((n) => n.endsWith(".json"));
    } catch {
      return report;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      let ledger: LedgerFile;
      try {
        ledger = JSON.parse(fs.readFileSync(file, "utf8")) as LedgerFile;
      } catch {
        continue; // being written by its runner this instant, or not ours
      }
      if (ledger.runnerId === exceptRunnerId) continue;
      const alive = processStartTime(ledger.runnerPid);
      if (alive !== null && (ledger.runnerStartTime === 0 || alive === ledger.runnerStartTime)) continue;
      for (const p of ledger.processes) if (killLeftoverGroup(p.pid, p.startTime, p.marker)) report.killed++;
      fs.rmSync(file, { force: true });
      report.ledgers++;
    }
    return report;
  }
}
