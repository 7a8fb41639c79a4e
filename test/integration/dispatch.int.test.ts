// Step dispatch (server/runner/dispatch.ts) at its edges, called directly: the database away
// is an error, never "nothing to claim" or "refused"; a reaction's connection error is not a
// defect while any other failure of it is; the claim behind a result sees the result; retries
// stop when the step's attempts are used up; the fence's refusal names the step and attempt; a
// claim refused every time gives up after three looks; the sweep leaves a step whose holder
// heartbeats meanwhile; a fallback's own failure comes back; a step a reaction schedules wakes
// the runners once, after the outcome's commit, and an outcome that schedules nothing does not.
import crypto from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { createPool, isConnectionError, withTransaction, type Tx } from "../../server/db/pool";
import type { EventStore } from "../../server/events/store";
import type { RecordedEvent } from "../../server/events/types";
import {
  appendWhileHeld,
  claimNextStep,
  failExhaustedSteps,
  MAX_LOST_ATTEMPTS,
  recordStepOutcome,
  scheduleStep,
  type OutcomeReactor,
  type ReactionFallback,
} from "../../server/runner/dispatch";
import { StaleAttemptError, STEPS_CHANNEL } from "../../server/runner/steps-projection";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";

let db: TestDatabase;
let cut: TcpProxy;
let cutPool: pg.Pool;
let cutStore: EventStore;
const runner = { kind: "runner", id: "dispatcher" } as const;
const claimOptions = { runnerId: "dispatcher", leaseMs: 60_000, reclaimBackoffMs: 0 };

beforeAll(async () => {
  db = await createTestDatabase();
  cut = await startTcpProxy(Number(new URL(db.url).port));
  cut.cut();
  cutPool = createPool(cut.url(db.url), 2);
  cutStore = createAppEventStore(cutPool);
});
afterAll(async () => {
  await cutPool.end();
  await cut.close();
});

