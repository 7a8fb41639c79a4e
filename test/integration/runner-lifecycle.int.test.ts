// A step's life on a runner, in process and under faults, each case checked by its events and
// by what the runner says in its log: its start (the sandbox line, what gone runners left, its
// CLIs), heartbeats that keep a long step, a takeover seen at the next heartbeat, a late
// heartbeat, a result given up after an outage longer than the lease, the database gone under
// a running step, a timeout and the retry woken by its backoff or a Retry-After, unexpected
// errors, the loop's own errors and work that arrives while it is busy, a release at shutdown,
// a cancel through NOTIFY, the LISTEN connection cut, lost before its LISTEN, re-opened and
// stopped while opening, and the sweep of steps whose runners kept vanishing. In process, so
// that mutation testing (npm run mutate) reaches the runner's own code;
// runner-faults.int.test.ts kills real processes.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { putBlob } from "../../server/events/blobs";
import type { RecordedEvent } from "../../server/events/types";
import { claimNextStep, MAX_LOST_ATTEMPTS, scheduleStep, type ScheduleStepInput } from "../../server/runner/dispatch";
import { StepExecutionError, type StepExecutor } from "../../server/runner/executors";
import { Runner, RUNNER_HEARTBEAT_MS, type RunnerOptions } from "../../server/runner/runner";
import { sandboxStatus } from "../../server/process/sandbox";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";

// The start-up line about the sandbox is checked below; these executors start no processes.
process.env.CATCAFE_SANDBOX = "off";

let db: TestDatabase;
const STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-runner-lifecycle-"));
const runners: Runner[] = [];
const pools: pg.Pool[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
// Each test's runners stop with it, and what it left unfinished is cancelled, so that no later
// runner picks it up.
afterEach(async () => {
  for (const p of proxies) p.restore();
  await Promise.all(runners.splice(0).map((r) => r.stop()));
  const left = await db.pool.query<{ id: string; session_id: string }>(
    "SELECT id, session_id FROM steps WHERE state IN ('pending', 'running')",
  );
  for (const row of left.rows) {
    await db.store.append(row.session_id, "any", [{ type: "StepCancelled", data: { stepId: row.id } }], { actor: testActor });
  }
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await Promise.all(proxies.map((p) => p.close()));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface LogLine {
  msg: string;
  fields: Record<string, unknown>;
}

interface Started {
  runner: Runner;
  pool: pg.Pool;
  logs: LogLine[];
}

/**
 * An in-process runner whose log is kept. `url` is where its pool connects, `listenUrl` where
 * its LISTEN connection does (each may go through a proxy to be cut).
 */
async function startRunner(
  options: Partial<RunnerOptions> & Pick<RunnerOptions, "executors">,
  url = db.url,
  listenUrl = url,
): Promise<Started> {
  const pool = createPool(url, 6);
  pools.push(pool);
  const logs: LogLine[] = [];
  const runner = new Runner(createAppEventStore(pool), pool, listenUrl, {
    leaseMs: 5_000,
    stateDir: STATE_DIR,
    log: (msg, fields = {}) => logs.push({ msg, fields }),
    ...options,
  });
  runners.push(runner);
  await runner.start();
  await runner.listeningOnce();
  return { runner, pool, logs };
}

async function proxy(): Promise<TcpProxy> {
  const p = await startTcpProxy(Number(new URL(db.url).port));
  proxies.push(p);
  return p;
}

async function newSession(): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "lifecycle", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

async function schedule(
  step: Omit<ScheduleStepInput, "sessionId" | "input"> & { input?: unknown },
): Promise<{ sessionId: string; stepId: string }> {
  const sessionId = await newSession();
  const stepId = await scheduleStep(db.store, { sessionId, input: {}, ...step }, { actor: testActor });
  return { sessionId, stepId };
}

const stepRow = async (id: string) =>
  (
    await db.pool.query<{ state: string; attempt: number; lease_expires_at: Date | null }>(
      "SELECT state, attempt, lease_expires_at FROM steps WHERE id = $1",
      [id],
    )
  ).rows[0]!;

const stateIs = (id: string, state: string) => async () => (await stepRow(id)).state === state;

/** The step's events after StepScheduled, with their attempt where they have one: "StepStarted 1", "StepCancelled". */
async function history(sessionId: string, stepId: string): Promise<string[]> {
  return (await stepEvents(sessionId, stepId))
    .filter((e) => e.type !== "StepScheduled")
    .map((e) => [e.type, (e.data as { attempt?: number }).attempt].filter((part) => part !== undefined).join(" "));
}

async function stepEvents(sessionId: string, stepId: string): Promise<RecordedEvent[]> {
  return (await db.store.readStream(sessionId)).filter((e) => (e.data as { stepId?: string }).stepId === stepId);
}

const dataOf = async (sessionId: string, stepId: string, type: string) =>
  (await stepEvents(sessionId, stepId)).filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);

/** An executor that runs until its attempt is aborted, and keeps the reason it was given (and when, in `abortedAt`). */
function endless(reasons: unknown[], abortedAt: number[] = []): StepExecutor {
  return (_step, ctx) =>
    new Promise((_resolve, reject) => {
      ctx.signal.addEventListener("abort", () => {
        reasons.push(ctx.signal.reason);
        abortedAt.push(Date.now());
        reject(ctx.signal.reason);
      });
    });
}

const messages = (logs: LogLine[]) => logs.map((l) => l.msg);

/**
 * As if the runner holding the step had stalled past its lease: the lease expires in the
 * database and another runner takes the step (attempt 2). One transaction, so that a
 * heartbeat of attempt 1 cannot slip in between.
 */
async function takeOver(stepId: string): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("UPDATE steps SET lease_expires_at = now() - interval '1 minute' WHERE id = $1", [stepId]);
    const taken = await claimNextStep(db.store, { runnerId: "usurper", leaseMs: 60_000, reclaimBackoffMs: 0 }, client);
    expect(taken).toMatchObject({ id: stepId, attempt: 2, reclaimed: true });
    await client.query("COMMIT");
  } finally {
    client.release();
  }
}

