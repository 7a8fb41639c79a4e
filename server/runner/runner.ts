// A runner process: registers itself, waits for steps (LISTEN/NOTIFY with a fallback
// poll), claims them, executes them with a heartbeat on the lease, and records results
// through the fenced outcome path. SIGTERM finishes or releases in-flight steps.
//
// Under faults: an attempt whose lease cannot be confirmed before it expires stops itself
// (its process tree killed), so it never runs beside the attempt that takes over; the
// processes each attempt starts are written to a ledger that the next runner on this host
// uses to end what a runner killed with SIGKILL left behind; while the database is away
// the runner keeps running, retries with backoff, and re-opens its LISTEN connection for
// as long as it takes.
import crypto from "node:crypto";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { isConnectionError, type Db, type Tx } from "../db/pool";
import { countStepOutcome, recordSandbox } from "../metrics/registry";
import { sandboxStatus } from "../process/sandbox";
import { observeProcesses } from "../process/spawn";
import type { Actor } from "../events/catalog";
import { collectUnreferencedBlobs } from "../events/blobs";
import type { EventStore } from "../events/store";
import {
  claimNextStep,
  failExhaustedSteps,
  heartbeatStep,
  recordStepOutcome,
  retryWaitMs,
  type ClaimCapabilities,
  type ClaimedStep,
  type OutcomeReactor,
  type ReactionFallback,
  type StepOutcome,
} from "./dispatch";
import { ProcessLedger } from "./process-ledger";
import { scheduledTrace } from "./step-trace";
import { inSpan, markFailed, SpanKind, type Span } from "../tracing/spans";
import { StepExecutionError, StepNotRunnableHere, type StepExecutor } from "./executors";
import { PROJECTS_CHANNEL, supportedClis, type ServedProjects } from "./capabilities";
import { failUnrunnableSteps, UNRUNNABLE_GRACE_MS } from "./unrunnable";
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
  /** When `react` failed (a defect): ends the session visibly, with the outcome. */
  onReactionError?: ReactionFallback;
  /** Where the process ledgers of this host's runners live (default .data/runners). */
  stateDir?: string;
  /** How often in-flight steps are checked for a cancel, besides the NOTIFY (ms). */
  cancelPollMs?: number;
  /** How often the runner looks for blobs no event references (collectUnreferencedBlobs; ms). */
  blobCollectionMs?: number;
  /** Finds the agent CLIs on this machine; the result is stored on the runner's row. */
  detectShells?: () => Promise<unknown>;
  /**
   * Which registered projects this runner has clones of (./capabilities.ts projectsServed),
   * registered at start and every `capabilityRefreshMs`; its claims then take only steps of
   * those projects. Absent: it claims steps of any project (docs/scaling.md, "Which runner runs a step").
   */
  projectsServed?: () => Promise<ServedProjects>;
  /** CATCAFE_RUNNER_LABELS: steps whose agent asks for labels (runnerLabels) go to runners that have them all. */
  labels?: string[];
  /** The host name recorded and named in events (default: os.hostname()). */
  host?: string;
  /** How often the projects served are checked again: projects may be added while it runs (ms). */
  capabilityRefreshMs?: number;
  /** How long a step no live runner can run waits before it fails (./unrunnable.ts; ms). */
  unrunnableGraceMs?: number;
}

/** Well within the liveness window (./liveness.ts), so one late heartbeat does not count a runner dead. */
export const RUNNER_HEARTBEAT_MS = 5_000;

interface Flight {
  step: ClaimedStep;
  abort: AbortController;
  done: Promise<void>;
  /** Local time until which the lease is known to hold (last confirmed heartbeat + lease). */
  confirmedUntil: number;
  /** Local time the claim was sent: where the step's span begins. */
  claimedAt: number;
  /** The claim behind this step's result looked for its successor (and started it, if there was one). */
  claimedBehind?: boolean;
  /** performance.now() when the step was claimed: its wall time (metrics) is counted from here. */
  claimedAtMonotonic: number;
}

