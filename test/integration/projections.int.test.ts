import { beforeAll, describe, expect, it } from "vitest";
import { claimNextStep, recordStepOutcome, scheduleStep } from "../../server/runner/dispatch";
import { rebuildProjections, snapshotProjections } from "../../server/events/rebuild";
import { readTimeline } from "../../server/events/timeline";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

const runner = { kind: "runner", id: "r1" } as const;

/** A varied history: sessions, state changes, forks, and steps that complete, fail, retry and get released. */
async function buildHistory(): Promise<{ parent: string; child: string }> {
  const parent = uniqueId();
  await db.store.append(
    parent,
    "no_stream",
    [{ type: "SessionCreated", data: { title: "Rebuild me", workflow: "review_loop", state: "draft" } }],
    { actor: testActor },
  );
  await db.store.append(
    parent,
    1,
    [
      { type: "OperatorMessagePosted", data: { text: "please look at the failing test" } },
      { type: "SessionStateChanged", data: { from: "draft", to: "running" } },
    ],
    { actor: testActor },
  );
  const steps = [];
  for (let i = 0; i < 4; i++)
    steps.push(await scheduleStep(db.store, { sessionId: parent, kind: "echo", input: { message: `m${i}` } }, { actor: testActor }));
  const claim = () => claimNextStep(db.store, { runnerId: runner.id, leaseMs: 60_000, reclaimBackoffMs: 1000 });
  for (let i = 0; i < 4; i++) {
    const step = (await claim())!;
    // An agent's result with its usage: a row of agent_usage.
    const output = { ok: true, agentId: "a1", usage: { inputTokens: 100, outputTokens: 10, model: "m-test" } };
    if (i === 0) await recordStepOutcome(db.store, step, { kind: "completed", output }, runner);
    if (i === 1)
      await recordStepOutcome(db.store, step, { kind: "failed", errorClass: "timeout", message: "slow", retryable: true }, runner);
    if (i === 2)
      await recordStepOutcome(
        db.store,
        step,
        { kind: "failed", errorClass: "schema_invalid", message: "bad json", retryable: false },
        runner,
      );
    if (i === 3) await recordStepOutcome(db.store, step, { kind: "released", reason: "shutdown" }, runner);
  }
  // One step left running (claimed, never finished).
  await scheduleStep(db.store, { sessionId: parent, kind: "echo", input: { message: "left running" } }, { actor: testActor });
  expect(await claim()).not.toBeNull();

  const child = uniqueId();
  await db.store.fork({
    parentId: parent,
    atVersion: 3,
    childId: child,
    event: {
      type: "SessionForked",
      data: { parentId: parent, atVersion: 3, reason: "rerun", title: "Rebuild me (rerun)", workflow: "review_loop", state: "running" },
    },
    metadata: { actor: testActor },
  });
  await db.store.append(child, 4, [{ type: "SessionStateChanged", data: { from: "running", to: "approved" } }], { actor: testActor });
  return { parent, child };
}

describe("projections", () => {
  it("rebuilding every projection from the log gives exactly the live tables", async () => {
    await buildHistory();
    await buildHistory();
    const live = await snapshotProjections(db.pool, db.store);
    expect(live.sessions!.length).toBe(4);
    expect(live.steps!.length).toBe(10);
    expect(live.agent_usage!.length).toBe(2);

    const result = await rebuildProjections(db.store, 7); // small batches cross stream boundaries
    const rebuilt = await snapshotProjections(db.pool, db.store);
    expect(result.tables).toEqual(["sessions", "steps", "agent_usage"]);
    expect(result.events).toBe(38); // 19 events per history
    expect(rebuilt).toEqual(live);
  });

  it("a damaged read model is repaired by the rebuild, and the equality check notices the damage", async () => {
    const { parent } = await buildHistory();
    const before = await snapshotProjections(db.pool, db.store);
    await db.pool.query("UPDATE sessions SET state = 'corrupted' WHERE id = $1", [parent]);
    await db.pool.query("DELETE FROM steps WHERE session_id = $1 AND state = 'completed'", [parent]);
    await db.pool.query("UPDATE agent_usage SET input_tokens = 0 WHERE session_id = $1", [parent]);
    expect(await snapshotProjections(db.pool, db.store)).not.toEqual(before);
    await rebuildProjections(db.store);
    expect(await snapshotProjections(db.pool, db.store)).toEqual(before);
    const row = await db.pool.query("SELECT state FROM sessions WHERE id = $1", [parent]);
    expect(row.rows[0].state).toBe("running");
  });

  it("the sessions read model and the timeline say what happened, without payloads", async () => {
    const { parent, child } = await buildHistory();
    const sessions = await db.pool.query(
      "SELECT s.id, s.state, s.parent_id, s.fork_version, st.version FROM sessions s JOIN streams st USING (id) WHERE s.id = ANY($1) ORDER BY fork_version NULLS FIRST",
      [[parent, child]],
    );
    expect(sessions.rows).toEqual([
      { id: parent, state: "running", parent_id: null, fork_version: null, version: (await db.store.readStream(parent)).length },
      { id: child, state: "approved", parent_id: parent, fork_version: 3, version: 5 },
    ]);
    const timeline = await readTimeline(db.pool, child);
    expect(timeline.map((t) => [t.version, t.type, t.summary])).toEqual([
      [1, "SessionCreated", 'Session "Rebuild me" created (review_loop)'],
      [2, "OperatorMessagePosted", "Message: please look at the failing test"],
      [3, "SessionStateChanged", "State draft → running"],
      [4, "SessionForked", `Forked from ${parent} at event 3 (rerun)`],
      [5, "SessionStateChanged", "State running → approved"],
    ]);
    expect(timeline[0]!.actor).toBe("user:tester");
  });
});