/** A step whose runners vanished more often than allowed: the next sweep fails it. */
async function exhausted(): Promise<{ sessionId: string; stepId: string }> {
  const step = await schedule({ kind: "ghostly", maxAttempts: 3 });
  for (let lost = 0; lost <= MAX_LOST_ATTEMPTS; lost++) {
    expect(await claimNextStep(db.store, { runnerId: `ghost-${lost}`, leaseMs: 20, reclaimBackoffMs: 0 })).toMatchObject({
      id: step.stepId,
    });
    await sleep(40);
  }
  return step;
}

/** The ledger of a runner gone from this host (its pid's start time is not the one written), which left nothing running. */
function writeGoneLedger(runnerId: string): void {
  const ledger = { runnerId, runnerPid: process.pid, runnerStartTime: 1, processes: [] };
  fs.writeFileSync(path.join(STATE_DIR, `${runnerId}.json`), JSON.stringify(ledger));
}

describe("a runner's start and stop", () => {
  it("says that it started and that it runs without a sandbox, and why; stopping it twice stops it once", async () => {
    const { runner, logs } = await startRunner({ id: "announcer", executors: {} });
    expect(logs.slice(0, 2)).toEqual([
      { msg: "runner started", fields: { runnerId: "announcer" } },
      {
        msg: "no sandbox: agents and test commands run as this user, with its view of the machine (docs/security.md)",
        fields: { runnerId: "announcer", reason: "turned off (CATCAFE_SANDBOX=off)" },
      },
    ]);
    await Promise.all([runner.stop(), runner.stop()]);
    await runner.stop();
    expect(messages(logs).filter((m) => m === "runner stopped")).toHaveLength(1);
    const row = await db.pool.query<{ stopped_at: Date | null; version: string; sandbox_on: boolean; sandbox_reason: string }>(
      "SELECT stopped_at, version, sandbox_on, sandbox_reason FROM runners WHERE id = 'announcer'",
    );
    // What it said at start is also recorded with its registration (for health, runners.list, the dashboard).
    expect(row.rows[0]).toEqual({
      stopped_at: expect.any(Date),
      version: "0.0.0",
      sandbox_on: false,
      sandbox_reason: "turned off (CATCAFE_SANDBOX=off)",
    });
  });

  it("where the sandbox works, says nothing about it", async () => {
    const saved = process.env.CATCAFE_SANDBOX;
    delete process.env.CATCAFE_SANDBOX;
    try {
      const sandbox = sandboxStatus();
      const { logs } = await startRunner({ id: "sandboxed", executors: {} });
      const said = logs.filter((l) => l.msg.startsWith("no sandbox"));
      // Where bubblewrap cannot run (no user namespaces), the line gives the reason instead.
      expect(said).toEqual(
        sandbox.available ? [] : [expect.objectContaining({ fields: { runnerId: "sandboxed", reason: sandbox.reason } })],
      );
    } finally {
      process.env.CATCAFE_SANDBOX = saved;
    }
  });

  it("ends what runners gone from this host left running, and says how much", async () => {
    writeGoneLedger("gone-before-start");
    const { logs } = await startRunner({ id: "heir", executors: {} });
    expect(logs.filter((l) => l.msg === "ended what gone runners left running")).toEqual([
      { msg: "ended what gone runners left running", fields: { runnerId: "heir", ledgers: 1, killed: 0 } },
    ]);
    expect(fs.existsSync(path.join(STATE_DIR, "gone-before-start.json"))).toBe(false);
  });

  it("what a gone runner left is ended before a step taken over from it starts; a step claimed fresh leaves that to the sweep", async () => {
    // Held by a runner that vanished: its lease runs out while this runner waits, its poll a minute away.
    const orphan = await schedule({ kind: "looks" });
    expect(await claimNextStep(db.store, { runnerId: "vanished", leaseMs: 3_000, reclaimBackoffMs: 0 })).toMatchObject({
      id: orphan.stepId,
    });
    const ledger = path.join(STATE_DIR, "vanished.json");
    const seen = new Map<string, boolean>();
    const looks: StepExecutor = async (step) => {
      seen.set(step.id, fs.existsSync(ledger));
      return {};
    };
    // The runner's first sweep (which ends leftovers too) is seen through its reaction to a step it fails.
    await exhausted();
    let swept: () => void = () => {};
    const firstSweep = new Promise<void>((r) => (swept = r));
    const { logs } = await startRunner({
      id: "successor",
      executors: { looks },
      pollMs: 60_000,
      reclaimBackoffMs: 0,
      react: async (_tx, _store, _session, recorded) => {
        if (recorded.some((e) => e.type === "StepFailed")) swept();
      },
    });
    await firstSweep;
    writeGoneLedger("vanished");
    const fresh = await schedule({ kind: "looks" });
    await until("the fresh step completed", stateIs(fresh.stepId, "completed"));
    expect(seen.get(fresh.stepId)).toBe(true);
    await until("the orphan's lease expired", async () => (await stepRow(orphan.stepId)).lease_expires_at!.getTime() < Date.now());
    const wake = await schedule({ kind: "looks" });
    await until("the orphan completed", stateIs(orphan.stepId, "completed"));
    await until("the step that woke the runner completed", stateIs(wake.stepId, "completed"));
    expect(await history(orphan.sessionId, orphan.stepId)).toEqual(["StepStarted 1", "StepStarted 2", "StepCompleted 2"]);
    expect(seen.get(orphan.stepId)).toBe(false);
    expect(logs.filter((l) => l.msg === "ended what gone runners left running")).toEqual([
      { msg: "ended what gone runners left running", fields: { runnerId: "successor", ledgers: 1, killed: 0 } },
    ]);
  });
});

