// The project's agent record and the bake-off comparison on a seeded history
// (test/helpers/bake-off-history.ts): sessions with known outcomes, iterations, tokens and
// wall times for two coder agents on two models, an older session outside the window, and a
// bake-off of three contenders with a judge's recommendation and a choice. The record's
// figures are the ones the history was written with; the time window keeps out what it
// should; the same events give the same record; the comparison's figures are the events'.
import { beforeAll, describe, expect, it } from "vitest";
import { agentRecord, type AgentRecordRow } from "../../server/agent-record/record";
import { bakeOffComparison } from "../../server/agent-record/comparison";
import type { PricingSettings } from "../../server/config/schemas";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { OTHER_MODEL, seedBakeOff, seedChosen, seedSession, type SeedSession, type SeededBakeOff } from "../helpers/bake-off-history";
import { createTestDatabase, rejection, uniqueId, type TestDatabase } from "../helpers/db";
import { createHarness } from "../helpers/tasks";

const pricing = {
  currency: "USD",
  models: {
    "claude-m": { inputPerMillion: 3, outputPerMillion: 15 },
    "gpt-m": { inputPerMillion: 2, outputPerMillion: 8 },
    [OTHER_MODEL]: { inputPerMillion: 1, outputPerMillion: 1 },
  },
} as PricingSettings;

const CLAUDE = { id: "claude-coder", model: "claude-m" };
const CODEX = { id: "codex-coder", model: "gpt-m" };
const T0 = new Date("2026-10-01T00:00:00Z");
const at = (hours: number) => new Date(T0.getTime() + hours * 3_600_000);

/** A session's cost: its coder's calls (one a round) plus every other call (a review a round, a test plan per approving round) at 1000 in / 100 out. */
function costOf(coder: { model: string }, tokens: { input: number; output: number }, rounds: SeedSession["rounds"]): number {
  const price = pricing.models[coder.model]!;
  const other = pricing.models[OTHER_MODEL]!;
  const otherCalls = rounds.length + rounds.filter((r) => r.blocking === 0).length;
  return (
    (rounds.length * (tokens.input * price.inputPerMillion + tokens.output * price.outputPerMillion) +
      otherCalls * (1000 * other.inputPerMillion + 100 * other.outputPerMillion)) /
    1e6
  );
}

let db: TestDatabase;
let api: ApiFixture;
let projectId: string;
let bakeOff: SeededBakeOff;
const costs: Record<string, number> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  projectId = uniqueId("record");
  await createHarness(db).project(projectId, { coder: [{ reply: "-" }], reviewer: [{ reply: "-" }], tester: [{ reply: "-" }] });
  const seed = async (name: string, s: Omit<SeedSession, "projectId">) => {
    costs[name] = costOf(s.coder, s.coderTokens, s.rounds);
    return seedSession(db.store, db.pool, { projectId, ...s });
  };
  const big = { input: 10_000, output: 1_000 };
  // claude-coder: approved in 1 (60 s), approved in 2 (180 s), capped at 2 iterations (300 s).
  await seed("A1", { coder: CLAUDE, rounds: [{ blocking: 0 }], coderTokens: big, startAt: at(1), wallMs: 60_000 });
  await seed("A2", {
    coder: CLAUDE,
    rounds: [{ blocking: 2 }, { blocking: 0 }],
    coderTokens: { input: 20_000, output: 2_000 },
    startAt: at(2),
    wallMs: 180_000,
  });
  await seed("A3", {
    coder: CLAUDE,
    rounds: [{ blocking: 1 }, { blocking: 1 }],
    maxIterations: 2,
    coderTokens: big,
    startAt: at(3),
    wallMs: 300_000,
  });
  // codex-coder: approved in 2 after a failed test (120 s), and one still running.
  const small = { input: 5_000, output: 500 };
  await seed("B1", {
    coder: CODEX,
    rounds: [
      { blocking: 0, tests: [false] },
      { blocking: 0, tests: [true, true] },
    ],
    coderTokens: small,
    startAt: at(4),
    wallMs: 120_000,
  });
  await seed("B2", { coder: CODEX, rounds: [{ blocking: 1 }], running: true, coderTokens: small, startAt: at(5), wallMs: 10_000 });
  // Sixty days before: outside a window that starts a day before T0.
  await seed("OLD", {
    coder: CLAUDE,
    rounds: [{ blocking: 0 }],
    coderTokens: big,
    startAt: new Date(T0.getTime() - 60 * 86_400_000),
    wallMs: 1_000,
  });
  // A bake-off a day later: c1 claude approved in 1 (90 s), c2 codex approved in 1 (30 s, chosen), c3 codex capped at 1 (45 s).
  costs.c1 = costOf(CLAUDE, big, [{ blocking: 0 }]);
  costs.c2 = costOf(CODEX, { input: 4_000, output: 400 }, [{ blocking: 0 }]);
  bakeOff = await seedBakeOff(
    db.store,
    db.pool,
    projectId,
    [
      { id: "c1", coder: CLAUDE, rounds: [{ blocking: 0 }], coderTokens: big, startAt: at(25), wallMs: 90_000 },
      {
        id: "c2",
        coder: CODEX,
        rounds: [{ blocking: 0, tests: [true, true, true] }],
        coderTokens: { input: 4_000, output: 400 },
        startAt: at(25),
        wallMs: 30_000,
      },
      { id: "c3", coder: CODEX, rounds: [{ blocking: 3 }], maxIterations: 1, coderTokens: small, startAt: at(25), wallMs: 45_000 },
    ],
    { startAt: at(25), chosen: "c2", judged: { winner: "c2", ranking: ["c2", "c1", "c3"], reasons: ["smallest diff", "all tests pass"] } },
  );
}, 60_000);

