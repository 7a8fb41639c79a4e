// A runner process: registers itself, waits for steps (LISTEN/NOTIFY with a fallback
// poll), claims them, executes them with a heartbeat on the lease, and records results
// through the fenced outcome path. SIGTERM finishes or releases in-flight steps.
import crypto from "node:crypto";
import os from "node:os";
import pg from "pg";
import type { Db } from "../db/pool";
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import {
  claimNextStep,
  failExhaustedSteps,
  heartbeatStep,
  recordStepOutcome,
  retryWaitMs,
  type ClaimedStep,
  type OutcomeReactor,
} from "./dispatch";
import { StepExecutionError, type StepExecutor } from "./executors";
import { CANCEL_CHANNEL, STEPS_CHANNEL } from "./steps-projection";

export interface RunnerOptions {
  id?: string;
  version?: string;
  leaseMs?: number;
  pollMs?: number;
  concurrency?: number;
  reclaimBackoffMs?: number;
  retryBaseMs?: number;
  /** How long SIGTERM waits for in-flight steps before releasing them. */
  shutdownGraceMs?: number;
  executors: Record<string, StepExecutor>;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Observability hook (benchmarks, tests): called when a step has been claimed. */
  onClaim?: (step: ClaimedStep) => void;
  /** Decides what follows a step outcome, in the transaction that records it. */
  react?: OutcomeReactor;
  /** Finds the agent CLIs on this machine; the result is stored on the runner's row. */
  detectShells?: () => Promise<unknown>;
}

/** Well within the liveness window (./liveness.ts), so one late heartbeat does not count a runner dead. */
export const RUNNER_HEARTBEAT_MS = 5_000;

