// The workflow's reactor (server/workflow/reactor.ts) on a real database: a Forge session's
// steps are claimed and their results recorded as a runner records them, and the workflow
// decides in the same transaction — reading an agent's reply and a draft's JSON artifacts from
// their blobs, appending as the workflow with the result's correlation and as its consequence.
// What is not the workflow's business (another kind of step's output, a failure that will be
// retried) decides nothing; a reaction that failed ends the step as given up, with the reason.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "../../server/db/pool";
import { ARTIFACT_PATHS as A } from "../../server/forge/artifacts";
import { FORGE_CRITIQUES, FORGE_FEATURES } from "../../server/demo/forge-content";
import { putBlob } from "../../server/events/blobs";
import type { AgentStepOutput } from "../../server/events/step-contract";
import type { RecordedEvent } from "../../server/events/types";
import { claimNextStep, recordStepOutcome, type OutcomeReactor, type StepOutcome } from "../../server/runner/dispatch";
import {
  BUILTIN_WORKFLOWS,
  decide,
  decideContext,
  foldTask,
  reactToReactionFailure,
  reactToStepOutcome,
  WORKFLOW_ACTOR,
} from "../../server/task-engine";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { BASE_COMMIT, blobRef } from "../helpers/decider";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
// Each test claims the steps of its own session: what an earlier one left is cancelled.
afterEach(async () => {
  const left = await db.pool.query<{ id: string; session_id: string }>(
    "SELECT id, session_id FROM steps WHERE state IN ('pending', 'running')",
  );
  for (const row of left.rows) {
    await db.store.append(row.session_id, "any", [{ type: "StepCancelled", data: { stepId: row.id } }], { actor: testActor });
  }
});

const runner = { kind: "runner", id: "reactor-test" } as const;
const react: OutcomeReactor = async (tx, store, sessionId, recorded) => void (await reactToStepOutcome(tx, store, sessionId, recorded));

/** A Forge session (no gates) whose idea draft is scheduled. */
async function forgeSession(): Promise<string> {
  const sessionId = uniqueId();
  const events = decide(
    foldTask([]),
    {
      type: "StartTask",
      title: "Forge",
      config: {
        workflow: "forge",
        workflowVersion: 1,
        mode: "new",
        prompt: "A command-line word counter.",
        maxIterations: 5,
        gates: [],
        project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [["node", "--test", "**"]] },
        agents: { planner: { id: "planner" }, coder: { id: "coder" }, reviewer: { id: "reviewer" } },
      },
    },
    decideContext(BUILTIN_WORKFLOWS.forge!),
  );
  await db.store.append(sessionId, "no_stream", events, { actor: testActor });
  return sessionId;
}

/** A draft's output, its reply and artifacts stored as the runner stores them. */
async function drafted(files: Record<string, string>): Promise<AgentStepOutput> {
  const raw = await putBlob(db.pool, "drafted");
  const artifacts = [];
  for (const [path, text] of Object.entries(files)) {
    const blob = await putBlob(db.pool, text);
    artifacts.push({ path, hash: blob.blob, blob, size: blob.size });
  }
  return {
    kind: "agent",
    agentId: "coder",
    raw,
    preview: "drafted",
    simulated: true,
    forge: { artifacts, refusedWrites: [], held: [], warnings: [] },
    commit: {
      commit: "b".repeat(40),
      parent: BASE_COMMIT,
      empty: false,
      changedFiles: Object.keys(files).map((path) => ({ path, status: "added" as const })),
      diff: blobRef("diff"),
    },
  };
}

/** An agent's reply, stored as the runner stores it. */
async function replied(text: string): Promise<AgentStepOutput> {
  return { kind: "agent", agentId: "reviewer", raw: await putBlob(db.pool, text), preview: text.slice(0, 500), simulated: true };
}

/** Claims the session's next step and records `outcome` for it, the workflow reacting. */
async function runStep(sessionId: string, outcome: StepOutcome): Promise<RecordedEvent[]> {
  const step = await claimNextStep(db.store, { runnerId: runner.id, leaseMs: 60_000, reclaimBackoffMs: 0 });
  expect(step?.sessionId).toBe(sessionId);
  const before = (await db.store.readStream(sessionId)).length;
  expect(await recordStepOutcome(db.store, step!, outcome, runner, { react })).toBe(true);
  return (await db.store.readStream(sessionId)).slice(before);
}

