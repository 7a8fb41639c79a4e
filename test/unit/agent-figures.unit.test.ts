// A session's figures and the agent record folded from events (server/agent-record): the
// rounds with their blocking findings and tests, iterations to approval, files touched, wall
// time and cost from the session's own events only (a fork's inherited ones are its parent's),
// the coder named by the bake-off over what its calls say; and the record's grouping and medians.
import { describe, expect, it } from "vitest";
import type { ReviewVerdict, TestPlan } from "../../server/events/agent-outputs";
import type { AppEvent } from "../../server/events/catalog";
import type { AgentStepOutput } from "../../server/events/step-contract";
import type { RecordedEvent } from "../../server/events/types";
import { foldFigures, type SessionFigures } from "../../server/agent-record/figures";
import { median, recordOf } from "../../server/agent-record/record";
import { BUILTIN_WORKFLOWS } from "../../server/task-engine";
import type { PricingSettings } from "../../server/config/schemas";
import { BASE_COMMIT, SessionHistory, buildCommit, commandResult, commandsOutput, recorded, type TaskConfig } from "../helpers/decider";

const reviewLoop = BUILTIN_WORKFLOWS.review_loop!;
const pricing: PricingSettings = {
  currency: "USD",
  models: { "model-a": { inputPerMillion: 3, outputPerMillion: 15 } },
} as PricingSettings;

const config: TaskConfig = {
  workflow: "review_loop",
  workflowVersion: 1,
  mode: "implementation",
  prompt: "Fix sum()",
  maxIterations: 5,
  project: { id: "proj-1", name: "demo", repoPath: "/srv/repo", baseCommit: BASE_COMMIT, allowlist: [["npm", "test"]] },
  agents: {
    coder: { id: "snap-coder", model: "snap-model" },
    reviewer: { id: "reviewer" },
    tester: { id: "tester" },
  },
};

const changes: ReviewVerdict = {
  decision: "changes_requested",
  summary: "Not yet.",
  findings: [
    { severity: "blocking", file: "src/sum.js", line: 2, message: "still subtracts" },
    { severity: "major", file: "src/sum.js", message: "no test" },
  ],
};
const approve: ReviewVerdict = { decision: "approve", summary: "Good.", findings: [{ severity: "nit", file: "a", message: "n" }] };
const plan: TestPlan = { summary: "tests", commands: [{ argv: ["npm", "test"], expect: { exitCode: 0 } }] };

function built(h: SessionHistory, file: string): SessionHistory {
  return h.agentSaid("built", { commit: buildCommit(`${file}-${h.iteration}`, [{ path: file, status: "modified" }]) });
}
function reviewed(h: SessionHistory, verdict: ReviewVerdict): SessionHistory {
  const stepId = h.current();
  return h.agentSaid(JSON.stringify(verdict), {
    parsed: verdict,
    then: [
      {
        type: "ReviewVerdictRecorded",
        data: {
          stepId,
          decision: verdict.decision,
          modelDecision: verdict.decision,
          override: null,
          summary: verdict.summary,
          findings: verdict.findings,
        },
      },
    ],
  });
}
function tested(h: SessionHistory, results: boolean[]): SessionHistory {
  const stepId = h.current();
  h.agentSaid(JSON.stringify(plan), { parsed: plan, then: [{ type: "TestPlanRecorded", data: { stepId, ...plan } }] });
  h.enter("running_tests", { reason: "plan_valid" });
  const run = h.current();
  const outputs = results.map((pass, i) =>
    commandResult(["npm", "test", String(i)], pass ? {} : { exitCode: 1, errorClass: "command_failed", reason: "exit 1" }),
  );
  h.stepCompleted(commandsOutput(outputs));
  outputs.forEach((r, index) => h.add({ type: "TestCommandRecorded", data: { stepId: run, index, ...r, passed: results[index]! } }));
  return h;
}

/** Every agent call names its role's agent and reports 1000 in / 100 out of model-a (a tester's call: of an unpriced model). */
function withUsage(events: AppEvent[]): AppEvent[] {
  const agentCall = (e: AppEvent | undefined): AgentStepOutput | null =>
    e?.type === "StepCompleted" && (e.data.output as { kind?: string } | null)?.kind === "agent"
      ? (e.data.output as AgentStepOutput)
      : null;
  return events
    .map((e, i): AppEvent => {
      const output = agentCall(e);
      if (e.type !== "StepCompleted" || !output) return e;
      const next = events[i + 1];
      const role = next?.type === "AgentOutputRecorded" ? next.data.role : "unknown";
      const model = role === "tester" ? "model-x" : "model-a";
      return {
        ...e,
        data: { ...e.data, output: { ...output, agentId: `${role}-agent`, usage: { inputTokens: 1000, outputTokens: 100, model } } },
      };
    })
    .map((e, i, all): AppEvent => {
      if (e.type !== "AgentOutputRecorded") return e;
      const usage = agentCall(all[i - 1])?.usage;
      return { ...e, data: { ...e.data, agentId: `${e.data.role}-agent`, ...(usage ? { usage } : {}) } };
    });
}

