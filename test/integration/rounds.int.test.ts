// One rounds model (server/sessions/rounds.ts) for the replay panel and the export: a real
// review loop run by a real runner (a proposal, a confirm, changes requested once, then
// approved: two rounds) and its rerun, and at every event position the replay's rounds are
// the export's rounds of the same history: the same numbers, starting at the same event,
// for the same reason, holding the same outputs, verdicts and test results.
import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { getBlob } from "../../server/events/blobs";
import { renderSessionExport, type RoundMeta, type SessionSummary } from "../../server/export";
import { replayAt } from "../../server/sessions/replay";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { rerunTask } from "../../server/tasks/fork";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, reviewApprove, reviewChanges, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let parent = "";
let child = "";
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
  const deps = { store: db.store, pool: db.pool };
  const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } };
  const projectId = `rounds-${crypto.randomBytes(3).toString("hex")}`;
  await h.project(projectId, {
    coder: [{ reply: "Proposal: make sum add." }, coderFix, coderFix],
    reviewer: [{ reply: "Fine." }, { reply: reviewChanges() }, { reply: reviewApprove }],
    tester: [{ reply: "One test is enough." }, { reply: testPlan() }],
  });
  parent = (await startTask(deps, { projectId, prompt: "Fix sum()", mode: "proposal" }, testActor)).sessionId;
  await h.waitFor(parent, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
  await confirmTask(deps, { sessionId: parent }, testActor);
  await h.waitFor(parent, "finished", (s) => s.status === "finished");
  child = (await rerunTask(deps, { sessionId: parent }, testActor)).sessionId;
  await h.waitFor(child, "the rerun's roundtable", (s) => s.fsm === "awaiting_operator_confirm");
});

interface RoundView {
  round: number;
  fromVersion: number;
  reason: string;
  outputs: number;
  verdict: string | null;
  tests: { passed: number; failed: number };
}

/** The export's rounds of the history up to `version`, as the replay summarizes rounds. */
async function exportedRounds(sessionId: string, version: number): Promise<{ rounds: RoundView[]; metas: RoundMeta[] }> {
  const events = await db.store.readStream(sessionId, { toVersion: version });
  const files = await renderSessionExport(sessionId, events, async (hash) => (await getBlob(db.pool, hash)).content);
  const summary = JSON.parse(files.get("summary.json")!.toString()) as SessionSummary;
  const metas = summary.rounds.map((r) => JSON.parse(files.get(`${r.dir}/meta.json`)!.toString()) as RoundMeta);
  return {
    rounds: metas.map((m) => ({
      round: m.round,
      fromVersion: m.firstVersion,
      reason: m.reason,
      outputs: m.outputs.length,
      verdict: m.verdicts.at(-1) ?? null,
      tests: m.tests,
    })),
    metas,
  };
}

async function replayedRounds(sessionId: string, version: number) {
  const view = await replayAt({ store: db.store, pool: db.pool }, { sessionId, version });
  return {
    view,
    rounds: view.rounds.map((r): RoundView => ({
      round: r.iteration,
      fromVersion: r.fromVersion,
      reason: r.reason,
      outputs: r.outputs,
      verdict: r.verdict,
      tests: r.tests,
    })),
  };
}

describe("the replay panel and the export agree on a session's rounds", () => {
  it("at every event position of a two-round review loop", async () => {
    const head = (await db.store.readStream(parent)).length;
    for (let version = 1; version <= head; version++) {
      const exported = await exportedRounds(parent, version);
      const { view, rounds } = await replayedRounds(parent, version);
      expect(rounds, `rounds at version ${version}`).toEqual(exported.rounds);
      // The round in progress holds exactly the outputs the export files under it.
      const current = exported.metas.find((m) => m.round === view.round?.iteration)!;
      expect(view.round?.entries.filter((e) => e.kind === "output").map((e) => e.version)).toEqual(current.outputs.map((o) => o.version));
      expect(view.round?.iteration).toBe(exported.rounds.at(-1)!.round);
    }
    const final = await replayedRounds(parent, head);
    expect(final.rounds.map((r) => [r.round, r.reason, r.verdict])).toEqual([
      [1, "initial", "changes_requested"],
      [2, "changes_requested", "approve"],
    ]);
  });

  it("at every event position of its rerun, which forks inside round 1 and restarts the loop there", async () => {
    const events = await db.store.readStream(child);
    for (let version = 1; version <= events.length; version++) {
      const exported = await exportedRounds(child, version);
      const { rounds } = await replayedRounds(child, version);
      expect(rounds, `rerun rounds at version ${version}`).toEqual(exported.rounds);
    }
    const forkVersion = events.find((e) => e.type === "SessionForked")!.version;
    expect((await replayedRounds(child, forkVersion - 1)).rounds.map((r) => r.reason)).toEqual(["initial"]);
    expect((await replayedRounds(child, events.length)).rounds.map((r) => [r.round, r.fromVersion, r.reason])).toEqual([[1, 1, "rerun"]]);
  });
});