describe("the agent CLIs a runner finds", () => {
  it("a detection that fails is logged with its error, and the runner runs on", async () => {
    const quick: StepExecutor = async () => ({ ok: true });
    const { runner, logs } = await startRunner({
      id: "no-shells",
      executors: { quick },
      detectShells: async () => {
        throw new Error("PATH unreadable");
      },
    });
    await runner.shellsDetected;
    expect(logs.filter((l) => l.msg === "shell detection failed")).toEqual([
      { msg: "shell detection failed", fields: { runnerId: "no-shells", err: "Error: PATH unreadable" } },
    ]);
    const { stepId } = await schedule({ kind: "quick" });
    await until("a step completed", stateIs(stepId, "completed"));
  });

  it("a detection that ends after the runner stopped is dropped: the stopped runner's row keeps no CLIs", async () => {
    let detected: (shells: unknown) => void = () => {};
    const { runner } = await startRunner({
      id: "late-shells",
      executors: {},
      detectShells: () => new Promise((r) => (detected = r)),
    });
    await runner.stop();
    detected([{ shell: "codex", path: "/usr/bin/codex" }]);
    await runner.shellsDetected;
    const row = await db.pool.query("SELECT shells, shells_detected_at, stopped_at FROM runners WHERE id = 'late-shells'");
    expect(row.rows[0]).toEqual({ shells: null, shells_detected_at: null, stopped_at: expect.any(Date) });
  });
});

describe("blobs no event references", () => {
  it("are collected by the runner itself, every blobCollectionMs, once past their grace period", async () => {
    const orphan = await putBlob(db.pool, `never recorded ${uniqueId()}`);
    const young = await putBlob(db.pool, `just written ${uniqueId()}`);
    await db.pool.query("UPDATE blobs SET created_at = now() - interval '1 day' WHERE hash = $1", [orphan.blob]);
    const present = async (hash: string) => (await db.pool.query("SELECT 1 FROM blobs WHERE hash = $1", [hash])).rowCount === 1;
    await startRunner({ executors: {}, blobCollectionMs: 50 });
    await until("the unreferenced blob collected", async () => !(await present(orphan.blob)));
    expect(await present(young.blob)).toBe(true);
  });
});

describe("the runner's own heartbeat", () => {
  it("its row's heartbeat moves on while it runs, which is what counts it live", async () => {
    await startRunner({ id: "beating", executors: {} });
    const heartbeat = async () =>
      (
        await db.pool.query<{ heartbeat_at: Date }>("SELECT heartbeat_at FROM runners WHERE id = 'beating'")
      ).rows[0]!.heartbeat_at.getTime();
    const first = await heartbeat();
    await until("a later heartbeat", async () => (await heartbeat()) > first, RUNNER_HEARTBEAT_MS + 3_000);
  });
});