async function newSession(): Promise<string> {
  const id = uniqueId();
  await db.store.append(id, "no_stream", [{ type: "SessionCreated", data: { title: "dispatch", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return id;
}

/** A step of a new session, claimed: attempt 1 holds it (with its kind and input, as the runner records it). */
async function claimedStep(maxAttempts = 3): Promise<{ id: string; attempt: number; sessionId: string; kind: string; input: unknown }> {
  const sessionId = await newSession();
  const id = await scheduleStep(db.store, { sessionId, kind: "dispatched", input: {}, maxAttempts }, { actor: testActor });
  const claimed = await claimNextStep(db.store, claimOptions);
  expect(claimed).toMatchObject({ id, attempt: 1 });
  return { id, attempt: 1, sessionId, kind: "dispatched", input: {} };
}

/** Progress of attempt 1 (a rate-limit wait), as an agent step appends it while it runs. */
const waited = (stepId: string) => ({
  type: "RateLimitWaited",
  data: { stepId, attempt: 1, brain: "b", minIntervalMs: 100, waitMs: 50 },
});

const stepRow = async (id: string) =>
  (await db.pool.query<{ state: string; attempt: number }>("SELECT state, attempt FROM steps WHERE id = $1", [id])).rows[0]!;

async function typesOf(sessionId: string): Promise<string[]> {
  return (await db.store.readStream(sessionId)).map((e) => e.type);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );
}

describe("the database away", () => {
  it("a claim fails with the connection error: it is not taken for 'nothing to claim'", async () => {
    const err = await rejection(claimNextStep(cutStore, claimOptions));
    expect(isConnectionError(err)).toBe(true);
  });

  it("progress of an attempt fails with the connection error: it is not taken for a refusal", async () => {
    const step = await claimedStep();
    const progress = appendWhileHeld(cutStore, step, [waited(step.id)], {
      actor: runner,
    });
    expect(isConnectionError(await rejection(progress))).toBe(true);
  });
});

describe("reactions", () => {
  it("a reaction that fails with a connection error is not a defect: the error comes back, the fallback is not called, nothing is recorded", async () => {
    const step = await claimedStep();
    const before = await typesOf(step.sessionId);
    const dropped = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    const fallbacks: string[] = [];
    const err = await rejection(
      recordStepOutcome(db.store, step, { kind: "completed", output: {} }, runner, {
        react: async () => {
          throw dropped;
        },
        onReactionError: async (_tx, _store, _session, _recorded, message) => {
          fallbacks.push(message);
        },
      }),
    );
    expect(err).toBe(dropped);
    expect(fallbacks).toEqual([]);
    expect(await typesOf(step.sessionId)).toEqual(before);
    expect(await stepRow(step.id)).toEqual({ state: "running", attempt: 1 });
  });

  it("a reaction that fails for any other reason (a defect): the outcome is recorded with the fallback's events, which get the cause, and the result counts as recorded", async () => {
    for (const thrown of [new Error("no transition from 'reviewing'"), "a bare string", null]) {
      const step = await claimedStep();
      const fallbacks: Array<{ message: string; recorded: string[] }> = [];
      const fallback: ReactionFallback = async (tx, store, sessionId, recorded, message) => {
        fallbacks.push({ message, recorded: recorded.map((e) => e.type) });
        await store.appendInTx(tx, sessionId, "any", [{ type: "SessionStateChanged", data: { from: "open", to: "failed" } }], {
          actor: runner,
        });
      };
      const react: OutcomeReactor = async () => {
        throw thrown;
      };
      const recorded = await recordStepOutcome(db.store, step, { kind: "completed", output: { n: 1 } }, runner, {
        react,
        onReactionError: fallback,
      });
      expect(recorded).toBe(true);
      const cause = thrown instanceof Error ? thrown.message : String(thrown);
      expect(fallbacks).toEqual([{ message: `the workflow could not react to the step's outcome: ${cause}`, recorded: ["StepCompleted"] }]);
      expect((await typesOf(step.sessionId)).slice(-2)).toEqual(["StepCompleted", "SessionStateChanged"]);
      expect(await stepRow(step.id)).toEqual({ state: "completed", attempt: 1 });
    }
  });

  it("a failure that would be retried, whose reaction fails: the fallback ends the step, recorded as final, and no retry is left to run", async () => {
    const step = await claimedStep(3);
    const retriedAt: Array<string | null> = [];
    const recorded = await recordStepOutcome(
      db.store,
      step,
      { kind: "failed", errorClass: "timeout", message: "slow", retryable: true },
      runner,
      {
        react: async () => {
          throw new Error("no transition from 'reviewing'");
        },
        onReactionError: async (_tx, _store, _session, events) => {
          retriedAt.push(...events.map((e) => (e.data as { retryAt: string | null }).retryAt));
        },
      },
    );
    expect(recorded).toBe(true);
    expect(retriedAt).toEqual([null]);
    const failed = (await db.store.readStream(step.sessionId)).filter((e) => e.type === "StepFailed");
    expect(failed.map((e) => e.data)).toEqual([{ stepId: step.id, attempt: 1, errorClass: "timeout", message: "slow", retryAt: null }]);
    expect(await stepRow(step.id)).toEqual({ state: "failed", attempt: 1 });
  });

  it("a fallback that fails itself: its error comes back, and nothing is recorded", async () => {
    const step = await claimedStep();
    const before = await typesOf(step.sessionId);
    const broken = new Error("the fallback is broken too");
    const err = await rejection(
      recordStepOutcome(db.store, step, { kind: "completed", output: {} }, runner, {
        react: async () => {
          throw new Error("a defect in the reaction");
        },
        onReactionError: async () => {
          throw broken;
        },
      }),
    );
    expect(err).toBe(broken);
    expect(await typesOf(step.sessionId)).toEqual(before);
    expect(await stepRow(step.id)).toEqual({ state: "running", attempt: 1 });
  });

  it("the claim behind a result runs after its commit, on a connection that sees it", async () => {
    const step = await claimedStep();
    const seen: string[] = [];
    await recordStepOutcome(db.store, step, { kind: "completed", output: {} }, runner, {
      behind: async (tx: Tx) => {
        const r = await tx.query<{ state: string }>("SELECT state FROM steps WHERE id = $1", [step.id]);
        seen.push(r.rows[0]!.state);
      },
    });
    expect(seen).toEqual(["completed"]);
  });
});

/**
 * The steps channel (the runners' doorbell) heard from now on. `heardSoFar` returns the rings
 * committed before it was called: it rings a marker last and waits for it (notifications
 * arrive in commit order), so no wait for an absence is timed.
 */
async function stepsDoorbell(): Promise<{ heardSoFar(): Promise<number>; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let rings = 0;
  const markers = new Map<string, () => void>();
  client.on("notification", (n) => {
    if (n.channel !== STEPS_CHANNEL) return;
    const marker = markers.get(n.payload ?? "");
    if (marker) marker();
    else rings++;
  });
  await client.query(`LISTEN ${STEPS_CHANNEL}`);
  return {
    async heardSoFar() {
      const marker = `marker-${uniqueId()}`;
      const arrived = new Promise<void>((resolve) => markers.set(marker, resolve));
      await db.pool.query("SELECT pg_notify($1, $2)", [STEPS_CHANNEL, marker]);
      await arrived;
      const heard = rings;
      rings = 0;
      return heard;
    },
    close: () => client.end(),
  };
}

/** Cancels steps a test scheduled and left pending, so that the next test's claim does not take them. */
async function cancelLeftovers(sessionId: string, stepIds: readonly string[]): Promise<void> {
  for (const stepId of stepIds)
    await db.store.append(sessionId, "any", [{ type: "StepCancelled", data: { stepId } }], { actor: testActor });
}

describe("the runners' doorbell for steps an outcome schedules (docs/scaling.md, 'LangGraph side by side')", () => {
  /** A reaction that schedules the session's next step, as the workflow's does. */
  const scheduleNext =
    (ids: string[]): OutcomeReactor =>
    async (tx, store, sessionId) => {
      const recorded = await store.appendInTx(
        tx,
        sessionId,
        "any",
        [
          {
            type: "StepScheduled",
            data: { stepId: crypto.randomUUID(), kind: "dispatched", input: {}, timeoutMs: 60_000, maxAttempts: 3 },
          },
        ],
        { actor: runner },
      );
      ids.push((recorded.events[0]!.data as { stepId: string }).stepId);
    };

  it("an outcome whose reaction schedules the next step rings once, after its commit: the step is pending when it rings", async () => {
    const step = await claimedStep();
    const bell = await stepsDoorbell();
    try {
      const next: string[] = [];
      const states: string[] = [];
      expect(
        await recordStepOutcome(db.store, step, { kind: "completed", output: {} }, runner, {
          react: scheduleNext(next),
          // Right behind the wake: what a runner woken by it would see.
          behind: async (tx) => {
            states.push((await tx.query<{ state: string }>("SELECT state FROM steps WHERE id = $1", [next[0]])).rows[0]!.state);
          },
        }),
      ).toBe(true);
      expect(await bell.heardSoFar()).toBe(1);
      expect(states).toEqual(["pending"]);
      expect(await stepRow(step.id)).toEqual({ state: "completed", attempt: 1 });
      // It is claimable: the next claim takes it.
      expect(await claimNextStep(db.store, claimOptions)).toMatchObject({ id: next[0], attempt: 1 });
    } finally {
      await bell.close();
    }
  });

  it("a failure whose reaction schedules a step rings too; an outcome whose reaction schedules nothing does not ring", async () => {
    const failing = await claimedStep(1);
    const done = await claimedStep();
    const bell = await stepsDoorbell();
    try {
      const next: string[] = [];
      const failure = { kind: "failed", errorClass: "internal_error", message: "boom", retryable: false } as const;
      expect(await recordStepOutcome(db.store, failing, failure, runner, { react: scheduleNext(next) })).toBe(true);
      expect(await bell.heardSoFar()).toBe(1);
      expect(next).toHaveLength(1);
      await cancelLeftovers(failing.sessionId, next);
      expect(await bell.heardSoFar()).toBe(0);
      expect(await recordStepOutcome(db.store, done, { kind: "completed", output: {} }, runner, { react: async () => {} })).toBe(true);
      expect(await bell.heardSoFar()).toBe(0);
      expect(await stepRow(done.id)).toEqual({ state: "completed", attempt: 1 });
    } finally {
      await bell.close();
    }
  });

  it("a transaction that says it wakes the runners itself does not ring in its commit; a step scheduled anywhere else rings as it commits", async () => {
    const sessionId = await newSession();
    const bell = await stepsDoorbell();
    try {
      const quiet = crypto.randomUUID();
      await withTransaction(db.pool, async (tx) => {
        await tx.query("SELECT set_config('catcafe.steps_wake', 'after_commit', true)");
        await db.store.appendInTx(
          tx,
          sessionId,
          "any",
          [{ type: "StepScheduled", data: { stepId: quiet, kind: "dispatched", input: {}, timeoutMs: 60_000, maxAttempts: 3 } }],
          { actor: testActor },
        );
      });
      expect(await bell.heardSoFar()).toBe(0);
      expect(await stepRow(quiet)).toEqual({ state: "pending", attempt: 0 });
      // The setting is its transaction's own: a scheduling outside it rings.
      const rung = await scheduleStep(db.store, { sessionId, kind: "dispatched", input: {} }, { actor: testActor });
      expect(await bell.heardSoFar()).toBe(1);
      await cancelLeftovers(sessionId, [quiet, rung]);
    } finally {
      await bell.close();
    }
  });
});

/** Waits until a claim statement of this database waits for a lock (blocked behind another transaction's row). */
async function aClaimWaitsForALock(): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const r = await db.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%catcafe_pick_step%'`,
    );
    if (r.rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("no claim waited for a lock");
}

describe("races", () => {
  it("a claim whose pick is overtaken before its start is recorded (a heartbeat landed): nothing is recorded, and it looks again instead of failing", async () => {
    const step = await claimedStep();
    await db.pool.query("UPDATE steps SET lease_expires_at = now() - interval '1 minute' WHERE id = $1", [step.id]);
    // The holder's heartbeat, still in flight: it has the row, and will extend the lease.
    const holder = await db.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("UPDATE steps SET lease_expires_at = now() + interval '1 minute' WHERE id = $1", [step.id]);
      const claim = claimNextStep(db.store, { runnerId: "rival", leaseMs: 60_000, reclaimBackoffMs: 0 });
      await aClaimWaitsForALock();
      await holder.query("COMMIT");
      expect(await claim).toBeNull();
    } finally {
      holder.release();
    }
    expect(await stepRow(step.id)).toEqual({ state: "running", attempt: 1 });
    expect((await typesOf(step.sessionId)).filter((t) => t === "StepStarted")).toHaveLength(1);
  });

  it("a reaction that fails, and meanwhile another attempt took the step: the fallback is refused too, and the result counts as not recorded", async () => {
    const step = await claimedStep();
    await db.pool.query("UPDATE steps SET lease_expires_at = now() - interval '1 minute' WHERE id = $1", [step.id]);
    // The result's store: between the reaction's transaction (rolled back) and the fallback's,
    // another runner takes the step over.
    let connects = 0;
    let takeover: unknown;
    const pool = new Proxy(db.pool, {
      get(target, prop) {
        if (prop === "connect")
          return async () => {
            if (++connects === 2) takeover = await claimNextStep(db.store, { runnerId: "rescuer", leaseMs: 60_000, reclaimBackoffMs: 0 });
            return target.connect();
          };
        const value: unknown = Reflect.get(target, prop);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const fallbacks: string[] = [];
    const recorded = await recordStepOutcome(createAppEventStore(pool), step, { kind: "completed", output: {} }, runner, {
      react: async () => {
        throw new Error("a defect in the reaction");
      },
      onReactionError: async (_tx, _store, _session, _recorded, message) => {
        fallbacks.push(message);
      },
    });
    expect(connects).toBe(2);
    expect(takeover).toMatchObject({ id: step.id, attempt: 2, reclaimed: true });
    expect(recorded).toBe(false);
    expect(fallbacks).toEqual([]);
    expect(await stepRow(step.id)).toEqual({ state: "running", attempt: 2 });
    expect((await typesOf(step.sessionId)).slice(-1)).toEqual(["StepStarted"]);
  });
});

describe("claims refused", () => {
  it("a claim the fence refuses every time (as if another runner always got there first) looks three times, then finds nothing", async () => {
    const sessionId = await newSession();
    const id = await scheduleStep(db.store, { sessionId, kind: "dispatched", input: {} }, { actor: testActor });
    // Every StepStarted is refused as a stale attempt's; a sequence (not rolled back) counts the looks.
    await db.pool.query(`
      CREATE SEQUENCE claim_looks;
      CREATE FUNCTION refuse_every_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM nextval('claim_looks');
        RAISE EXCEPTION 'claim refused' USING ERRCODE = 'CCS01', DETAIL = '{"what": "StepStarted"}';
      END $$;
      CREATE TRIGGER refuse_every_claim BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.type = 'StepStarted') EXECUTE FUNCTION refuse_every_claim();`);
    try {
      expect(await claimNextStep(db.store, claimOptions)).toBeNull();
      expect((await db.pool.query("SELECT last_value FROM claim_looks")).rows[0]).toEqual({ last_value: "3" });
      expect(await stepRow(id)).toEqual({ state: "pending", attempt: 0 });
    } finally {
      await db.pool.query("DROP TRIGGER refuse_every_claim ON events; DROP FUNCTION refuse_every_claim(); DROP SEQUENCE claim_looks");
      // Not left for the next test's claim.
      await db.store.append(sessionId, "any", [{ type: "StepCancelled", data: { stepId: id } }], { actor: testActor });
    }
  });
});

describe("the sweep of steps whose runners kept vanishing", () => {
  it("a step whose holder heartbeats between the sweep's look and its record is left running", async () => {
    const step = await claimedStep();
    await db.pool.query("UPDATE steps SET lost = $2, lease_expires_at = now() - interval '1 minute' WHERE id = $1", [
      step.id,
      MAX_LOST_ATTEMPTS,
    ]);
    // The record's transaction begins after the holder's heartbeat extended the lease.
    let connects = 0;
    const pool = new Proxy(db.pool, {
      get(target, prop) {
        if (prop === "connect")
          return async () => {
            if (++connects === 1)
              await db.pool.query("UPDATE steps SET lease_expires_at = now() + interval '1 minute' WHERE id = $1", [step.id]);
            return target.connect();
          };
        const value: unknown = Reflect.get(target, prop);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    expect(await failExhaustedSteps(createAppEventStore(pool), runner)).toBe(0);
    expect(connects).toBe(1);
    expect(await stepRow(step.id)).toEqual({ state: "running", attempt: 1 });
    expect((await typesOf(step.sessionId)).slice(-1)).toEqual(["StepStarted"]);
  });
});

describe("retries", () => {
  it("a retryable failure is retried until the step's attempts are used up: the last failure has no retryAt, and the step fails", async () => {
    const step = await claimedStep(2);
    const failure = { kind: "failed", errorClass: "provider_network_error", message: "reset", retryable: true } as const;
    expect(await recordStepOutcome(db.store, step, failure, runner, { retryBaseMs: 10 })).toBe(true);
    expect(await stepRow(step.id)).toEqual({ state: "pending", attempt: 1 });
    await new Promise((r) => setTimeout(r, 30));
    expect(await claimNextStep(db.store, claimOptions)).toMatchObject({ id: step.id, attempt: 2 });
    expect(await recordStepOutcome(db.store, { ...step, attempt: 2 }, failure, runner, { retryBaseMs: 10 })).toBe(true);
    expect(await stepRow(step.id)).toEqual({ state: "failed", attempt: 2 });
    const failures = (await db.store.readStream(step.sessionId))
      .filter((e): e is RecordedEvent => e.type === "StepFailed")
      .map((e) => (e.data as { retryAt: string | null }).retryAt);
    expect(failures).toEqual([expect.any(String), null]);
  });
});

describe("the fence's refusal", () => {
  it("names the step, what was refused and the attempt, as a conflict; nothing is recorded", async () => {
    const step = await claimedStep();
    const before = await typesOf(step.sessionId);
    const err = await rejection(
      db.store.append(step.sessionId, "any", [{ type: "StepCompleted", data: { stepId: step.id, attempt: 5, output: {} } }], {
        actor: runner,
      }),
    );
    expect(err).toBeInstanceOf(StaleAttemptError);
    expect(err).toMatchObject({
      code: "CONFLICT",
      message: `step ${step.id}: result from attempt 5 rejected: that attempt no longer holds the step`,
      details: { stepId: step.id, attempt: 5 },
    });
    expect(await typesOf(step.sessionId)).toEqual(before);
  });

  it("is not met by an attempt's progress while it holds the step: it lands, and the answer says so", async () => {
    const step = await claimedStep();
    expect(await appendWhileHeld(db.store, step, [waited(step.id)], { actor: runner })).toBe(true);
    expect((await typesOf(step.sessionId)).at(-1)).toBe(waited(step.id).type);
  });

  it("of an attempt's progress after its step ended: nothing lands", async () => {
    const step = await claimedStep();
    await recordStepOutcome(db.store, step, { kind: "completed", output: {} }, runner);
    expect(
      await appendWhileHeld(db.store, step, [waited(step.id)], {
        actor: runner,
      }),
    ).toBe(false);
    expect((await typesOf(step.sessionId)).at(-1)).toBe("StepCompleted");
  });
});

describe("the queue's index (open steps only, docs/scaling.md 'What a step costs: the model')", () => {
  it("a claim changes no indexed column of its step: the row is updated in place (HOT), with no new index entries", async () => {
    const sessionId = await newSession();
    const id = await scheduleStep(db.store, { sessionId, kind: "dispatched", input: {}, maxAttempts: 1 }, { actor: testActor });
    // The connection's counts not yet reported (earlier transactions' too): read before and after.
    const counts = async (tx: Tx) =>
      (
        await tx.query<{ updated: number; hot: number }>(
          `SELECT pg_stat_get_xact_tuples_updated('steps'::regclass)::int AS updated,
                  pg_stat_get_xact_tuples_hot_updated('steps'::regclass)::int AS hot`,
        )
      ).rows[0]!;
    const claim = await withTransaction(db.pool, async (tx) => {
      const before = await counts(tx);
      expect(await claimNextStep(db.store, claimOptions, tx)).toMatchObject({ id, attempt: 1 });
      const after = await counts(tx);
      return { updated: after.updated - before.updated, hot: after.hot - before.hot };
    });
    expect(claim).toEqual({ updated: 1, hot: 1 });
    expect(await stepRow(id)).toEqual({ state: "running", attempt: 1 });
  });

  it("a step is open (finished_at empty, in the index) exactly while it is pending or running, through every outcome", async () => {
    const completed = await claimedStep();
    await recordStepOutcome(db.store, completed, { kind: "completed", output: {} }, runner);
    const retried = await claimedStep(2);
    const failure = { kind: "failed", errorClass: "provider_network_error", message: "reset", retryable: true } as const;
    await recordStepOutcome(db.store, retried, failure, runner, { retryBaseMs: 60_000 });
    const failed = await claimedStep(1);
    await recordStepOutcome(db.store, failed, failure, runner);
    const cancelled = await claimedStep();
    await db.store.append(cancelled.sessionId, "any", [{ type: "StepCancelled", data: { stepId: cancelled.id } }], { actor: testActor });
    const running = await claimedStep();
    const released = await claimedStep();
    await recordStepOutcome(db.store, released, { kind: "released", reason: "shutting down" }, runner);

    const rows = await db.pool.query<{ id: string; state: string; open: boolean }>(
      "SELECT id, state, finished_at IS NULL AS open FROM steps WHERE id = ANY($1::uuid[])",
      [[completed, retried, failed, released, cancelled, running].map((s) => s.id)],
    );
    const byId = new Map(rows.rows.map((r) => [r.id, { state: r.state, open: r.open }]));
    expect(byId.get(completed.id)).toEqual({ state: "completed", open: false });
    expect(byId.get(retried.id)).toEqual({ state: "pending", open: true });
    expect(byId.get(failed.id)).toEqual({ state: "failed", open: false });
    expect(byId.get(released.id)).toEqual({ state: "pending", open: true });
    expect(byId.get(cancelled.id)).toEqual({ state: "cancelled", open: false });
    expect(byId.get(running.id)).toEqual({ state: "running", open: true });
    // Over every step this file made: open is the same as pending or running.
    const mismatched = await db.pool.query("SELECT id FROM steps WHERE (finished_at IS NULL) <> (state IN ('pending', 'running'))");
    expect(mismatched.rows).toEqual([]);
    // A released step is claimed again through the index.
    expect(await claimNextStep(db.store, claimOptions)).toMatchObject({ id: released.id, attempt: 2 });
  });
});