/** Three rounds: changes requested (1 blocking), approved but a test fails, approved and every test passes. */
function threeRounds(): SessionHistory {
  const h = new SessionHistory(reviewLoop).created(config).enter("building", { reason: "start" });
  built(h, "src/sum.js").enter("reviewing");
  reviewed(h, changes).enter("building", { reason: "changes_requested", iterate: "changes_requested" });
  built(h, "test/sum.test.js").enter("reviewing");
  reviewed(h, approve).enter("testing", { reason: "approve" });
  tested(h, [true, false]).enter("building", { reason: "test_failed", iterate: "test_failed" });
  built(h, "src/sum.js").enter("reviewing");
  reviewed(h, approve).enter("testing", { reason: "approve" });
  tested(h, [true, true]).enter("approved", { reason: "tests_passed" });
  return h;
}

const inStream = (events: RecordedEvent[], streamId: string) => events.map((e) => ({ ...e, streamId }));
const at = (e: RecordedEvent) => Date.parse(e.recordedAt);

describe("a session's figures", () => {
  const events = inStream(recorded(withUsage(threeRounds().events)), "s-1");
  const figures = foldFigures(events, { sessionId: "s-1", pricing, nowMs: Date.UTC(2027, 0, 1) });

  it("approved in 3 iterations; each round's verdict, blocking findings and tests; the last run's tests", () => {
    expect(figures).toMatchObject({
      status: "finished",
      state: "approved",
      outcome: "approved",
      ownOutcome: "approved",
      approved: true,
      iterationsToApproval: 3,
    });
    expect(figures.rounds).toEqual([
      { iteration: 1, decision: "changes_requested", blockingFindings: 1, findings: 2, tests: null },
      { iteration: 2, decision: "approve", blockingFindings: 0, findings: 1, tests: { passed: 1, failed: 1 } },
      { iteration: 3, decision: "approve", blockingFindings: 0, findings: 1, tests: { passed: 2, failed: 0 } },
    ]);
    expect(figures.tests).toEqual({ passed: 2, failed: 0 });
    expect(figures.filesTouched).toEqual(["src/sum.js", "test/sum.test.js"]);
    expect(figures.baseCommit).toBe(BASE_COMMIT);
    expect(figures.diff).toBeNull(); // git's part: the loader's
  });

  it("wall time runs from the first step started to the end; tokens and cost are every call's, an unpriced model named", () => {
    const first = events.find((e) => e.type === "StepStarted")!;
    const end = events.find((e) => e.type === "SessionFinalized")!;
    expect(figures.wall).toEqual({ startedAt: first.recordedAt, endedAt: end.recordedAt, ms: at(end) - at(first), running: false });
    const calls = events.filter((e) => e.type === "StepCompleted" && (e.data as { output: { kind: string } }).output.kind === "agent");
    const testerCalls = events.filter((e) => e.type === "AgentOutputRecorded" && (e.data as { role: string }).role === "tester").length;
    expect(calls.length).toBe(8); // 3 builds, 3 reviews, 2 test plans
    expect(testerCalls).toBe(2);
    expect(figures.usage).toEqual({
      currency: "USD",
      calls: 8,
      inputTokens: 8000,
      outputTokens: 800,
      cachedInputTokens: 0,
      cacheCreationInputTokens: 0,
      cost: (6 * (1000 * 3 + 100 * 15)) / 1e6,
      unpriced: ["model-x"],
    });
    expect(figures.coder).toEqual({ agentId: "coder-agent", model: "model-a" });
  });

  it("a contender's coder and model are the bake-off's; approval survives a later not_chosen end", () => {
    const notChosen = recorded([
      ...withUsage(threeRounds().events),
      {
        type: "SessionFinalized",
        data: { outcome: "not_chosen", reason: "c2 chosen", iterations: 3, unresolved: [], errorClass: null, diagnosis: null },
      },
    ]);
    const f = foldFigures(inStream(notChosen, "s-2"), {
      sessionId: "s-2",
      pricing,
      nowMs: 0,
      contender: { coder: "codex-coder", model: "gpt-x" },
    });
    expect(f.coder).toEqual({ agentId: "codex-coder", model: "gpt-x" });
    expect(f).toMatchObject({ approved: true, iterationsToApproval: 3 });
  });

  it("a fork counts only its own calls and wall time; its rounds include those it inherited", () => {
    const all = recorded(withUsage(threeRounds().events));
    const cut = all.findIndex((e) => e.type === "IterationStarted" && (e.data as { iteration: number }).iteration === 3);
    const lineage = [...inStream(all.slice(0, cut), "parent"), ...inStream(all.slice(cut), "child")];
    const f = foldFigures(lineage, { sessionId: "child", pricing, nowMs: 0 });
    const ownCalls = all
      .slice(cut)
      .filter((e) => e.type === "StepCompleted" && (e.data as { output: { kind: string } }).output.kind === "agent");
    expect(f.usage.calls).toBe(ownCalls.length);
    expect(f.usage.calls).toBeLessThan(8);
    expect(f.wall.startedAt).toBe(all.slice(cut).find((e) => e.type === "StepStarted")!.recordedAt);
    expect(f.rounds.map((r) => r.iteration)).toEqual([1, 2, 3]);
  });

  it("still running: not approved, no iterations to approval, wall time up to now; no step yet: no wall time", () => {
    const h = new SessionHistory(reviewLoop).created(config).enter("building", { reason: "start" });
    built(h, "src/sum.js").enter("reviewing");
    reviewed(h, changes);
    const running = inStream(recorded(h.events), "s-3");
    const now = Date.UTC(2026, 0, 1, 1);
    const f = foldFigures(running, { sessionId: "s-3", pricing, nowMs: now });
    const first = running.find((e) => e.type === "StepStarted")!;
    expect(f).toMatchObject({ status: "active", state: "reviewing", outcome: null, approved: false, iterationsToApproval: null });
    expect(f.wall).toEqual({ startedAt: first.recordedAt, endedAt: null, ms: now - at(first), running: true });
    expect(f.rounds).toEqual([{ iteration: 1, decision: "changes_requested", blockingFindings: 1, findings: 2, tests: null }]);
    expect(f.coder).toEqual({ agentId: "scripted-agent", model: null });
    const fresh = foldFigures(inStream(recorded(new SessionHistory(reviewLoop).created(config).events), "s-4"), {
      sessionId: "s-4",
      pricing,
      nowMs: now,
    });
    expect(fresh.wall).toEqual({ startedAt: null, endedAt: null, ms: null, running: false });
    expect(fresh.coder).toEqual({ agentId: "snap-coder", model: "snap-model" });
  });
});