/** Backoff while the database is away: 200 ms doubling to 5 s. */
function outageDelayMs(failures: number): number {
  return Math.min(200 * 2 ** Math.max(0, failures - 1), 5_000);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export class Runner {
  readonly id: string;
  readonly actor: Actor;
  private readonly opts: Required<Omit<RunnerOptions, "id" | "onClaim" | "react" | "onReactionError" | "detectShells" | "projectsServed">> &
    Pick<RunnerOptions, "onClaim" | "react" | "onReactionError" | "detectShells" | "projectsServed">;
  /** What this runner's claims say it can run (./dispatch.ts ClaimCapabilities); undefined: anything. */
  private claimCapabilities: ClaimCapabilities | undefined;
  /** Projects already warned about as not served (the warning is said once per project). */
  private readonly warnedUnserved = new Set<string>();
  private listener: pg.Client | null = null;
  private readonly inFlight = new Map<string, Flight>();
  private stopping = false;
  private wake: (() => void) | null = null;
  private woken = false;
  private loopDone: Promise<void> | null = null;
  private timers: NodeJS.Timeout[] = [];
  private readonly ledger: ProcessLedger;
  /** Resolves when a listener reconnect in progress ends; for tests. */
  private listening: Promise<void> = Promise.resolve();

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
      cancelPollMs: 500,
      blobCollectionMs: 10 * 60 * 1000,
      labels: [],
      host: os.hostname(),
      capabilityRefreshMs: 30_000,
      unrunnableGraceMs: UNRUNNABLE_GRACE_MS,
      stateDir: path.resolve(process.env.CATCAFE_DATA_DIR ?? ".data", "runners"),
      log: () => {},
      ...options,
    };
    this.ledger = new ProcessLedger(this.opts.stateDir, this.id);
    if (this.opts.projectsServed || this.opts.labels.length || this.opts.detectShells) {
      // Until registered: no project, and no CLI until detected.
      this.claimCapabilities = {
        repos: this.opts.projectsServed ? [] : null,
        clis: this.opts.detectShells ? [] : null,
        labels: this.opts.labels,
      };
    }
  }

  async start(): Promise<void> {
    // What runners killed on this host left running (their agents, their test commands).
    this.endLeftovers();
    // Agents and test commands run in a bubblewrap sandbox where it works. Whether they do is
    // recorded with the registration, for /api/health, runners.list and the dashboard's
    // warning (docs/operations.md, "The sandbox"), and said here when they do not.
    const sandbox = sandboxStatus();
    recordSandbox(sandbox.available);
    await this.pool.query(
      `INSERT INTO runners (id, host, pid, version, sandbox_on, sandbox_reason) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL,
         sandbox_on = EXCLUDED.sandbox_on, sandbox_reason = EXCLUDED.sandbox_reason`,
      [this.id, this.opts.host, process.pid, this.opts.version, sandbox.available, sandbox.reason],
    );
    // What it can run, before its first claim (and a warning for each project it cannot serve).
    await this.registerCapabilities();
    this.listening = this.listen();
    this.timers.push(setInterval(() => void this.beat(), RUNNER_HEARTBEAT_MS));
    this.timers.push(setInterval(() => this.heartbeatSteps(), this.heartbeatIntervalMs()));
    this.timers.push(setInterval(() => void this.pollCancels(), this.opts.cancelPollMs));
    if (this.opts.projectsServed)
      this.timers.push(setInterval(() => void this.registerCapabilities().catch(() => {}), this.opts.capabilityRefreshMs));
    // Blobs of results that were never recorded (a rejected attempt's output): one runner at a time.
    this.timers.push(setInterval(() => void collectUnreferencedBlobs(this.pool).catch(() => 0), this.opts.blobCollectionMs));
    this.loopDone = this.loop();
    this.opts.log("runner started", { runnerId: this.id });
    if (!sandbox.available) {
      this.opts.log("no sandbox: agents and test commands run as this user, with its view of the machine (docs/security.md)", {
        runnerId: this.id,
        reason: sandbox.reason,
      });
    }
    // In the background: probing CLIs takes seconds and must not delay the first step.
    this.shellsDetected = this.recordShells();
  }

  private endLeftovers(): void {
    const leftovers = ProcessLedger.endLeftovers(this.opts.stateDir, this.id);
    if (leftovers.ledgers > 0) this.opts.log("ended what gone runners left running", { runnerId: this.id, ...leftovers });
  }

  /** Resolves once this runner's shell detection (if any) is stored; for tests. */
  shellsDetected: Promise<void> = Promise.resolve();

  /** Resolves once the LISTEN connection is open (after a reconnect too); for tests. */
  listeningOnce(): Promise<void> {
    return this.listening;
  }

  private heartbeatIntervalMs(): number {
    return Math.max(50, Math.floor(this.opts.leaseMs / 3));
  }

  /**
   * Records what this runner can run on its row (labels, the projects it serves and why not the
   * others) and takes it for its claims; warns once for each registered project it cannot serve.
   */
  private async registerCapabilities(): Promise<void> {
    const projects = this.opts.projectsServed ? await this.opts.projectsServed() : null;
    if (this.stopping) return;
    await this.pool.query(
      `UPDATE runners SET labels = $2, served_repos = $3, unserved_repos = $4, capabilities_at = CASE WHEN $5 THEN now() END WHERE id = $1`,
      [this.id, this.opts.labels, projects?.served ?? [], JSON.stringify(projects?.unserved ?? []), projects !== null],
    );
    if (this.claimCapabilities && projects) this.claimCapabilities = { ...this.claimCapabilities, repos: projects.served };
    for (const u of projects?.unserved ?? []) {
      if (this.warnedUnserved.has(`${u.projectId}\0${u.reason}`)) continue;
      this.warnedUnserved.add(`${u.projectId}\0${u.reason}`);
      this.opts.log(`project ${u.projectId} is not served by this runner: ${u.reason}; its steps go to other runners (docs/scaling.md)`, {
        runnerId: this.id,
        projectId: u.projectId,
        repoPath: u.repoPath,
      });
    }
  }

  private async recordShells(): Promise<void> {
    if (!this.opts.detectShells) return;
    try {
      const shells = await this.opts.detectShells();
      if (this.stopping) return;
      const clis = supportedClis(shells);
      await this.pool.query("UPDATE runners SET shells = $2, shells_detected_at = now(), agent_clis = $3 WHERE id = $1", [
        this.id,
        JSON.stringify(shells),
        clis,
      ]);
      if (this.claimCapabilities) this.claimCapabilities = { ...this.claimCapabilities, clis };
    } catch (err) {
      this.opts.log("shell detection failed", { runnerId: this.id, err: String(err) });
    }
  }

  /**
   * Stops claiming, lets in-flight steps finish within the grace period, releases the rest.
   * Does not wait for shell detection (it may take seconds; its result is simply dropped).
   */
  async stop(): Promise<void> {
    if (this.stopping) return this.loopDone ?? undefined;
    this.stopping = true;
    this.signalWake();
    await this.loopDone;
    const deadline = new Promise((r) => setTimeout(r, this.opts.shutdownGraceMs).unref());
    await Promise.race([Promise.all([...this.inFlight.values()].map((f) => f.done)), deadline]);
    for (const flight of this.inFlight.values()) flight.abort.abort(new ShutdownSignal());
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
    for (const t of this.timers) clearInterval(t);
    await this.listener?.end().catch(() => {});
    await this.pool.query("UPDATE runners SET stopped_at = now() WHERE id = $1", [this.id]).catch(() => {});
    this.ledger.close();
    this.opts.log("runner stopped", { runnerId: this.id });
  }

  /** Opens the LISTEN connection, retrying with backoff for as long as it takes. */
  private async listen(): Promise<void> {
    for (let failures = 0; !this.stopping; failures++) {
      const client = new pg.Client({ connectionString: this.databaseUrl, application_name: "catcafe-runner-listen" });
      client.on("notification", (n) => {
        if (n.channel === CANCEL_CHANNEL) this.cancelStep(n.payload ?? "");
        else if (n.channel === PROJECTS_CHANNEL) this.projectsChanged();
        else this.signalWake();
      });
      client.on("error", () => {
        // Notifications may have been missed: the fallback poll covers new work meanwhile.
        if (this.listener !== client) return;
        this.listener = null;
        client.end().catch(() => {});
        if (!this.stopping) this.listening = this.listen();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${STEPS_CHANNEL}; LISTEN ${CANCEL_CHANNEL}; LISTEN ${PROJECTS_CHANNEL}`);
        if (this.stopping) {
          await client.end().catch(() => {});
          return;
        }
        this.listener = client;
        if (failures > 0) this.opts.log("listening again", { runnerId: this.id, failures });
        // What arrived while we were not listening: new work, projects (also those registered
        // between the start's check and this LISTEN), and cancels of our steps.
        this.signalWake();
        this.projectsChanged();
        await this.pollCancels();
        return;
      } catch (err) {
        await client.end().catch(() => {});
        this.opts.log("listen failed; retrying", { runnerId: this.id, err: String(err) });
        await sleep(outageDelayMs(failures + 1));
      }
    }
  }

  /** A check of the projects served under way (projectsChanged), and whether another was asked for meanwhile. */
  private recheck: Promise<void> | null = null;
  private recheckAgain = false;

  /**
   * A project was added, moved or removed: which ones this runner serves is checked now, then
   * the claim loop looks again, so a new project's first step does not wait for the periodic
   * check (`capabilityRefreshMs`). Checks asked for while one runs make one more after it.
   */
  private projectsChanged(): void {
    if (!this.opts.projectsServed) return;
    if (this.recheck) {
      this.recheckAgain = true;
      return;
    }
    this.recheck = (async () => {
      do {
        this.recheckAgain = false;
        await this.registerCapabilities().catch(() => {});
        this.signalWake();
      } while (this.recheckAgain && !this.stopping);
    })().finally(() => (this.recheck = null));
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
    let failures = 0;
    while (!this.stopping) {
      try {
        while (!this.stopping && this.inFlight.size < this.opts.concurrency) {
          if (!(await this.claimAndStart())) break;
        }
        if (Date.now() - lastSweep > this.opts.pollMs) {
          lastSweep = Date.now();
          this.endLeftovers();
          await failExhaustedSteps(this.store, this.actor, { react: this.opts.react, onReactionError: this.opts.onReactionError });
          await failUnrunnableSteps(this.store, this.actor, {
            react: this.opts.react,
            onReactionError: this.opts.onReactionError,
            graceMs: this.opts.unrunnableGraceMs,
          });
        }
        failures = 0;
      } catch (err) {
        failures++;
        this.opts.log(isConnectionError(err) ? "database unreachable; retrying" : "runner loop error", {
          runnerId: this.id,
          err: String(err),
        });
        await sleep(outageDelayMs(failures));
      }
      await this.waitForWake(this.opts.pollMs);
    }
  }

  /** Claims a step (on `db`, else on any of the pool's connections) and starts it; false when there is none to take. */
  private async claimAndStart(db?: Tx): Promise<boolean> {
    const claimedAt = Date.now();
    const step = await claimNextStep(
      this.store,
      {
        runnerId: this.id,
        leaseMs: this.opts.leaseMs,
        reclaimBackoffMs: this.opts.reclaimBackoffMs,
        ...(this.claimCapabilities ? { capabilities: this.claimCapabilities } : {}),
      },
      db,
    );
    if (!step) return false;
    // Taken over from a runner that vanished: if it ran on this host, what it left
    // running (its agent, its test command) ends before this attempt starts.
    if (step.reclaimed) this.endLeftovers();
    this.opts.onClaim?.(step);
    this.execute(step, claimedAt);
    return true;
  }

  /**
   * Behind a step's result, on the same connection, pipelined after its COMMIT: the next
   * step for the slot this one frees, one round trip sooner than the loop would claim it
   * (which happens when the flight ends). The finishing flight still counts in `inFlight`.
   * A failure here is left to the loop, woken when the flight ends.
   */
  private async claimBehind(db: Tx, flight: Flight): Promise<void> {
    if (this.stopping || this.inFlight.size - 1 >= this.opts.concurrency) return;
    try {
      await this.claimAndStart(db);
      flight.claimedBehind = true;
    } catch {
      // the loop claims for this slot when the flight ends
    }
  }

  private execute(step: ClaimedStep, claimedAt: number): void {
    const abort = new AbortController();
    const flight: Flight = {
      step,
      abort,
      done: Promise.resolve(),
      confirmedUntil: claimedAt + this.opts.leaseMs,
      claimedAt,
      claimedAtMonotonic: performance.now(),
    };
    flight.done = this.run(flight)
      .catch((err: unknown) =>
        this.opts.log("step ended with an unexpected error", { runnerId: this.id, stepId: step.id, err: String(err) }),
      )
      .finally(() => {
        this.inFlight.delete(step.id);
        // Capacity freed: look for more work now, unless the claim behind the result already
        // did (it started the next step, or found none; a new one rings the doorbell).
        if (!flight.claimedBehind) this.signalWake();
      });
    this.inFlight.set(step.id, flight);
  }

  /**
   * Records an outcome, retrying while the database is unreachable. Gives up (the outcome is
   * abandoned to the next attempt, which the fence makes safe) once the lease has certainly
   * passed and a new attempt may hold the step; a shutdown stops retrying at once.
   */
  private async record(flight: Flight, outcome: StepOutcome, react: boolean): Promise<boolean | "abandoned"> {
    const giveUpAt = Math.max(flight.confirmedUntil, Date.now()) + 4 * this.opts.leaseMs;
    for (let failures = 1; ; failures++) {
      try {
        const recorded = await recordStepOutcome(this.store, flight.step, outcome, this.actor, {
          retryBaseMs: this.opts.retryBaseMs,
          ...(react ? { react: this.opts.react, onReactionError: this.opts.onReactionError } : {}),
          // A released step is not replaced at once: its slot waits for the loop (a shutdown, or the database back).
          ...(outcome.kind === "released" ? {} : { behind: (db: Tx) => this.claimBehind(db, flight) }),
        });
        // Counted once the outcome is recorded (docs/operations.md, "Metrics"): increments, no query.
        if (recorded) {
          const errorClass = outcome.kind === "failed" ? outcome.errorClass : null;
          countStepOutcome(flight.step.kind, outcome.kind, errorClass, (performance.now() - flight.claimedAtMonotonic) / 1000);
        }
        return recorded;
      } catch (err) {
        if (!isConnectionError(err) || Date.now() > giveUpAt || (this.stopping && outcome.kind === "released")) {
          this.opts.log("outcome not recorded; the step goes to its next attempt", {
            runnerId: this.id,
            stepId: flight.step.id,
            attempt: flight.step.attempt,
            err: String(err),
          });
          return "abandoned";
        }
        await sleep(outageDelayMs(failures));
      }
    }
  }

  /**
   * The attempt in a span `step <kind>` continuing the trace of the command that scheduled it
   * (./step-trace.ts); the outcome recorded in it schedules the next steps in the same trace.
   */
  private async run(flight: Flight): Promise<void> {
    const { step } = flight;
    const attributes = {
      "catcafe.session.id": step.sessionId,
      "catcafe.step.id": step.id,
      "catcafe.step.kind": step.kind,
      "catcafe.step.attempt": step.attempt,
      "catcafe.runner.id": this.id,
    };
    const parent = scheduledTrace(step);
    await inSpan(`step ${step.kind}`, { parent, kind: SpanKind.CONSUMER, startTime: flight.claimedAt, attributes }, (span) =>
      this.attempt(flight, span),
    );
  }

  private async attempt(flight: Flight, span: Span): Promise<void> {
    const { step, abort } = flight;
    const outcome = (what: "completed" | "failed" | "released" | "aborted") => span.setAttribute("catcafe.step.outcome", what);
    const log = (msg: string, fields: Record<string, unknown> = {}) =>
      this.opts.log(msg, { runnerId: this.id, stepId: step.id, sessionId: step.sessionId, attempt: step.attempt, ...fields });
    const executor = this.opts.executors[step.kind];
    const timeout = setTimeout(() => abort.abort(new TimeoutSignal(step.timeoutMs)), step.timeoutMs);
    try {
      if (!executor) throw new StepExecutionError("internal_error", `no executor for step kind "${step.kind}" on runner ${this.id}`, false);
      // Every process the attempt starts goes into the ledger until it exits.
      const output = await observeProcesses(this.ledger.observer, () => executor(step, { signal: abort.signal }));
      if (abort.signal.aborted) throw abort.signal.reason;
      const accepted = await this.record(flight, { kind: "completed", output }, true);
      outcome("completed");
      log(accepted === true ? "step completed" : "step result not recorded: attempt no longer holds the step", { accepted });
    } catch (err) {
      const reason = abort.signal.reason;
      if (reason instanceof ShutdownSignal) {
        await this.record(flight, { kind: "released", reason: "runner shutting down" }, false);
        outcome("released");
        log("step released on shutdown");
        return;
      }
      if (!abort.signal.aborted && err instanceof StepNotRunnableHere) {
        // Not the step's fault, nor the session's: another runner may have what this one
        // lacks. Handed back uncharged, and this runner never takes it again (the pick skips
        // it); ./unrunnable.ts fails it if no live runner can run it.
        const unable = { runnerId: this.id, host: this.opts.host, missing: err.missing };
        await this.record(
          flight,
          { kind: "released", reason: `runner ${this.id} on ${this.opts.host} cannot run it: ${err.missing}`, unable },
          false,
        );
        outcome("released");
        log("step released: this runner cannot run it", { missing: err.missing });
        this.signalWake();
        return;
      }
      if (!abort.signal.aborted && isConnectionError(err)) {
        // The database went away under the step (a blob, a lock, a rate-limit turn): not the
        // step's fault. Hand it back uncharged; it runs again once the database is back.
        await this.record(flight, { kind: "released", reason: `the database was unreachable: ${String((err as Error).message)}` }, false);
        outcome("released");
        log("step released: the database was unreachable", { err: String(err) });
        setTimeout(() => this.signalWake(), 1_000).unref();
        return;
      }
      if (reason instanceof LeaseLostSignal || reason instanceof CancelSignal) {
        // The step is no longer ours (lease lost) or no longer wanted (cancelled, already recorded).
        outcome("aborted");
        log(reason instanceof CancelSignal ? "step cancelled by an operator" : `step aborted: ${reason.message}`);
        return;
      }
      const failure =
        reason instanceof TimeoutSignal
          ? { errorClass: "timeout" as const, message: `step timed out after ${step.timeoutMs} ms`, retryable: true }
          : err instanceof StepExecutionError
            ? { errorClass: err.errorClass, message: err.message, retryable: err.retryable, retryAfterMs: err.retryAfterMs }
            : { errorClass: "internal_error" as const, message: String((err as Error)?.message ?? err), retryable: false };
      await this.record(flight, { kind: "failed", ...failure }, true);
      outcome("failed");
      markFailed(span, err, failure.errorClass);
      log("step failed", failure);
      // Retries become claimable after their backoff; wake up then rather than at the next poll.
      if (failure.retryable)
        setTimeout(
          () => this.signalWake(),
          retryWaitMs(step.attempt, {
            baseMs: this.opts.retryBaseMs,
            backoffMs: step.backoffMs,
            retryAfterMs: "retryAfterMs" in failure ? failure.retryAfterMs : undefined,
          }) + 5,
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

  /** Cancels without relying on one NOTIFY: in-flight steps that are no longer running here. */
  private async pollCancels(): Promise<void> {
    if (this.inFlight.size === 0) return;
    const ids = [...this.inFlight.keys()];
    const r = await this.pool
      .query<{ id: string }>({
        name: "catcafe_runner_cancelled",
        text: "SELECT id FROM steps WHERE id = ANY($1::uuid[]) AND state = 'cancelled'",
        values: [ids],
      })
      .catch(() => null);
    for (const row of r?.rows ?? []) this.cancelStep(row.id);
  }

  /**
   * Extends every in-flight lease. An attempt whose lease could not be confirmed in time to
   * survive until the next beat stops itself now: by the time the lease expires, its
   * processes are gone and another runner may take the step over without meeting them.
   */
  private heartbeatSteps(): void {
    const interval = this.heartbeatIntervalMs();
    for (const flight of this.inFlight.values()) {
      if (flight.abort.signal.aborted) continue;
      if (Date.now() + interval >= flight.confirmedUntil) {
        flight.abort.abort(new LeaseLostSignal("its lease could not be confirmed before it expired"));
        continue;
      }
      const sentAt = Date.now();
      const beat = heartbeatStep(this.pool, flight.step, this.opts.leaseMs);
      // A beat that takes longer than the interval counts as not confirmed.
      void Promise.race([beat, sleep(interval).then(() => "late" as const)])
        .then((held) => {
          if (held === true) flight.confirmedUntil = sentAt + this.opts.leaseMs;
          else if (held === false) flight.abort.abort(new LeaseLostSignal("another attempt holds the step, or it ended"));
        })
        .catch(() => {});
      beat.catch(() => {});
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
  constructor(why: string) {
    super(`lease lost: ${why}`);
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