describe("leases", () => {
  it("a step that runs for several leases keeps its lease by heartbeat: one attempt, though another runner waits to take it over", async () => {
    const attempts: number[] = [];
    const long: StepExecutor = async (step) => {
      attempts.push(step.attempt);
      await sleep(1_600);
      return { attempt: step.attempt };
    };
    const keeper = await startRunner({ id: "keeper", executors: { long }, leaseMs: 400 });
    const { sessionId, stepId } = await schedule({ kind: "long" });
    await until("the step running", stateIs(stepId, "running"));
    const claimedUntil = (await stepRow(stepId)).lease_expires_at!.getTime();
    // Ready to take the step the moment its lease ran out.
    await startRunner({ id: "vulture", executors: { long }, leaseMs: 400, reclaimBackoffMs: 0, pollMs: 50 });
    await sleep(1_000);
    expect((await stepRow(stepId)).lease_expires_at!.getTime()).toBeGreaterThan(claimedUntil + 400);
    await until("the step completed", stateIs(stepId, "completed"));
    expect(attempts).toEqual([1]);
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepCompleted 1"]);
    expect((await dataOf(sessionId, stepId, "StepStarted"))[0]).toMatchObject({ runnerId: "keeper" });
    // Logged once the result's connection is done (its COMMIT, then the claim behind it), a moment after the row shows it.
    await until("the keeper's log of its result", async () => keeper.logs.some((l) => l.msg === "step completed"));
    expect(keeper.logs.find((l) => l.msg === "step completed")?.fields).toEqual({
      runnerId: "keeper",
      stepId,
      sessionId,
      attempt: 1,
      accepted: true,
    });
  });

  it("a result that arrives after another attempt took the step is refused by the fence, and the log says it was not recorded", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const late: StepExecutor = async () => {
      await gate;
      return { late: true };
    };
    // A long lease: no heartbeat comes between the take-over and the result.
    const { logs } = await startRunner({ id: "too-late", executors: { late }, leaseMs: 60_000 });
    const { sessionId, stepId } = await schedule({ kind: "late" });
    await until("the step running", stateIs(stepId, "running"));
    await takeOver(stepId);
    release();
    await until("the result refused", () => messages(logs).includes("step result not recorded: attempt no longer holds the step"), 3_000);
    expect(logs.find((l) => l.msg.startsWith("step result not recorded"))?.fields).toMatchObject({ stepId, attempt: 1, accepted: false });
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepStarted 2"]);
  });

  it("when another attempt has taken the step, the runner's next heartbeat aborts its own: the reason reaches the executor and the log, and attempt 1 records nothing", async () => {
    const reasons: unknown[] = [];
    const { logs } = await startRunner({ id: "overtaken", executors: { stubborn: endless(reasons) }, leaseMs: 900 });
    const { sessionId, stepId } = await schedule({ kind: "stubborn" });
    await until("the step running", stateIs(stepId, "running"));
    await takeOver(stepId);
    await until("attempt 1 aborted", () => reasons.length > 0, 3_000);
    expect((reasons[0] as Error).message).toBe("lease lost: another attempt holds the step, or it ended");
    await until("the abort logged", () => messages(logs).some((m) => m.startsWith("step aborted")), 3_000);
    expect(logs.find((l) => l.msg.startsWith("step aborted"))).toEqual({
      msg: "step aborted: lease lost: another attempt holds the step, or it ended",
      fields: { runnerId: "overtaken", stepId, sessionId, attempt: 1 },
    });
    await sleep(200);
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepStarted 2"]);
    expect(await stepRow(stepId)).toMatchObject({ state: "running", attempt: 2 });
  });

  it("heartbeats that cannot reach the database: the attempt stops itself before its lease ends, and says why", async () => {
    const cut = await proxy();
    const reasons: unknown[] = [];
    const abortedAt: number[] = [];
    const leaseMs = 1_200;
    const { logs } = await startRunner({ id: "unheard", executors: { deaf: endless(reasons, abortedAt) }, leaseMs }, cut.url(db.url));
    const { stepId } = await schedule({ kind: "deaf" });
    await until("the step running", stateIs(stepId, "running"));
    await sleep(500); // a heartbeat or two confirmed
    cut.cut();
    await until("the attempt stopped", () => reasons.length > 0, 5_000);
    // It stopped while the lease it held last was still running in the database (same machine, same clock).
    expect(abortedAt[0]).toBeLessThan((await stepRow(stepId)).lease_expires_at!.getTime());
    expect((reasons[0] as Error).message).toBe("lease lost: its lease could not be confirmed before it expired");
    expect(messages(logs)).toContain("step aborted: lease lost: its lease could not be confirmed before it expired");
  });

  it("a heartbeat held up longer than its interval (the step's row locked) is no confirmation: the attempt stops for want of one, not as overtaken", async () => {
    const reasons: unknown[] = [];
    await startRunner({ id: "held-up", executors: { stubborn: endless(reasons) }, leaseMs: 900 });
    const { stepId } = await schedule({ kind: "stubborn" });
    await until("the step running", stateIs(stepId, "running"));
    const locker = await db.pool.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM steps WHERE id = $1 FOR UPDATE", [stepId]);
      await until("the attempt stopped", () => reasons.length > 0, 5_000);
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
    expect((reasons[0] as Error).message).toBe("lease lost: its lease could not be confirmed before it expired");
  });
});

