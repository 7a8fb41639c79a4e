// The parent's side of ./worker-process.ts: starts N worker processes of one system, waits
// until each has loaded and connected, starts and stops their consumers, adds up the steps
// they finished, reads their CPU from /proc, and ends them (SIGKILL after a grace period,
// and at the latest when the bench process exits, so a failed run leaves none behind).
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { processCpuMs } from "../lib/proc-cpu";
import type { FromWorker, ToWorker, WorkerSystem } from "./worker-process";

const WORKER_FILE = path.join(import.meta.dirname, "worker-process.ts");
const READY_TIMEOUT_MS = 60_000;
const REPLY_TIMEOUT_MS = 30_000;
const EXIT_GRACE_MS = 5_000;

interface Worker {
  child: ChildProcess;
  finished: number;
  waiters: Array<{ type: FromWorker["type"]; resolve: () => void; reject: (err: Error) => void }>;
  failure: Error | null;
}

export class WorkerFleet {
  private readonly workers: Worker[] = [];
  private readonly killAll = () => {
    for (const w of this.workers) w.child.kill("SIGKILL");
  };
  private onProgress: (() => void) | null = null;

  private constructor(readonly system: WorkerSystem) {
    process.on("exit", this.killAll);
  }

  /** Starts `size` worker processes (consumers stopped) and waits until all are ready. */
  static async spawn(system: WorkerSystem, url: string, size: number, concurrency: number): Promise<WorkerFleet> {
    const fleet = new WorkerFleet(system);
    try {
      for (let i = 0; i < size; i++) fleet.add(url, concurrency);
      await Promise.all(fleet.workers.map((w) => fleet.reply(w, "ready", READY_TIMEOUT_MS)));
      return fleet;
    } catch (err) {
      await fleet.close();
      throw err;
    }
  }

  private add(url: string, concurrency: number): void {
    const child = fork(WORKER_FILE, [this.system, url, String(concurrency)], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const w: Worker = { child, finished: 0, waiters: [], failure: null };
    const fail = (err: Error) => {
      w.failure ??= err;
      for (const waiter of w.waiters.splice(0)) waiter.reject(err);
      this.onProgress?.();
    };
    child.on("message", (msg: FromWorker) => {
      if (msg.type === "done") {
        w.finished = msg.count;
        this.onProgress?.();
      } else if (msg.type === "error") fail(new Error(`${this.system} worker ${child.pid}: ${msg.message}`));
      else {
        const i = w.waiters.findIndex((x) => x.type === msg.type);
        if (i >= 0) w.waiters.splice(i, 1)[0]!.resolve();
      }
    });
    child.on("exit", (code, signal) => fail(new Error(`${this.system} worker ${child.pid} exited (${signal ?? code})`)));
    child.on("error", fail);
    this.workers.push(w);
  }

  private reply(w: Worker, type: FromWorker["type"], timeoutMs: number): Promise<void> {
    if (w.failure) return Promise.reject(w.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.system} worker ${w.child.pid}: no "${type}" within ${timeoutMs} ms`)),
        timeoutMs,
      );
      w.waiters.push({
        type,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
    });
  }

  private command(count: number, msg: ToWorker, reply: FromWorker["type"]): Promise<void> {
    const chosen = this.workers.slice(0, count);
    if (chosen.length < count) throw new Error(`${this.system}: only ${this.workers.length} workers`);
    const replies = chosen.map((w) => this.reply(w, reply, REPLY_TIMEOUT_MS));
    for (const w of chosen) w.child.send(msg);
    return Promise.all(replies).then(() => {});
  }

  get size(): number {
    return this.workers.length;
  }

  /** Starts the consumers of the first `count` workers. */
  start(count: number): Promise<void> {
    return this.command(count, { type: "start" }, "started");
  }

  /** Stops the consumers of the first `count` workers (in-flight steps finish first). */
  stop(count: number): Promise<void> {
    return this.command(count, { type: "stop" }, "stopped");
  }

  /** Steps finished by all workers since they were spawned. */
  finished(): number {
    return this.workers.reduce((s, w) => s + w.finished, 0);
  }

  /** Resolves once the workers have finished `target` steps in all; rejects when one fails. */
  waitFinished(target: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.onProgress = null;
        reject(new Error(`${this.system}: ${this.finished()} of ${target} steps finished after ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        const failed = this.workers.find((w) => w.failure);
        if (!failed && this.finished() < target) return;
        clearTimeout(timer);
        this.onProgress = null;
        if (failed) reject(failed.failure!);
        else resolve();
      };
      this.onProgress = check;
      check();
    });
  }

  /** CPU (user + system) used so far by the first `count` workers, in ms. */
  cpuMs(count = this.workers.length): number {
    return this.workers.slice(0, count).reduce((s, w) => s + processCpuMs(w.child.pid!), 0);
  }

  /** Asks every worker to exit; kills those still there after a grace period. */
  async close(): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        if (w.child.exitCode !== null || w.child.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => w.child.once("exit", () => resolve()));
        if (w.child.connected) w.child.send({ type: "exit" } satisfies ToWorker);
        const timer = setTimeout(() => w.child.kill("SIGKILL"), EXIT_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
    process.off("exit", this.killAll);
  }
}
