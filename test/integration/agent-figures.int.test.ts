// A real session's figures (server/agent-record/figures.ts) against its events and the
// repository: a review-loop task run by the real runner — the reviewer asks for changes once,
// the coder fixes sum(), the tests pass — whose rounds, tests, files, lines (git), wall time
// and calls are read from the events and git here, independently of the fold, and compared.
import { beforeAll, describe, expect, it } from "vitest";
import { loadSessionFigures } from "../../server/agent-record/figures";
import type { PricingSettings } from "../../server/config/schemas";
import { startTask } from "../../server/tasks/commands";
import { sessionUsage } from "../../server/usage/totals";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, reviewChanges, testPlan, type Harness } from "../helpers/tasks";

const pricing = { currency: "USD", models: {} } as PricingSettings;

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
});

describe("a real session's figures", () => {
  it("match its events and git: two rounds (one blocking finding, then approved), the test run, the file and its lines, wall time and calls", async () => {
    const projectId = await h.project("figures", {
      coder: [
        { reply: "First try.", files: { "src/sum.js": "function sum(a, b) {\n  return b - a;\n}\nmodule.exports = { sum };\n" } },
        { reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } },
      ],
      reviewer: [{ reply: reviewChanges() }, { reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(
      { store: db.store, pool: db.pool },
      { projectId, prompt: "Fix sum()", mode: "implementation" },
      testActor,
    );
    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");

    const events = await db.store.readStream(sessionId);
    const figures = await loadSessionFigures(db, sessionId, { pricing, withDiff: true });

    const verdicts = ofType<{ findings: Array<{ severity: string }>; decision: string }>(events, "ReviewVerdictRecorded");
    expect(figures.rounds.map((r) => [r.iteration, r.decision, r.blockingFindings])).toEqual(
      verdicts.map((v, i) => [i + 1, v.decision, v.findings.filter((f) => f.severity === "blocking").length]),
    );
    expect(figures.rounds.map((r) => r.blockingFindings)).toEqual([1, 0]);
    const tests = ofType<{ passed: boolean }>(events, "TestCommandRecorded");
    expect(figures.tests).toEqual({ passed: tests.filter((t) => t.passed).length, failed: tests.filter((t) => !t.passed).length });
    expect(figures.tests).toEqual({ passed: 1, failed: 0 });
    expect(figures).toMatchObject({ status: "finished", outcome: "approved", approved: true, iterationsToApproval: 2 });

    const commits = ofType<{ commit: string; changedFiles: Array<{ path: string }> }>(events, "WorkspaceCommitted");
    expect(figures.filesTouched).toEqual([...new Set(commits.flatMap((c) => c.changedFiles.map((f) => f.path)))].sort());
    expect(figures.head).toBe(commits.at(-1)!.commit);
    const base = ofType<{ project: { baseCommit: string } }>(events, "TaskStarted")[0]!.project.baseCommit;
    expect(figures.baseCommit).toBe(base);
    const numstat = gitIn(h.repo, "diff", "--numstat", base, figures.head!)
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    expect(figures.diff).toEqual({
      added: numstat.reduce((n, [a]) => n + Number(a), 0),
      removed: numstat.reduce((n, [, r]) => n + Number(r), 0),
      files: numstat.length,
    });
    expect(figures.diff).toEqual({ added: 1, removed: 1, files: 1 });

    const firstStart = events.find((e) => e.type === "StepStarted")!;
    const end = events.find((e) => e.type === "SessionFinalized")!;
    expect(figures.wall).toEqual({
      startedAt: firstStart.recordedAt,
      endedAt: end.recordedAt,
      ms: Date.parse(end.recordedAt) - Date.parse(firstStart.recordedAt),
      running: false,
    });
    // The calls are the ones the usage projection counted for this session.
    const usage = await sessionUsage(db.pool, sessionId, pricing);
    expect(figures.usage.calls).toBe(usage.total.calls);
    expect(figures.usage.calls).toBe(5); // two builds, two reviews, one test plan
    expect(figures.coder).toEqual({ agentId: "coder-sim", model: null });
  }, 60_000);
});