describe("results under an outage", () => {
  it("a result the runner cannot record until its lease has certainly passed is given up; the next attempt runs the step and only its result is recorded", async () => {
    const cut = await proxy();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const gated: StepExecutor = async (step) => {
      if (step.attempt === 1) await gate;
      return { attempt: step.attempt };
    };
    const leaseMs = 300;
    const { logs } = await startRunner({ id: "stranded", executors: { gated }, leaseMs, reclaimBackoffMs: 0 }, cut.url(db.url));
    const { sessionId, stepId } = await schedule({ kind: "gated" });
    await until("the step running", stateIs(stepId, "running"));
    cut.cut();
    const cutAt = Date.now();
    release();
    await until("the result given up", () => messages(logs).includes("outcome not recorded; the step goes to its next attempt"), 10_000);
    // Not before four leases: until then the lease it held might still be honoured.
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(4 * leaseMs);
    expect(logs.find((l) => l.msg === "outcome not recorded; the step goes to its next attempt")?.fields).toMatchObject({
      runnerId: "stranded",
      stepId,
      attempt: 1,
    });
    // Meanwhile its loop kept trying to claim, and said why it could not.
    expect(logs.find((l) => l.msg === "database unreachable; retrying")?.fields).toEqual({
      runnerId: "stranded",
      err: expect.stringMatching(/\S/),
    });
    expect((await stepRow(stepId)).state).toBe("running");
    cut.restore();
    await until("the next attempt completed", stateIs(stepId, "completed"), 15_000);
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepStarted 2", "StepCompleted 2"]);
  });

  it("the database gone under a running step (its executor's query fails): the step is handed back uncharged, without the workflow reacting, and runs again once the database is back", async () => {
    const cut = await proxy();
    let cutNow: () => void = () => {};
    const cutting = new Promise<void>((r) => (cutNow = r));
    let pool: pg.Pool | null = null;
    const attempts: number[] = [];
    const queries: StepExecutor = async (step) => {
      attempts.push(step.attempt);
      if (step.attempt === 1) {
        await cutting;
        await pool!.query("SELECT 1");
      }
      return { attempt: step.attempt };
    };
    const reacted: string[] = [];
    const started = await startRunner(
      {
        id: "grounded",
        executors: { queries },
        react: async (_tx, _store, _session, recorded) => {
          reacted.push(...recorded.map((e) => e.type));
        },
      },
      cut.url(db.url),
    );
    pool = started.pool;
    // One attempt allowed: a charged attempt would fail the step for good.
    const { sessionId, stepId } = await schedule({ kind: "queries", maxAttempts: 1 });
    await until("the step running", stateIs(stepId, "running"));
    cut.cut();
    cutNow();
    await sleep(1_000);
    cut.restore();
    await until("the step completed", stateIs(stepId, "completed"), 15_000);
    expect(attempts).toEqual([1, 2]);
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepReleased 1", "StepStarted 2", "StepCompleted 2"]);
    // The workflow is asked about the result only, not about the release.
    expect(reacted).toEqual(["StepCompleted"]);
    const [released] = await dataOf(sessionId, stepId, "StepReleased");
    expect(released!.reason).toMatch(/^the database was unreachable: \S/);
    expect(started.logs.find((l) => l.msg === "step released: the database was unreachable")?.fields).toMatchObject({
      stepId,
      attempt: 1,
      err: expect.any(String),
    });
  });
});

describe("failures", () => {
  it("a step past its timeout fails as a timeout, retryable, and its next attempt starts after the backoff, not at the poll a minute away", async () => {
    const reasons: unknown[] = [];
    const stall = endless(reasons);
    const slowFirst: StepExecutor = (step, ctx) => (step.attempt === 1 ? stall(step, ctx) : Promise.resolve({ attempt: step.attempt }));
    const { logs } = await startRunner({ id: "patient", executors: { slowFirst }, pollMs: 60_000, retryBaseMs: 100 });
    const { sessionId, stepId } = await schedule({ kind: "slowFirst", timeoutMs: 300 });
    await until("the retry completed", stateIs(stepId, "completed"), 5_000);
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepFailed 1", "StepStarted 2", "StepCompleted 2"]);
    const [failed] = await dataOf(sessionId, stepId, "StepFailed");
    expect(failed).toMatchObject({ errorClass: "timeout", message: "step timed out after 300 ms", retryAt: expect.any(String) });
    expect((reasons[0] as Error).message).toBe("timed out after 300 ms");
    expect(logs.find((l) => l.msg === "step failed")?.fields).toEqual({
      runnerId: "patient",
      stepId,
      sessionId,
      attempt: 1,
      errorClass: "timeout",
      message: "step timed out after 300 ms",
      retryable: true,
    });
  });

  it("an executor that ignores its timeout and returns anyway: the attempt is recorded as timed out, not completed", async () => {
    const deaf: StepExecutor = async () => {
      await sleep(500);
      return { finished: "too late" };
    };
    await startRunner({ id: "overrunning", executors: { deaf } });
    const { sessionId, stepId } = await schedule({ kind: "deaf", timeoutMs: 150, maxAttempts: 1 });
    await until("the step failed", stateIs(stepId, "failed"), 5_000);
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepFailed 1"]);
    expect((await dataOf(sessionId, stepId, "StepFailed"))[0]).toMatchObject({ errorClass: "timeout", retryAt: null });
  });

  it("an executor's unexpected error, or no executor for the kind, fails the step as internal_error with its message and no retry, and the workflow reacts; a thrown string or null is its own message", async () => {
    const throwsError: StepExecutor = async () => {
      throw new Error("disk on fire");
    };
    const throwsString: StepExecutor = async () => {
      throw "plain words";
    };
    const throwsNull: StepExecutor = async () => {
      throw null;
    };
    const reacted: string[] = [];
    const { logs } = await startRunner({
      id: "clumsy",
      executors: { throwsError, throwsString, throwsNull },
      react: async (_tx, _store, _session, recorded) => {
        reacted.push(...recorded.map((e) => e.type));
      },
    });
    const a = await schedule({ kind: "throwsError", maxAttempts: 3 });
    const b = await schedule({ kind: "throwsString", maxAttempts: 3 });
    const c = await schedule({ kind: "unheardOf", maxAttempts: 3 });
    const d = await schedule({ kind: "throwsNull", maxAttempts: 3 });
    await until("all four failed", async () => {
      const states = await Promise.all([a, b, c, d].map((x) => stepRow(x.stepId)));
      return states.every((row) => row.state === "failed");
    });
    expect(reacted).toEqual(["StepFailed", "StepFailed", "StepFailed", "StepFailed"]);
    expect(await history(c.sessionId, c.stepId)).toEqual(["StepStarted 1", "StepFailed 1"]);
    expect((await dataOf(c.sessionId, c.stepId, "StepFailed"))[0]).toEqual({
      stepId: c.stepId,
      attempt: 1,
      errorClass: "internal_error",
      message: 'no executor for step kind "unheardOf" on runner clumsy',
      retryAt: null,
    });
    expect(await history(a.sessionId, a.stepId)).toEqual(["StepStarted 1", "StepFailed 1"]);
    expect(await dataOf(a.sessionId, a.stepId, "StepFailed")).toEqual([
      { stepId: a.stepId, attempt: 1, errorClass: "internal_error", message: "disk on fire", retryAt: null },
    ]);
    expect((await dataOf(b.sessionId, b.stepId, "StepFailed"))[0]).toMatchObject({ errorClass: "internal_error", message: "plain words" });
    expect((await dataOf(d.sessionId, d.stepId, "StepFailed"))[0]).toMatchObject({ errorClass: "internal_error", message: "null" });
    expect(logs.find((l) => l.msg === "step failed" && l.fields.stepId === a.stepId)?.fields).toMatchObject({
      errorClass: "internal_error",
      message: "disk on fire",
      retryable: false,
    });
  });

  it("a step whose runners vanished MAX_LOST_ATTEMPTS + 1 times is failed by a running runner's own sweep", async () => {
    // Attempts left to spare: losses are not charged, and the sweep's failure is final all the same.
    const { sessionId, stepId } = await schedule({ kind: "ghostly", maxAttempts: 3 });
    for (let lost = 0; lost <= MAX_LOST_ATTEMPTS; lost++) {
      expect(await claimNextStep(db.store, { runnerId: `ghost-${lost}`, leaseMs: 20, reclaimBackoffMs: 0 })).toMatchObject({ id: stepId });
      await sleep(40);
    }
    await startRunner({ id: "sweeper", executors: {}, pollMs: 200 });
    await until("the step failed", stateIs(stepId, "failed"), 5_000);
    expect((await dataOf(sessionId, stepId, "StepFailed"))[0]).toMatchObject({
      errorClass: "internal_error",
      message: `runner lost: ${MAX_LOST_ATTEMPTS + 1} runners in a row vanished while holding this step`,
      retryAt: null,
    });
  });
});