const row = (agents: AgentRecordRow[], agentId: string, model: string) => agents.find((a) => a.agentId === agentId && a.model === model);
const since = new Date(T0.getTime() - 86_400_000).toISOString();

describe("the agent record of a seeded history", () => {
  it("per agent and model: tasks, approval rate, median iterations, wall time and cost per approved task, bake-offs and choices", async () => {
    const record = await agentRecord(db, { projectId, since }, pricing);
    expect(record.agents.map((a) => [a.agentId, a.model, a.tasks])).toEqual([
      ["claude-coder", "claude-m", 4],
      ["codex-coder", "gpt-m", 4],
    ]);
    // The bake-off's parent is not a task of its own: its contenders are.
    expect(record.sessions).toBe(9);
    expect(record.bakeOffs).toBe(1);
    const claude = row(record.agents, "claude-coder", "claude-m")!;
    expect(claude).toMatchObject({
      finished: 4,
      approved: 3,
      approvalRate: 0.75,
      medianIterationsToApproval: 1, // 1, 2, 1
      medianWallMs: (90_000 + 180_000) / 2, // 60, 90, 180, 300 s
      bakeOffs: 1,
      chosen: 0,
      unpriced: [],
    });
    expect(claude.medianCostPerApprovedTask).toBeCloseTo(costs.A1!, 9); // A1 = c1 < A2
    expect(costs.A1).toBeCloseTo(costs.c1!, 9);
    expect(costs.A2).toBeGreaterThan(costs.A1!);
    const codex = row(record.agents, "codex-coder", "gpt-m")!;
    expect(codex).toMatchObject({
      finished: 3, // B2 still runs
      approved: 2,
      approvalRate: 2 / 3,
      medianIterationsToApproval: 1.5, // 2, 1
      medianWallMs: 45_000, // 30, 45, 120 s
      bakeOffs: 2,
      chosen: 1,
    });
    expect(codex.medianCostPerApprovedTask).toBeCloseTo((costs.B1! + costs.c2!) / 2, 9);
  });

  it("the time window: without `since` the older session counts; `until` before the bake-off leaves it out", async () => {
    const all = await agentRecord(db, { projectId }, pricing);
    expect(row(all.agents, "claude-coder", "claude-m")).toMatchObject({ tasks: 5, approved: 4 });
    const before = await agentRecord(db, { projectId, since, until: at(12).toISOString() }, pricing);
    expect(before.bakeOffs).toBe(0);
    expect(row(before.agents, "claude-coder", "claude-m")).toMatchObject({ tasks: 3, approved: 2, bakeOffs: 0 });
    expect(row(before.agents, "codex-coder", "gpt-m")).toMatchObject({ tasks: 2, approved: 1, bakeOffs: 0, chosen: 0 });
    const onlyBakeOff = await agentRecord(db, { projectId, since: at(24).toISOString().slice(0, 10) }, pricing);
    expect(onlyBakeOff.agents.map((a) => [a.agentId, a.tasks, a.bakeOffs, a.chosen])).toEqual([
      ["codex-coder", 2, 2, 1],
      ["claude-coder", 1, 1, 0],
    ]);
  });

  it("is a projection: the same events give the same record, as JSON", async () => {
    const a = await agentRecord(db, { projectId, since }, pricing);
    const b = await agentRecord(db, { projectId, since }, pricing);
    expect(JSON.parse(JSON.stringify(b))).toEqual(a);
    expect(a.format).toEqual({ name: "catcafe-agent-record", version: 1 });
  });

  it("over tRPC for a viewer (agentRecord.stats); bad input is refused with what is wrong; an unknown project is NOT_FOUND", async () => {
    const viewer = api.caller(await api.user("viewer"));
    const stats = await viewer.agentRecord.stats({ projectId, since });
    expect(stats.agents.map((a) => [a.agentId, a.tasks, a.bakeOffs, a.chosen])).toEqual([
      ["claude-coder", 4, 1, 0],
      ["codex-coder", 4, 2, 1],
    ]);
    await expect(viewer.agentRecord.stats({ projectId, since: "last tuesday" })).rejects.toThrow(/ISO 8601 instant/);
    await expect(viewer.agentRecord.stats({ projectId, since: at(5).toISOString(), until: at(1).toISOString() })).rejects.toThrow(
      /`since` must be before `until`/,
    );
    expect((await rejection(agentRecord(db, { projectId: "no-such-project" }, pricing))).code).toBe("NOT_FOUND");
  });
});