const fsmOf = async (sessionId: string) => {
  const state = foldTask(await db.store.readStream(sessionId));
  return state.status === "active" ? state.fsm : state.status;
};

describe("the workflow's reaction to a step's result", () => {
  it("decides in the result's transaction, as the workflow, with the result's correlation and as its consequence", async () => {
    const sessionId = await forgeSession();
    const events = await runStep(sessionId, { kind: "completed", output: await drafted({ [A.idea]: "# Idea\n" }) });
    const [completed, ...decided] = events;
    expect(completed!.type).toBe("StepCompleted");
    expect(decided.map((e) => e.type)).toContain("SessionStateChanged");
    for (const e of decided) {
      expect(e.metadata).toMatchObject({
        actor: WORKFLOW_ACTOR,
        correlationId: completed!.metadata.correlationId,
        causationId: completed!.eventId,
      });
    }
    expect(await fsmOf(sessionId)).toBe("prd_draft");
  });

  it("reads a draft's JSON artifacts from their blobs for the stage's rules: seven requirements turn the critic's pass into a revise", async () => {
    const sessionId = await forgeSession();
    await runStep(sessionId, { kind: "completed", output: await drafted({ [A.idea]: "# Idea\n" }) });
    const seven = JSON.stringify({
      requirements: Array.from({ length: 7 }, (_, i) => ({ id: `R${i + 1}`, title: `Requirement ${i + 1}`, description: "x" })),
    });
    await runStep(sessionId, {
      kind: "completed",
      output: await drafted({ [A.prd]: "# PRD\n", [A.requirements]: seven, [A.features]: FORGE_FEATURES }),
    });
    expect(await fsmOf(sessionId)).toBe("prd_critic");
    const critique = await runStep(sessionId, { kind: "completed", output: await replied(FORGE_CRITIQUES.prdPass) });
    expect(critique.find((e) => e.type === "CritiqueRecorded")?.data).toMatchObject({ decision: "revise", modelDecision: "pass" });
    expect(await fsmOf(sessionId)).toBe("prd_draft");
  });

  it("a draft's markdown is not read: its size alone says whether it is empty (a blank line is text)", async () => {
    const sessionId = await forgeSession();
    const events = await runStep(sessionId, { kind: "completed", output: await drafted({ [A.idea]: "\n" }) });
    expect(events.find((e) => e.type === "ArtifactRecorded")?.data).toMatchObject({ path: A.idea, size: 1, problems: [] });
    expect(await fsmOf(sessionId)).toBe("prd_draft");
  });

  it("a final failure is the step giving up (the pipeline waits for a person); a failure that will be retried decides nothing", async () => {
    const sessionId = await forgeSession();
    const retried = await runStep(sessionId, {
      kind: "failed",
      errorClass: "provider_network_error",
      message: "HTTP 503",
      retryable: true,
    });
    expect(retried.map((e) => e.type)).toEqual(["StepFailed"]);
    expect(await fsmOf(sessionId)).toBe("idea_draft");
    await new Promise((r) => setTimeout(r, 1_100)); // the retry's backoff (1 s)
    const gaveUp = await runStep(sessionId, { kind: "failed", errorClass: "schema_invalid", message: "no JSON", retryable: false });
    expect(gaveUp[0]).toMatchObject({ type: "StepFailed", data: { retryAt: null } });
    expect(gaveUp.length).toBeGreaterThan(1);
    expect(await fsmOf(sessionId)).toBe("agent_failed");
  });

  it("another kind of step's output, a result for a step no longer the session's, or a session that is not running a task, decides nothing", async () => {
    const sessionId = await forgeSession();
    const step = await claimNextStep(db.store, { runnerId: runner.id, leaseMs: 60_000, reclaimBackoffMs: 0 });
    const recorded = await db.store.append(
      sessionId,
      "any",
      [{ type: "StepCompleted", data: { stepId: step!.id, attempt: 1, output: { echo: "not the workflow's" } } }],
      { actor: runner },
    );
    expect(await withTransaction(db.pool, (tx) => reactToStepOutcome(tx, db.store, sessionId, recorded.events))).toEqual([]);
    expect(await fsmOf(sessionId)).toBe("idea_draft");

    const plain = uniqueId();
    await db.store.append(plain, "no_stream", [{ type: "SessionCreated", data: { title: "no task", workflow: "test", state: "open" } }], {
      actor: testActor,
    });
    // A workflow step's output for a step that is no longer the session's: nothing to decide, nothing appended.
    const stale = { ...recorded.events[0]!, data: { stepId: uniqueId(), attempt: 1, output: await replied("late") } };
    const length = (await db.store.readStream(sessionId)).length;
    expect(await withTransaction(db.pool, (tx) => reactToStepOutcome(tx, db.store, sessionId, [stale]))).toEqual([]);
    expect((await db.store.readStream(sessionId)).length).toBe(length);

    // A workflow step's output, but the session runs no task.
    const workflowOutput = { ...recorded.events[0]!, data: { stepId: step!.id, attempt: 1, output: await replied("hello") } };
    expect(await withTransaction(db.pool, (tx) => reactToStepOutcome(tx, db.store, plain, [workflowOutput]))).toEqual([]);
  });

  it("when reacting failed (a defect), the step is taken as given up with the reason, as an internal error; nothing is decided twice, nor for a session without a task", async () => {
    const sessionId = await forgeSession();
    const step = await claimNextStep(db.store, { runnerId: runner.id, leaseMs: 60_000, reclaimBackoffMs: 0 });
    const recorded = await db.store.append(
      sessionId,
      "any",
      [{ type: "StepCompleted", data: { stepId: step!.id, attempt: 1, output: await drafted({ [A.idea]: "# Idea\n" }) } }],
      { actor: runner },
    );
    const before = (await db.store.readStream(sessionId)).length;
    await withTransaction(db.pool, (tx) => reactToReactionFailure(tx, db.store, sessionId, recorded.events, "the reaction broke"));
    const after = (await db.store.readStream(sessionId)).slice(before);
    expect(after.length).toBeGreaterThan(0);
    expect(JSON.stringify(after.map((e) => e.data))).toContain("the reaction broke");
    expect(await fsmOf(sessionId)).toBe("agent_failed");
    // Nothing is decided twice, and nothing for a session without a task.
    await withTransaction(db.pool, (tx) => reactToReactionFailure(tx, db.store, sessionId, [], "no outcome"));
    expect((await db.store.readStream(sessionId)).length).toBe(before + after.length);
    const plain = uniqueId();
    await db.store.append(plain, "no_stream", [{ type: "SessionCreated", data: { title: "no task", workflow: "test", state: "open" } }], {
      actor: testActor,
    });
    const outcome = { ...recorded.events[0]!, streamId: plain };
    await withTransaction(db.pool, (tx) => reactToReactionFailure(tx, db.store, plain, [outcome], "no task"));
    expect((await db.store.readStream(plain)).map((e) => e.type)).toEqual(["SessionCreated"]);
  });

  it("as the runner falls back, in the outcome's own transaction: a failure that would be retried is recorded as final and the step gives up", async () => {
    const sessionId = await forgeSession();
    const step = await claimNextStep(db.store, { runnerId: runner.id, leaseMs: 60_000, reclaimBackoffMs: 0 });
    const failing: OutcomeReactor = () => Promise.reject(new Error("the reaction broke"));
    const outcome: StepOutcome = { kind: "failed", errorClass: "provider_network_error", message: "HTTP 503", retryable: true };
    const before = (await db.store.readStream(sessionId)).length;
    expect(await recordStepOutcome(db.store, step!, outcome, runner, { react: failing, onReactionError: reactToReactionFailure })).toBe(
      true,
    );
    const events = (await db.store.readStream(sessionId)).slice(before);
    expect(events[0]).toMatchObject({ type: "StepFailed", data: { errorClass: "provider_network_error", retryAt: null } });
    expect(events.find((e) => e.type === "PersonNeeded")?.data).toMatchObject({
      cause: "agent_failed",
      errorClass: "internal_error",
      message: "the workflow could not react to the step's outcome: the reaction broke",
      resume: "idea_draft",
    });
    expect(await fsmOf(sessionId)).toBe("agent_failed");
    expect((await db.pool.query("SELECT state FROM steps WHERE id = $1", [step!.id])).rows).toEqual([{ state: "failed" }]);
  });
});