describe("the claim loop", () => {
  it("an error of its own (the workflow's reaction to a swept step fails, with no fallback) is logged as such, and the loop goes on", async () => {
    const swept = await exhausted();
    const quick: StepExecutor = async () => ({ ok: true });
    const { logs } = await startRunner({
      id: "faulty-sweep",
      executors: { quick },
      react: async (_tx, _store, _session, recorded) => {
        if (recorded.some((e) => e.type === "StepFailed")) throw new Error("no transition for a lost runner");
      },
    });
    await until("the loop's error logged", () => messages(logs).includes("runner loop error"));
    expect(logs.find((l) => l.msg === "runner loop error")?.fields).toEqual({
      runnerId: "faulty-sweep",
      err: "Error: the workflow could not react to the step's outcome: no transition for a lost runner",
    });
    expect(messages(logs)).not.toContain("database unreachable; retrying");
    expect((await stepRow(swept.stepId)).state).toBe("running");
    const { stepId } = await schedule({ kind: "quick" });
    await until("a new step completed", stateIs(stepId, "completed"));
  });

  it("work that arrives while it is busy (here, in a sweep) is taken as soon as it is free, with its poll a minute away", async () => {
    await exhausted();
    let sweeping: () => void = () => {};
    const inSweep = new Promise<void>((r) => (sweeping = r));
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const quick: StepExecutor = async () => ({ ok: true });
    await startRunner({
      id: "busy",
      executors: { quick },
      pollMs: 60_000,
      react: async (_tx, _store, _session, recorded) => {
        if (recorded.some((e) => e.type === "StepFailed")) {
          sweeping();
          await gate;
        }
      },
    });
    await inSweep;
    const { stepId } = await schedule({ kind: "quick" });
    // Time for its NOTIFY to reach the runner while the sweep still holds the loop.
    await sleep(300);
    release();
    await until("the step completed", stateIs(stepId, "completed"), 5_000);
  });

  it("a step that ends with an error the runner did not expect (here, its own log failing) is logged as such", async () => {
    const logs: LogLine[] = [];
    const broken: StepExecutor = async () => {
      throw new Error("broken");
    };
    await startRunner({
      id: "unlucky",
      executors: { broken },
      log: (msg, fields = {}) => {
        if (msg === "step failed") throw new Error("log full");
        logs.push({ msg, fields });
      },
    });
    const { stepId } = await schedule({ kind: "broken", maxAttempts: 1 });
    await until("the unexpected error logged", () => messages(logs).includes("step ended with an unexpected error"));
    expect(logs.find((l) => l.msg === "step ended with an unexpected error")?.fields).toEqual({
      runnerId: "unlucky",
      stepId,
      err: "Error: log full",
    });
    expect((await stepRow(stepId)).state).toBe("failed");
  });

  it("a retry is woken when it becomes claimable: after the runner's own backoff, or a provider's longer Retry-After, with its poll a minute away", async () => {
    const limited: StepExecutor = async (step) => {
      if (step.attempt === 1) throw new StepExecutionError("provider_rate_limit", "slow down", true, 3_000);
      return { attempt: step.attempt };
    };
    const flaky: StepExecutor = async (step) => {
      if (step.attempt === 1) throw new StepExecutionError("tool_error", "try again", true);
      return { attempt: step.attempt };
    };
    // The runner's backoff (1.5 s) is longer than the default's first wait (1 s), the Retry-After (3 s) longer than the runner's.
    await startRunner({ id: "punctual", executors: { limited, flaky }, pollMs: 60_000, retryBaseMs: 1_500 });
    const a = await schedule({ kind: "limited" });
    const b = await schedule({ kind: "flaky" });
    await until(
      "both retries completed",
      async () => (await stateIs(a.stepId, "completed")()) && (await stateIs(b.stepId, "completed")()),
      10_000,
    );
    expect(await history(a.sessionId, a.stepId)).toEqual(["StepStarted 1", "StepFailed 1", "StepStarted 2", "StepCompleted 2"]);
    expect(await history(b.sessionId, b.stepId)).toEqual(["StepStarted 1", "StepFailed 1", "StepStarted 2", "StepCompleted 2"]);
  });

  it("an attempt that ended is not aborted afterwards by its timeout", async () => {
    const signals = new Map<string, AbortSignal>();
    const quick: StepExecutor = async (step, ctx) => {
      signals.set(step.id, ctx.signal);
      return {};
    };
    await startRunner({ id: "tidy", executors: { quick, endless: endless([]) } });
    const done = await schedule({ kind: "quick", timeoutMs: 300 });
    await until("the quick step completed", stateIs(done.stepId, "completed"));
    // Started after the first ended, with the same timeout: once it has timed out, the first one's would have fired too.
    const slow = await schedule({ kind: "endless", timeoutMs: 300, maxAttempts: 1 });
    await until("the slow step timed out", stateIs(slow.stepId, "failed"));
    expect(signals.get(done.stepId)!.aborted).toBe(false);
  });
});

