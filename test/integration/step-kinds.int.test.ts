// The step kind registry's reactions on a real runner (server/runner/step-kinds.ts): a kind's
// reaction gets its step's input and output as its schemas parsed them, in the transaction that
// records the outcome, and only once the outcome is final; when it fails, the kind's fallback
// gets the message (and, when the input was the trouble, no input); a kind without an entry
// gets no reaction at all. test/unit/step-kinds.unit.test.ts has the composition and execution.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appStepKinds } from "../../server/app-runner";
import { createAppEventStore } from "../../server/app-store";
import { CALL_STEP, TIMER_STEP } from "../../server/conversations/record";
import { DELIVER_STEP } from "../../server/delivery/steps";
import { PRUNE_STEP } from "../../server/pruning/steps";
import { COMMIT_STATUS_STEP, ISSUE_COMMENT_STEP } from "../../server/tracker/step-kinds";
import { createPool, type Tx } from "../../server/db/pool";
import type { EventStore } from "../../server/events/store";
import { scheduleStep } from "../../server/runner/dispatch";
import { StepExecutionError } from "../../server/runner/executors";
import { Runner } from "../../server/runner/runner";
import { defineStepKind, stepKindRegistry } from "../../server/runner/step-kinds";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
let runner: Runner;
const STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-step-kinds-"));

/** What the entry's reaction and fallback were given, per step. */
interface Seen {
  sessionId: string;
  step: { id: string; kind: string; input: unknown };
  outcome: { type: string; data: unknown };
  message?: string;
}
const executed: unknown[] = [];
const reactions: Seen[] = [];
const fallbacks: Seen[] = [];

/** A mark in the session's stream, appended in the reaction's transaction. */
async function mark(tx: Tx, store: EventStore, sessionId: string, to: string): Promise<void> {
  await store.appendInTx(tx, sessionId, "any", [{ type: "SessionStateChanged", data: { from: "open", to } }], { actor: testActor });
}

const paw = defineStepKind({
  kind: "paw",
  input: z.object({ cat: z.string(), paws: z.number().int().default(4) }),
  output: z.object({ prints: z.number().int(), by: z.string().default("a cat") }),
  async execute(_step, input) {
    executed.push(input);
    if (input.cat === "grumpy") throw new StepExecutionError("tool_error", "hiss", true);
    return { prints: input.paws, by: input.cat };
  },
  async react(tx, { store, sessionId, step, outcome }) {
    reactions.push({ sessionId, step, outcome: { type: outcome.type, data: outcome.data } });
    if (step.input.cat === "clumsy") throw new Error("tripped over the bowl");
    await mark(tx, store, sessionId, outcome.type === "StepCompleted" ? `${outcome.data.output.prints} prints` : "gave up");
  },
  async onReactFailure(tx, { store, sessionId, step, outcome }, message) {
    fallbacks.push({ sessionId, step, outcome: { type: outcome.type, data: outcome.data }, message });
    await mark(tx, store, sessionId, "fallback");
  },
});

beforeAll(async () => {
  db = await createTestDatabase();
  const pool = createPool(db.url, 6);
  const registry = stepKindRegistry([paw]);
  runner = new Runner(createAppEventStore(pool), pool, db.url, {
    id: "kinds",
    executors: registry.executors,
    react: registry.react,
    onReactionError: registry.onReactionError,
    leaseMs: 5_000,
    pollMs: 100,
    retryBaseMs: 50,
    stateDir: STATE_DIR,
  });
  await runner.start();
});
afterAll(async () => {
  await runner.stop();
});