describe("the agent record from figures", () => {
  const base = foldFigures(inStream(recorded(withUsage(threeRounds().events)), "x"), { sessionId: "x", pricing, nowMs: 0 });
  const fig = (id: string, agentId: string, model: string | null, over: Partial<SessionFigures>): SessionFigures => ({
    ...base,
    sessionId: id,
    coder: { agentId, model },
    ...over,
  });

  it("median: the middle value, or the mean of the two middle values; null for none", () => {
    expect(median([])).toBeNull();
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 10])).toBe(3.5);
  });

  it("groups by agent and model; the approval rate over finished tasks; medians over approved (iterations, cost) and finished (wall)", () => {
    const wall = (ms: number) => ({ startedAt: "t", endedAt: "t", ms, running: false });
    const record = recordOf(
      [
        {
          figures: fig("a1", "claude", "m1", { iterationsToApproval: 1, wall: wall(100), usage: { ...base.usage, cost: 1 } }),
          inBakeOff: false,
          chosen: false,
        },
        {
          figures: fig("a2", "claude", "m1", { iterationsToApproval: 3, wall: wall(300), usage: { ...base.usage, cost: 3 } }),
          inBakeOff: true,
          chosen: true,
        },
        {
          figures: fig("a3", "claude", "m1", {
            approved: false,
            iterationsToApproval: null,
            outcome: "max_iterations_reached",
            ownOutcome: "max_iterations_reached",
            wall: wall(1000),
          }),
          inBakeOff: false,
          chosen: false,
        },
        {
          figures: fig("a4", "claude", "m1", {
            approved: false,
            iterationsToApproval: null,
            status: "active",
            outcome: null,
            ownOutcome: null,
            wall: { startedAt: "t", endedAt: null, ms: 5, running: true },
          }),
          inBakeOff: false,
          chosen: false,
        },
        // A contender stopped by another's pick while it ran: not_chosen, no outcome of its own — in neither count.
        {
          figures: fig("a5", "claude", "m1", {
            approved: false,
            iterationsToApproval: null,
            outcome: "not_chosen",
            ownOutcome: null,
            wall: wall(7),
          }),
          inBakeOff: true,
          chosen: false,
        },
        { figures: fig("b1", "claude", "m2", { iterationsToApproval: 2 }), inBakeOff: true, chosen: false },
      ],
      { projectId: "p", since: null, until: null, currency: "USD", sessions: 6, bakeOffs: 1 },
    );
    expect(record.agents.map((a) => [a.agentId, a.model, a.tasks])).toEqual([
      ["claude", "m1", 5],
      ["claude", "m2", 1],
    ]);
    expect(record.agents[0]).toMatchObject({
      finished: 3,
      approved: 2,
      approvalRate: 2 / 3,
      medianIterationsToApproval: 2,
      medianWallMs: 300,
      medianCostPerApprovedTask: 2,
      bakeOffs: 2,
      chosen: 1,
      sessions: ["a1", "a2", "a3", "a4", "a5"],
    });
    expect(record.agents[1]).toMatchObject({ approvalRate: 1, medianIterationsToApproval: 2, bakeOffs: 1, chosen: 0 });
  });
});