describe("shutdown and cancels", () => {
  it("on shutdown a step still running after the grace period is released, the workflow is not asked to react to a release, and the log says so", async () => {
    const reasons: unknown[] = [];
    const reacted: string[] = [];
    const { runner, logs } = await startRunner({
      id: "leaving",
      executors: { endless: endless(reasons) },
      shutdownGraceMs: 100,
      react: async (_tx, _store, _session, recorded) => {
        reacted.push(...recorded.map((e) => e.type));
      },
    });
    const { sessionId, stepId } = await schedule({ kind: "endless" });
    await until("the step running", stateIs(stepId, "running"));
    await runner.stop();
    expect((reasons[0] as Error).message).toBe("runner shutting down");
    expect(reacted).toEqual([]);
    expect(await dataOf(sessionId, stepId, "StepReleased")).toEqual([{ stepId, attempt: 1, reason: "runner shutting down" }]);
    expect(await stepRow(stepId)).toMatchObject({ state: "pending", attempt: 1 });
    expect(messages(logs).slice(-2)).toEqual(["step released on shutdown", "runner stopped"]);
  });

  it("a runner shutting down takes no new step, not even right behind a result it records during its grace period", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const gated: StepExecutor = async (step) => {
      if ((step.input as { wait?: boolean }).wait) await gate;
      return { ok: true };
    };
    const { runner } = await startRunner({ id: "closing", executors: { gated }, concurrency: 1, shutdownGraceMs: 5_000 });
    const first = await schedule({ kind: "gated", input: { wait: true } });
    await until("the first step running", stateIs(first.stepId, "running"));
    const waiting = await schedule({ kind: "gated" });
    const stopped = runner.stop();
    await sleep(50);
    release();
    await stopped;
    expect((await stepRow(first.stepId)).state).toBe("completed");
    expect(await stepRow(waiting.stepId)).toMatchObject({ state: "pending", attempt: 0 });
  });

  it("a result that cannot be recorded during shutdown is still retried (only a release is not), and recorded once the database is back", async () => {
    const cut = await proxy();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const cutThenFinish: StepExecutor = async () => {
      await gate;
      // The database goes away as the step finishes, and comes back a moment later.
      cut.cut();
      setTimeout(() => cut.restore(), 300);
      return { ok: true };
    };
    const { runner, logs } = await startRunner(
      { id: "persevering", executors: { cutThenFinish }, shutdownGraceMs: 10_000 },
      cut.url(db.url),
      db.url,
    );
    const { stepId } = await schedule({ kind: "cutThenFinish" });
    await until("the step running", stateIs(stepId, "running"));
    const stopped = runner.stop();
    release();
    await stopped;
    expect(logs.map((l) => l.msg)).not.toContain("outcome not recorded; the step goes to its next attempt");
    expect(await stepRow(stepId)).toMatchObject({ state: "completed", attempt: 1 });
  });

  it("shutting down while the database is away: the release is not waited for (the next runner takes the step when its lease ends), and the log says so", async () => {
    const cut = await proxy();
    const reasons: unknown[] = [];
    const leaseMs = 5_000;
    const { runner, logs } = await startRunner(
      { id: "abandoning", executors: { endless: endless(reasons) }, leaseMs, shutdownGraceMs: 100 },
      cut.url(db.url),
    );
    const { stepId } = await schedule({ kind: "endless" });
    await until("the step running", stateIs(stepId, "running"));
    cut.cut();
    const stopAt = Date.now();
    await runner.stop();
    expect(Date.now() - stopAt).toBeLessThan(leaseMs);
    expect(logs.find((l) => l.msg === "outcome not recorded; the step goes to its next attempt")?.fields).toMatchObject({
      stepId,
      attempt: 1,
    });
    expect(await stepRow(stepId)).toMatchObject({ state: "running", attempt: 1 });
  });

  it("an operator's cancel reaches the running step through NOTIFY at once, with the cancel poll a minute away; nothing more is recorded for it", async () => {
    const reasons: unknown[] = [];
    const { logs } = await startRunner({ id: "obedient", executors: { endless: endless(reasons) }, cancelPollMs: 60_000 });
    const { sessionId, stepId } = await schedule({ kind: "endless" });
    await until("the step running", stateIs(stepId, "running"));
    await db.store.append(sessionId, "any", [{ type: "StepCancelled", data: { stepId } }], { actor: testActor });
    await until("the attempt aborted", () => reasons.length > 0, 2_000);
    expect((reasons[0] as Error).message).toBe("cancelled by an operator");
    await until("the cancel logged", () => messages(logs).includes("step cancelled by an operator"), 2_000);
    await sleep(200);
    expect(await history(sessionId, stepId)).toEqual(["StepStarted 1", "StepCancelled"]);
  });
});