async function schedule(kind: string, input: unknown, maxAttempts = 3): Promise<{ sessionId: string; stepId: string }> {
  const sessionId = uniqueId();
  await db.store.append(sessionId, "no_stream", [{ type: "SessionCreated", data: { title: "kinds", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  const stepId = await scheduleStep(db.store, { sessionId, kind, input, maxAttempts }, { actor: testActor });
  return { sessionId, stepId };
}

/** The step's ended: its stream once its row is completed or failed. */
async function ended(sessionId: string, stepId: string): Promise<Array<{ type: string; data: unknown }>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const row = await db.pool.query<{ state: string }>("SELECT state FROM steps WHERE id = $1", [stepId]);
    if (["completed", "failed"].includes(row.rows[0]?.state ?? "")) break;
    if (Date.now() > deadline) throw new Error(`step ${stepId} did not end`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return (await db.store.readStream(sessionId)).map((e) => ({ type: e.type, data: e.data }));
}

const of = (seen: Seen[], stepId: string) => seen.filter((s) => s.step.id === stepId);

describe("a kind's reaction", () => {
  it("gets its step's id, kind and input, and the outcome with its output, as their schemas parsed them, in the outcome's transaction", async () => {
    const { sessionId, stepId } = await schedule("paw", { cat: "tom" });
    const events = await ended(sessionId, stepId);
    expect(executed).toContainEqual({ cat: "tom", paws: 4 });
    expect(of(reactions, stepId)).toEqual([
      {
        sessionId,
        step: { id: stepId, kind: "paw", input: { cat: "tom", paws: 4 } },
        outcome: { type: "StepCompleted", data: { stepId, attempt: 1, output: { prints: 4, by: "tom" } } },
      },
    ]);
    // Committed with the outcome, right behind it.
    expect(events.slice(-2)).toEqual([
      { type: "StepCompleted", data: { stepId, attempt: 1, output: { prints: 4, by: "tom" } } },
      { type: "SessionStateChanged", data: { from: "open", to: "4 prints" } },
    ]);
    expect(of(fallbacks, stepId)).toEqual([]);
  });

  it("is not called for a failure that will be retried, only for the one that ends the step", async () => {
    const { sessionId, stepId } = await schedule("paw", { cat: "grumpy", paws: 3 }, 2);
    const events = await ended(sessionId, stepId);
    const failures = events.filter((e) => e.type === "StepFailed").map((e) => e.data);
    expect(failures).toEqual([
      { stepId, attempt: 1, errorClass: "tool_error", message: "hiss", retryAt: expect.any(String) },
      { stepId, attempt: 2, errorClass: "tool_error", message: "hiss", retryAt: null },
    ]);
    expect(of(reactions, stepId)).toEqual([
      {
        sessionId,
        step: { id: stepId, kind: "paw", input: { cat: "grumpy", paws: 3 } },
        outcome: { type: "StepFailed", data: failures[1] },
      },
    ]);
    expect(events.at(-1)).toEqual({ type: "SessionStateChanged", data: { from: "open", to: "gave up" } });
  });

  it("that fails hands over to the kind's fallback, with the message, the outcome and the parsed input", async () => {
    const { sessionId, stepId } = await schedule("paw", { cat: "clumsy" });
    const events = await ended(sessionId, stepId);
    expect(of(reactions, stepId)).toHaveLength(1);
    expect(of(fallbacks, stepId)).toEqual([
      {
        sessionId,
        step: { id: stepId, kind: "paw", input: { cat: "clumsy", paws: 4 } },
        outcome: { type: "StepCompleted", data: { stepId, attempt: 1, output: { prints: 4, by: "clumsy" } } },
        message: "the workflow could not react to the step's outcome: tripped over the bowl",
      },
    ]);
    expect(events.slice(-2).map((e) => e.type)).toEqual(["StepCompleted", "SessionStateChanged"]);
    expect(events.at(-1)?.data).toEqual({ from: "open", to: "fallback" });
  });
});

describe("a step whose input does not parse", () => {
  it("fails as internal_error, not retried, without running the executor; its reaction cannot read it, so the fallback gets no input", async () => {
    const before = executed.length;
    const { sessionId, stepId } = await schedule("paw", { paws: "four" }, 3);
    const events = await ended(sessionId, stepId);
    const issues = "cat: Invalid input: expected string, received undefined; paws: Invalid input: expected number, received string";
    expect(events.filter((e) => e.type === "StepFailed").map((e) => e.data)).toEqual([
      { stepId, attempt: 1, errorClass: "internal_error", message: `step ${stepId} (paw) has no valid input: ${issues}`, retryAt: null },
    ]);
    expect(executed).toHaveLength(before);
    expect(of(reactions, stepId)).toEqual([]);
    expect(of(fallbacks, stepId)).toEqual([
      {
        sessionId,
        step: { id: stepId, kind: "paw", input: null },
        outcome: { type: "StepFailed", data: expect.objectContaining({ stepId, errorClass: "internal_error", retryAt: null }) },
        message: `the workflow could not react to the step's outcome: step ${stepId} (paw) has no valid input: ${issues}`,
      },
    ]);
  });
});

describe("a kind without an entry", () => {
  it("has no executor (the step fails as internal_error) and no reaction: nothing follows its outcome", async () => {
    const { sessionId, stepId } = await schedule("unheardOf", { cat: "tom" });
    const events = await ended(sessionId, stepId);
    expect(events.at(-1)).toEqual({
      type: "StepFailed",
      data: {
        stepId,
        attempt: 1,
        errorClass: "internal_error",
        message: 'no executor for step kind "unheardOf" on runner kinds',
        retryAt: null,
      },
    });
    expect(of(reactions, stepId)).toEqual([]);
    expect(of(fallbacks, stepId)).toEqual([]);
  });
});

describe("the application's step kinds", () => {
  it("are registered under the names steps are recorded with (a renamed kind would leave queued steps without an executor)", () => {
    const kinds = stepKindRegistry(
      appStepKinds({ pool: db.pool, store: db.store, workspacesRoot: os.tmpdir(), webhook: { webhookFor: async () => null } }),
    ).kinds;
    expect([...kinds].sort()).toEqual(
      [
        "agent",
        "bake_off_judge",
        "commands",
        CALL_STEP,
        TIMER_STEP,
        DELIVER_STEP,
        PRUNE_STEP,
        ISSUE_COMMENT_STEP,
        COMMIT_STATUS_STEP,
        "echo",
        "webhook",
      ].sort(),
    );
  });
});