export class Runner {
  readonly id: string;
  readonly actor: Actor;
  private readonly opts: Required<Omit<RunnerOptions, "id" | "onClaim" | "react" | "detectShells">> &
    Pick<RunnerOptions, "onClaim" | "react" | "detectShells">;
  private listener: pg.Client | null = null;
  private readonly inFlight = new Map<string, { step: ClaimedStep; abort: AbortController; done: Promise<void> }>();
  private stopping = false;
  private wake: (() => void) | null = null;
  private woken = false;
  private loopDone: Promise<void> | null = null;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly store: EventStore,
    private readonly pool: Db,
    private readonly databaseUrl: string,
    options: RunnerOptions,
  ) {
    this.id = options.id ?? `${os.hostname()}-${process.pid}-${crypto.randomBytes(3).toString("hex")}`;
    this.actor = { kind: "runner", id: this.id };
    this.opts = {
      version: "0.0.0",
      leaseMs: 15_000,
      pollMs: 1_000,
      concurrency: 4,
      reclaimBackoffMs: 1_000,
      retryBaseMs: 1_000,
      shutdownGraceMs: 10_000,
      log: () => {},
      ...options,
    };
  }

  async start(): Promise<void> {
    await this.pool.query(
      `INSERT INTO runners (id, host, pid, version) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL`,
      [this.id, os.hostname(), process.pid, this.opts.version],
    );
    await this.listen();
    this.timers.push(setInterval(() => void this.beat(), RUNNER_HEARTBEAT_MS));
    this.timers.push(setInterval(() => void this.heartbeatSteps(), Math.max(50, Math.floor(this.opts.leaseMs / 3))));
    this.loopDone = this.loop();
    this.opts.log("runner started", { runnerId: this.id });
    // In the background: probing CLIs takes seconds and must not delay the first step.
    this.shellsDetected = this.recordShells();
  }

  /** Resolves once this runner's shell detection (if any) is stored; for tests and shutdown. */
  shellsDetected: Promise<void> = Promise.resolve();

  private async recordShells(): Promise<void> {
    if (!this.opts.detectShells) return;
    try {
      const shells = await this.opts.detectShells();
      await this.pool.query("UPDATE runners SET shells = $2, shells_detected_at = now() WHERE id = $1", [this.id, JSON.stringify(shells)]);
    } catch (err) {
      this.opts.log("shell detection failed", { runnerId: this.id, err: String(err) });
    }
  }

  /** Stops claiming, lets in-flight steps finish within the grace period, releases the rest. */
  async stop(): Promise<void> {
    if (this.stopping) return this.loopDone ?? undefined;
    this.stopping = true;
    this.signalWake();
    await this.loopDone;
    await this.shellsDetected;
    const deadline = new Promise((r) => setTimeout(r, this.opts.shutdownGraceMs).unref());
    await Promise.race([Promise.all([...this.inFlight.values()].map((f) => f.done)), deadline]);
    for (const flight of this.inFlight.values()) flight.abort.abort(new ShutdownSignal());
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
    for (const t of this.timers) clearInterval(t);
    await this.listener?.end().catch(() => {});
    await this.pool.query("UPDATE runners SET stopped_at = now() WHERE id = $1", [this.id]).catch(() => {});
    this.opts.log("runner stopped", { runnerId: this.id });
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: `catcafe-runner-listen` });
    client.on("notification", (n) => {
      if (n.channel === CANCEL_CHANNEL) this.cancelStep(n.payload ?? "");
      else this.signalWake();
    });
    client.on("error", () => {
      // Lost notifications are covered by the fallback poll; reconnect in the background.
      this.listener = null;
      if (!this.stopping) setTimeout(() => void this.listen().catch(() => {}), 1_000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${STEPS_CHANNEL}; LISTEN ${CANCEL_CHANNEL}`);
    this.listener = client;
  }

  /** Wakes the claim loop now, or makes its next wait return at once if it is busy. */
  private signalWake(): void {
    const waiter = this.wake;
    if (waiter) waiter();
    else this.woken = true;
  }

  private waitForWake(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        // Only the current wait may clear the slot; a later signal then sets `woken`.
        if (this.wake === finish) this.wake = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wake = finish;
    });
  }

  private async loop(): Promise<void> {
    let lastSweep = 0;
    while (!this.stopping) {
      try {
        while (!this.stopping && this.inFlight.size < this.opts.concurrency) {
          const step = await claimNextStep(this.pool, {
            runnerId: this.id,
            leaseMs: this.opts.leaseMs,
            reclaimBackoffMs: this.opts.reclaimBackoffMs,
          });
          if (!step) break;
          this.opts.onClaim?.(step);
          this.execute(step);
        }
        if (Date.now() - lastSweep > this.opts.pollMs) {
          lastSweep = Date.now();
          await failExhaustedSteps(this.store, this.actor);
        }
      } catch (err) {
        this.opts.log("runner loop error", { err: String(err) });
      }
      await this.waitForWake(this.opts.pollMs);
    }
  }

  private execute(step: ClaimedStep): void {
    const abort = new AbortController();
    const done = this.run(step, abort).finally(() => {
      this.inFlight.delete(step.id);
      this.signalWake(); // capacity freed: look for more work now
    });
    this.inFlight.set(step.id, { step, abort, done });
  }

  private async run(step: ClaimedStep, abort: AbortController): Promise<void> {
    const log = (msg: string, fields: Record<string, unknown> = {}) =>
      this.opts.log(msg, { runnerId: this.id, stepId: step.id, sessionId: step.sessionId, attempt: step.attempt, ...fields });
    if (!(await recordStepOutcome(this.store, step, { kind: "started" }, this.actor))) {
      log("claim lost before start");
      return;
    }
    const executor = this.opts.executors[step.kind];
    const timeout = setTimeout(() => abort.abort(new TimeoutSignal(step.timeoutMs)), step.timeoutMs);
    try {
      if (!executor) throw new StepExecutionError("internal_error", `no executor for step kind "${step.kind}" on runner ${this.id}`, false);
      const output = await executor(step, { signal: abort.signal });
      const accepted = await recordStepOutcome(this.store, step, { kind: "completed", output }, this.actor, { react: this.opts.react });
      log(accepted ? "step completed" : "step result rejected: attempt no longer holds the step");
    } catch (err) {
      const reason = abort.signal.reason;
      if (reason instanceof ShutdownSignal) {
        await recordStepOutcome(this.store, step, { kind: "released", reason: "runner shutting down" }, this.actor);
        log("step released on shutdown");
        return;
      }
      if (reason instanceof LeaseLostSignal || reason instanceof CancelSignal) {
        // The step is no longer ours (lease lost) or no longer wanted (cancelled, already recorded).
        log(reason instanceof CancelSignal ? "step cancelled by an operator" : "step aborted: lease lost");
        return;
      }
      const failure =
        reason instanceof TimeoutSignal
          ? { errorClass: "timeout" as const, message: `step timed out after ${step.timeoutMs} ms`, retryable: true }
          : err instanceof StepExecutionError
            ? { errorClass: err.errorClass, message: err.message, retryable: err.retryable, retryAfterMs: err.retryAfterMs }
            : { errorClass: "internal_error" as const, message: String((err as Error)?.message ?? err), retryable: false };
      await recordStepOutcome(this.store, step, { kind: "failed", ...failure }, this.actor, {
        retryBaseMs: this.opts.retryBaseMs,
        react: this.opts.react,
      });
      log("step failed", failure);
      // Retries become claimable after their backoff; wake up then rather than at the next poll.
      if (failure.retryable)
        setTimeout(
          () => this.signalWake(),
          retryWaitMs(step.attempt, this.opts.retryBaseMs, "retryAfterMs" in failure ? failure.retryAfterMs : undefined) + 5,
        ).unref();
    } finally {
      clearTimeout(timeout);
    }
  }

  /** An operator cancelled this step: abort its work now (the child process tree dies with it). */
  private cancelStep(stepId: string): void {
    const flight = this.inFlight.get(stepId);
    if (flight) flight.abort.abort(new CancelSignal());
  }

  private async heartbeatSteps(): Promise<void> {
    for (const flight of this.inFlight.values()) {
      const held = await heartbeatStep(this.pool, flight.step, this.opts.leaseMs).catch(() => true);
      if (!held) flight.abort.abort(new LeaseLostSignal());
    }
  }

  private async beat(): Promise<void> {
    await this.pool.query("UPDATE runners SET heartbeat_at = now() WHERE id = $1", [this.id]).catch(() => {});
  }
}

class ShutdownSignal extends Error {
  constructor() {
    super("runner shutting down");
  }
}
class LeaseLostSignal extends Error {
  constructor() {
    super("lease lost");
  }
}
class CancelSignal extends Error {
  constructor() {
    super("cancelled by an operator");
  }
}
class TimeoutSignal extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
  }
}