describe("the bake-off comparison", () => {
  it("each contender's figures are its events'; the judge's recommendation and the choice are marked; every pair is offered", async () => {
    const comparison = await bakeOffComparison(db, bakeOff.parentId, pricing);
    expect(comparison.parentSessionId).toBe(bakeOff.parentId);
    expect(
      comparison.contenders.map((c) => [c.id, c.coder, c.model, c.figures.outcome, c.figures.ownOutcome, c.chosen, c.recommended, c.rank]),
    ).toEqual([
      ["c1", "claude-coder", "claude-m", "not_chosen", "approved", false, false, 2],
      ["c2", "codex-coder", "gpt-m", "approved", "approved", true, true, 1],
      ["c3", "codex-coder", "gpt-m", "not_chosen", "max_iterations_reached", false, false, 3],
    ]);
    // Chosen: nothing more to pick.
    expect(comparison.contenders.map((c) => c.pickable)).toEqual([false, false, false]);
    const [c1, c2, c3] = comparison.contenders;
    expect(c1!.figures).toMatchObject({ approved: true, iterationsToApproval: 1, tests: { passed: 1, failed: 0 } });
    expect(c1!.figures.wall.ms).toBe(90_000);
    expect(c2!.figures).toMatchObject({ approved: true, iterationsToApproval: 1, tests: { passed: 3, failed: 0 } });
    expect(c2!.figures.rounds).toEqual([
      { iteration: 1, decision: "approve", blockingFindings: 0, findings: 0, tests: { passed: 3, failed: 0 } },
    ]);
    expect(c2!.figures.usage.cost).toBeCloseTo(costs.c2!, 9);
    // Only the contender's own calls: the proposal's three calls are the parent's.
    expect(c2!.figures.usage.calls).toBe(3);
    expect(c3!.figures).toMatchObject({ approved: false, iterationsToApproval: null, tests: null });
    expect(c3!.figures.rounds).toEqual([{ iteration: 1, decision: "changes_requested", blockingFindings: 3, findings: 3, tests: null }]);
    expect(c3!.figures.wall.ms).toBe(45_000);
    // The seeded base commit is no commit of a repository: git cannot tell the lines, the files touched are from the events.
    expect(c3!.figures.diff).toBeNull();
    expect(c3!.figures.filesTouched).toEqual(["src/file0.js"]);
    expect(comparison.judged?.recommendation.winner).toBe("c2");
    expect(comparison.chosen).toMatchObject({ contenderId: "c2", sessionId: c2!.sessionId, reason: "smallest diff", by: "user:seeder" });
    expect(comparison.pairs).toEqual([
      { a: c1!.sessionId, b: c2!.sessionId },
      { a: c1!.sessionId, b: c3!.sessionId },
      { a: c2!.sessionId, b: c3!.sessionId },
    ]);
    expect(comparison.running).toBe(false);
  });

  it("a contender still running at the pick is stopped: not_chosen with no outcome of its own, in neither finished nor approved", async () => {
    const other = uniqueId("stopped");
    await createHarness(db).project(other, { coder: [{ reply: "-" }], reviewer: [{ reply: "-" }], tester: [{ reply: "-" }] });
    const seeded = await seedBakeOff(
      db.store,
      db.pool,
      other,
      [
        {
          id: "c1",
          coder: CLAUDE,
          rounds: [{ blocking: 0 }],
          coderTokens: { input: 10_000, output: 1_000 },
          startAt: at(30),
          wallMs: 60_000,
        },
        {
          id: "c2",
          coder: CODEX,
          rounds: [{ blocking: 1 }],
          running: true,
          coderTokens: { input: 5_000, output: 500 },
          startAt: at(30),
          wallMs: 30_000,
        },
      ],
      { startAt: at(30) },
    );
    const before = await bakeOffComparison(db, seeded.parentId, pricing);
    // Only the approved one may win; the judge waits for c2.
    expect(before.contenders.map((c) => [c.id, c.figures.ownOutcome, c.pickable])).toEqual([
      ["c1", "approved", true],
      ["c2", null, false],
    ]);
    expect(before.running).toBe(true);
    await seedChosen(db.store, seeded, "c1", null);
    const events = await db.store.readStream(seeded.contenders[1]!.sessionId);
    expect(events.filter((e) => e.type === "BakeOffNotChosen").map((e) => e.data)).toEqual([
      { parentSessionId: seeded.parentId, contenderId: "c2", winner: "c1", endedAs: null },
    ]);
    const after = await bakeOffComparison(db, seeded.parentId, pricing);
    expect(after.contenders.map((c) => [c.id, c.figures.outcome, c.figures.ownOutcome, c.pickable])).toEqual([
      ["c1", "approved", "approved", false],
      ["c2", "not_chosen", null, false],
    ]);
    const record = await agentRecord(db, { projectId: other }, pricing);
    expect(row(record.agents, "codex-coder", "gpt-m")).toMatchObject({
      tasks: 1,
      finished: 0,
      approved: 0,
      approvalRate: null,
      bakeOffs: 1,
    });
    expect(row(record.agents, "claude-coder", "claude-m")).toMatchObject({ tasks: 1, finished: 1, approved: 1, bakeOffs: 1, chosen: 1 });
  });

  it("is reached from a contender too, and through tRPC; a session that is no bake-off is NOT_FOUND with why", async () => {
    const viewer = api.caller(await api.user("viewer"));
    const fromContender = await viewer.bakeOffView.comparison({ sessionId: bakeOff.contenders[2]!.sessionId });
    expect(fromContender.parentSessionId).toBe(bakeOff.parentId);
    expect(await viewer.bakeOffView.of({ sessionId: bakeOff.contenders[0]!.sessionId })).toEqual({
      parentSessionId: bakeOff.parentId,
      contenderId: "c1",
      contenders: 3,
    });
    const { rows } = await db.pool.query<{ id: string }>(
      "SELECT id FROM sessions WHERE project_id = $1 AND parent_id IS NULL AND id <> $2 LIMIT 1",
      [projectId, bakeOff.parentId],
    );
    const other = rows[0]!.id;
    expect(await viewer.bakeOffView.of({ sessionId: other })).toBeNull();
    const err = await rejection(bakeOffComparison(db, other, pricing));
    expect(err.code).toBe("NOT_FOUND");
    expect(err.message).toMatch(/is not part of a bake-off/);
    expect((await rejection(bakeOffComparison(db, "s-nope", pricing))).message).toMatch(/no session s-nope/);
  });
});