/** The backends of runners' LISTEN connections to this database. */
const listeners = async () =>
  (
    await db.pool.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'catcafe-runner-listen' AND datname = current_database()",
    )
  ).rows.map((r) => r.pid);

/** A proxy to the database that holds every connection unanswered until `release()`. */
async function heldProxy(): Promise<{ url: string; release: () => void }> {
  const waiting: net.Socket[] = [];
  let released = false;
  const pass = (client: net.Socket) => {
    const upstream = net.connect(Number(new URL(db.url).port), "127.0.0.1");
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = net.createServer((client) => (released ? pass(client) : waiting.push(client)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(db.url);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    release() {
      released = true;
      for (const client of waiting.splice(0)) pass(client);
      server.close();
    },
  };
}

/** A proxy to the database that drops the first connection to send a LISTEN, before it reaches the server. */
async function proxyDroppingFirstListen(): Promise<{ url: string; close: () => void }> {
  let dropped = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(new URL(db.url).port), "127.0.0.1");
    client.on("data", (chunk: Buffer) => {
      if (!dropped && chunk.includes("LISTEN")) {
        dropped = true;
        client.destroy();
        upstream.destroy();
      } else upstream.write(chunk);
    });
    upstream.pipe(client);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      a!.on("error", () => b!.destroy());
      a!.on("close", () => b!.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(db.url);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return { url: url.toString(), close: () => server.close() };
}

describe("the LISTEN connection", () => {
  it("cut: the runner retries until it is back, says so, and starts the work scheduled meanwhile at once, with its poll a minute away", async () => {
    const cut = await proxy();
    const quick: StepExecutor = async () => ({ ok: true });
    const { logs } = await startRunner({ id: "deafened", executors: { quick }, pollMs: 60_000 }, db.url, cut.url(db.url));
    cut.cut();
    await until("two failed reconnects", () => messages(logs).filter((m) => m === "listen failed; retrying").length >= 2, 5_000);
    expect(logs.find((l) => l.msg === "listen failed; retrying")?.fields).toEqual({
      runnerId: "deafened",
      err: expect.stringMatching(/\S/),
    });
    const meanwhile = await schedule({ kind: "quick" });
    await sleep(300);
    // The NOTIFY was lost and the poll is a minute away.
    expect((await stepRow(meanwhile.stepId)).state).toBe("pending");
    cut.restore();
    await until("the step scheduled meanwhile completed", stateIs(meanwhile.stepId, "completed"), 3_000);
    const again = logs.find((l) => l.msg === "listening again");
    expect(again?.fields).toMatchObject({ runnerId: "deafened" });
    expect(again!.fields.failures).toBeGreaterThanOrEqual(2);
    // And NOTIFY wakes it again.
    const after = await schedule({ kind: "quick" });
    await until("new work woken by NOTIFY", stateIs(after.stepId, "completed"), 2_000);
  });

  it("lost after it opened but before its LISTEN was answered: one retry, and one LISTEN connection in the end", async () => {
    const dropping = await proxyDroppingFirstListen();
    try {
      const { logs } = await startRunner({ id: "dropped", executors: {} }, db.url, dropping.url);
      expect(messages(logs).filter((m) => m === "listen failed; retrying")).toHaveLength(1);
      expect(logs.find((l) => l.msg === "listening again")?.fields).toEqual({ runnerId: "dropped", failures: 1 });
      await until("one LISTEN connection", async () => (await listeners()).length === 1);
    } finally {
      dropping.close();
    }
  });

  it("stopped while it is still opening: it is closed once open, not kept", async () => {
    const held = await heldProxy();
    const pool = createPool(db.url, 2);
    pools.push(pool);
    const runner = new Runner(createAppEventStore(pool), pool, held.url, { id: "hasty", executors: {}, stateDir: STATE_DIR });
    await runner.start();
    await runner.stop();
    held.release();
    await runner.listeningOnce();
    await until("no LISTEN connection left", async () => (await listeners()).length === 0);
  });

  it("ended by the server: the runner opens a new one at once and is woken by the next step", async () => {
    const quick: StepExecutor = async () => ({ ok: true });
    await startRunner({ id: "reconnecting", executors: { quick }, pollMs: 60_000 });
    const [before] = await listeners();
    expect(before).toBeDefined();
    await db.pool.query("SELECT pg_terminate_backend($1)", [before]);
    await until("a new LISTEN connection", async () => {
      const now = await listeners();
      return now.length === 1 && now[0] !== before;
    });
    const step = await schedule({ kind: "quick" });
    await until("the step completed", stateIs(step.stepId, "completed"), 2_000);
  });
});
