// The task fold (server/workflow/state.ts, with Forge's slice: server/forge/state.ts), event by event: what each event changes in a
// session's state and what it leaves alone. The decider tests see these only through the
// decisions they lead to; here each is asserted on the folded state itself, so that a fold
// that keeps, drops or sums the wrong thing fails by name.
import { describe, expect, it } from "vitest";
import { CHANGE_STAGE } from "../../server/forge/artifacts";
import type { AppEvent } from "../../server/events/catalog";
import { forgeExtension } from "../../server/forge/extension";
import { emptyPipeline } from "../../server/forge/state";
import { evolve, foldTask, type StartedTask, type TaskState } from "../../server/task-engine";
import { threadContext } from "../../server/workflow/prompt";
import { applyEmitted as engineApplyEmitted, noStages, noUsage, THREAD_TEXT_CHARS } from "../../server/workflow/state";
import { BASE_COMMIT, blobRef, buildCommit, commandResult, expectValidEvents, recorded, type TaskConfig } from "../helpers/decider";

const STEP = "22222222-0000-4000-8000-000000000001";
const OTHER_STEP = "22222222-0000-4000-8000-000000000002";

const config: TaskConfig = {
  workflow: "forge",
  workflowVersion: 1,
  mode: "new",
  prompt: "A word counter.",
  maxIterations: 5,
  project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [] },
  agents: { planner: { id: "planner" }, coder: { id: "coder" }, reviewer: { id: "reviewer" } },
};

const START: AppEvent[] = [
  { type: "SessionCreated", data: { title: "T", workflow: "forge", state: "start" } },
  { type: "TaskStarted", data: config },
];

/** applyEmitted with the application's extension (Forge's slice). */
const applyEmitted = (state: TaskState, events: ReadonlyArray<{ type: string; data: unknown }>) =>
  engineApplyEmitted(forgeExtension, state, events);

/** What the engine keeps of a task's progress beside the extension's slice: stages, a person needed, the budget. */
const progressOf = (s: StartedTask) => ({ stages: s.stages, needed: s.needed, usage: s.usage, startedAtMs: s.startedAtMs });

/** The recorded time of version `v` in `recorded()`: one second per version from 2026-01-01. */
const at = (v: number) => Date.UTC(2026, 0, 1, 0, 0, v);

/** Folds `events` after the task's start (versions 3, 4, ...). */
function fold(...events: AppEvent[]): TaskState {
  expectValidEvents(events);
  return foldTask(recorded([...START, ...events]));
}

function started(...events: AppEvent[]): StartedTask {
  const s = fold(...events);
  if (s.status === "none") throw new Error("no task started");
  return s;
}

/** One more event on `state`, recorded as the next version (at its second). */
function then(state: TaskState, event: AppEvent): TaskState {
  expectValidEvents([event]);
  return evolve(state, recorded([event], state.version + 1)[0]!);
}

function thenStarted(state: TaskState, event: AppEvent): StartedTask {
  const s = then(state, event);
  if (s.status === "none") throw new Error("no task started");
  return s;
}

const agentStep = (
  stepId: string,
  stage?: string,
  { kind = "agent", phase = "discussion" }: { kind?: "agent" | "commands"; phase?: "discussion" | "draft" | "critique" | "test" } = {},
): AppEvent => ({
  type: "StepScheduled",
  data: {
    stepId,
    kind,
    input: {
      workflow: "forge",
      state: "drafting",
      role: "planner",
      phase,
      output: "text",
      prompt: "p",
      context: [],
      agent: null,
      invocation: 0,
      workspace: { repoPath: "/repo", baseCommit: BASE_COMMIT, head: BASE_COMMIT },
      diff: null,
      commands: [],
      allowlist: [],
      ...(stage
        ? { forge: { stage, iteration: 1, writes: [], collect: [], materialize: [], protect: [], attach: [], feedbackHistory: "[]" } }
        : {}),
    },
    timeoutMs: 1000,
    maxAttempts: 1,
  },
});

const agentOutput = (extra: { validationErrors?: string[]; usage?: { inputTokens: number; outputTokens: number } } = {}): AppEvent => ({
  type: "AgentOutputRecorded",
  data: {
    stepId: STEP,
    attempt: 1,
    role: "planner",
    agentId: "planner",
    phase: "discussion",
    raw: blobRef("said"),
    preview: "said",
    parsed: null,
    validationErrors: extra.validationErrors ?? [],
    simulated: true,
    ...(extra.usage ? { usage: extra.usage } : {}),
  },
});

/** An artifact version's hash: its text's sha-256, as the blob's. */
const hashOf = (text: string) => blobRef(text).blob;

const finding = (id: string, severity: "blocking" | "major" | "minor") => ({
  id,
  severity,
  message: `${id} is wrong`,
  source: "critic" as const,
});

const critique = (decision: "pass" | "revise", findings: ReturnType<typeof finding>[]): AppEvent => ({
  type: "CritiqueRecorded",
  data: {
    stepId: STEP,
    stage: "prd",
    round: 1,
    decision,
    modelDecision: decision,
    summary: "The PRD",
    findings,
    loop: { similarity: null, persisted: [], reopened: [], stalled: false, warning: null, escalate: null },
  },
});

type ArtifactJson = Extract<AppEvent, { type: "ArtifactRecorded" }>["data"]["json"];

const artifact = (type: "ArtifactRecorded" | "ArtifactEdited", path: string, text: string, stage = "prd", json?: ArtifactJson): AppEvent =>
  type === "ArtifactRecorded"
    ? {
        type,
        data: {
          stepId: STEP,
          stage,
          path,
          hash: hashOf(text),
          blob: blobRef(text),
          size: text.length,
          problems: [],
          ...(json ? { json } : {}),
        },
      }
    : { type, data: { baseHash: null, stage, path, hash: hashOf(text), blob: blobRef(text), size: text.length, problems: [] } };

const forked = (reason: "rerun" | "modify", outcome?: string): AppEvent => ({
  type: "SessionForked",
  data: { parentId: "parent", atVersion: 9, reason, title: "T", workflow: "forge", state: "forked_state", ...(outcome ? { outcome } : {}) },
});

describe("task fold: starting, forking and resuming", () => {
  it("a started task has no open issues, an empty pipeline and the start's time as its wall-clock start", () => {
    const s = started();
    expect(s).toMatchObject({ status: "active", iteration: 1, openIssues: [], thread: [], head: BASE_COMMIT, version: 2 });
    expect(s.pipeline).toEqual(emptyPipeline);
    expect(progressOf(s)).toEqual({ stages: noStages, needed: null, usage: noUsage, startedAtMs: at(2) });
  });

  it("a modify fork keeps the progress, restarts the budget's spending and clock, and leaves the step", () => {
    const before = started(agentStep(STEP), agentOutput({ usage: { inputTokens: 10, outputTokens: 5 } }), {
      type: "ExecutionRejected",
      data: { stepId: STEP, reasons: ["broken"] },
    });
    expect(before.usage.calls).toBe(1);
    const after = thenStarted(before, forked("modify"));
    expect(after).toMatchObject({ status: "active", fsm: "forked_state", step: null, openIssues: ["broken"], iteration: 1 });
    expect(after.thread).toEqual(before.thread);
    expect(after.usage).toEqual(noUsage);
    expect(after.startedAtMs).toBe(at(after.version));
    expect(after.startedAtMs).not.toBe(before.startedAtMs);
  });

  it("a rerun starts the loop from scratch: iteration 1, no issues, no commits, an empty pipeline from the fork's time", () => {
    const commit = buildCommit("c1", [{ path: "a.ts", status: "added" }]);
    const before = started(
      { type: "IterationStarted", data: { iteration: 3, reason: "again" } },
      { type: "WorkspaceCommitted", data: { stepId: STEP, ...commit } },
      { type: "ExecutionRejected", data: { stepId: STEP, reasons: ["broken"] } },
      { type: "StageStarted", data: { stage: "prd" } },
    );
    const after = thenStarted(before, forked("rerun"));
    expect(after).toMatchObject({
      status: "active",
      fsm: "forked_state",
      iteration: 1,
      openIssues: [],
      lastCommit: null,
      lastDiff: null,
      lastDiffAfter: null,
      bundle: null,
      head: BASE_COMMIT,
    });
    expect(after.pipeline).toEqual(emptyPipeline);
    expect(progressOf(after)).toEqual({ stages: noStages, needed: null, usage: noUsage, startedAtMs: at(after.version) });
  });

  it("a fork of a finished position is a finished copy; a rerun of a finished task runs again", () => {
    const finished = started({
      type: "SessionFinalized",
      data: { outcome: "approved", reason: null, iterations: 1, unresolved: [], errorClass: null, diagnosis: null },
    });
    const copy = then(finished, forked("modify", "approved"));
    expect(copy).toMatchObject({ status: "finished", outcome: "approved", step: null, fsm: "start" });
    const rerun = then(finished, forked("rerun"));
    expect(rerun).toMatchObject({ status: "active", fsm: "forked_state", iteration: 1 });
    expect(rerun).not.toHaveProperty("outcome");
  });

  it("a resume runs again from the resume's time, with the new budget when one is given", () => {
    const finished = started({
      type: "SessionFinalized",
      data: { outcome: "failed", reason: null, iterations: 1, unresolved: [], errorClass: null, diagnosis: null },
    });
    const budget = { maxCalls: 9 };
    const resumed = thenStarted(finished, { type: "SessionResumed", data: { from: "failed", state: "drafting", budget } });
    expect(resumed).toMatchObject({ status: "active", step: null, config: { ...config, budget } });
    expect(resumed.startedAtMs).toBe(at(resumed.version));
    const again = thenStarted(resumed, { type: "SessionResumed", data: { from: "failed", state: "drafting" } });
    expect(again.config.budget).toEqual(budget);
  });

  it("a modify fork's change request: iterations counted again from zero, the change as the only issue, no earlier triage", () => {
    const before = started(
      artifact("ArtifactRecorded", "docs/prd.md", "prd"),
      artifact("ArtifactRecorded", "change/triage.json", "triage", CHANGE_STAGE),
      { type: "IterationStarted", data: { iteration: 2, reason: "again", stage: "prd" } },
      { type: "OperatorMessagePosted", data: { text: "hello" } },
    );
    const data = {
      text: "Count lines too",
      baseSessionId: "base",
      baseCommit: "b".repeat(40),
      fingerprint: { files: 1, digest: "d", changedSinceBase: [], addedSinceBase: [], removedSinceBase: [] },
      basePlan: { t1: "x" },
    };
    const after = thenStarted(before, { type: "ChangeRequested", data });
    expect(after.iteration).toBe(0);
    expect(after.openIssues).toEqual(["Change requested: Count lines too"]);
    expect(after.thread).toEqual([
      { from: "operator", text: "hello" },
      { from: "operator", text: "Change requested: Count lines too" },
    ]);
    const { fingerprint: _f, ...change } = data;
    expect(after.pipeline.change).toEqual(change);
    expect(after.stages.iterations).toEqual({});
    expect(Object.keys(after.pipeline.artifacts)).toEqual(["docs/prd.md"]);
  });
});

describe("task fold: steps, outputs and the loop's issues", () => {
  it("an agent step reserves a call in its stage (or '(none)'); a commands step or a session without a task reserves nothing", () => {
    const noTask = foldTask(recorded([START[0]!, agentStep(STEP)]));
    expect(noTask).toEqual({ status: "none", version: 2, fsm: "start", step: { id: STEP, state: "drafting", role: "planner" } });

    const s = started(agentStep(STEP, "prd"), agentStep(OTHER_STEP));
    expect(s.usage).toEqual({
      calls: 2,
      tokens: 0,
      byStage: { prd: { calls: 1, inputTokens: 0, outputTokens: 0 }, "(none)": { calls: 1, inputTokens: 0, outputTokens: 0 } },
    });
    const commands = agentStep("22222222-0000-4000-8000-000000000003");
    if (commands.type !== "StepScheduled") throw new Error("unreachable");
    const afterCommands = thenStarted(s, { ...commands, data: { ...commands.data, kind: "commands" } });
    expect(afterCommands.usage).toEqual(s.usage);
    expect(afterCommands.step?.id).toBe("22222222-0000-4000-8000-000000000003");
  });

  it("a stage's runs: each scheduled step of the stage but a critique, commands included; entering it again without an iteration counts", () => {
    const step = (id: string, stage: string, phase: "draft" | "critique" | "test", kind: "agent" | "commands" = "agent") =>
      agentStep(id, stage, { phase, kind });
    const s = started(
      { type: "StageStarted", data: { stage: "coding" } },
      step("22222222-0000-4000-8000-000000000010", "coding", "draft"),
      step("22222222-0000-4000-8000-000000000011", "coding", "critique"),
      { type: "StageStarted", data: { stage: "check" } },
      step("22222222-0000-4000-8000-000000000012", "check", "test", "commands"),
      step("22222222-0000-4000-8000-000000000013", "check", "critique"),
      { type: "StageReopened", data: { stage: "coding", reason: "check_failed" } },
      { type: "IterationStarted", data: { iteration: 2, reason: "check_failed", stage: "coding" } },
      step("22222222-0000-4000-8000-000000000014", "coding", "draft"),
      { type: "StageReopened", data: { stage: "check", reason: "done" } },
      step("22222222-0000-4000-8000-000000000015", "check", "test", "commands"),
    );
    expect(s.stages.runs).toEqual({ coding: 2, check: 2 });
    // The cap counts iterations: Check's did not move.
    expect(s.stages.iterations).toEqual({ coding: 2, check: 1 });
  });

  it("an output's tokens add up per stage; a start counts an invocation of the current step's role only", () => {
    const s = started(
      { type: "StageStarted", data: { stage: "prd" } },
      agentStep(STEP, "prd"),
      { type: "StepStarted", data: { stepId: STEP, attempt: 1, runnerId: "r", leaseExpiresAt: "2026-01-01T00:10:00.000Z" } },
      { type: "StepStarted", data: { stepId: OTHER_STEP, attempt: 1, runnerId: "r", leaseExpiresAt: "2026-01-01T00:10:00.000Z" } },
      agentOutput({ usage: { inputTokens: 100, outputTokens: 20 } }),
      agentOutput({ usage: { inputTokens: 7, outputTokens: 3 } }),
    );
    expect(s.invocations).toEqual({ planner: 1 });
    expect(s.usage).toEqual({ calls: 1, tokens: 130, byStage: { prd: { calls: 1, inputTokens: 107, outputTokens: 23 } } });
  });

  it("an invalid output is marked in the thread and its errors become the open issues", () => {
    const s = started(agentOutput(), agentOutput({ validationErrors: ["not JSON", "no decision"] }));
    expect(s.thread).toEqual([
      { from: "planner", text: "said" },
      { from: "planner", text: "(invalid output) said" },
    ]);
    expect(s.openIssues).toEqual(["planner output rejected: not JSON", "planner output rejected: no decision"]);
  });

  it("commits: the head moves, and a stage collects each file its commits changed once", () => {
    const c1 = buildCommit("c1", [
      { path: "a.ts", status: "added" },
      { path: "b.ts", status: "added" },
    ]);
    const c2 = buildCommit("c2", [{ path: "a.ts", status: "modified" }], c1.commit);
    const outside = started({ type: "WorkspaceCommitted", data: { stepId: STEP, ...c1 } });
    expect(outside.pipeline.changed).toEqual({});
    const s = started(
      { type: "StageStarted", data: { stage: "coding" } },
      { type: "WorkspaceCommitted", data: { stepId: STEP, ...c1 } },
      { type: "WorkspaceCommitted", data: { stepId: STEP, ...c2 } },
    );
    expect(s.pipeline.changed).toEqual({ coding: ["a.ts", "b.ts"] });
    expect(s).toMatchObject({ head: c2.commit, lastCommit: { commit: c2.commit, parent: c1.commit }, lastDiff: c2.diff });
  });

  it("a verdict: approval clears the issues; changes requested lists each finding and the override", () => {
    const verdict = (decision: "approve" | "changes_requested", override: string | null): AppEvent => ({
      type: "ReviewVerdictRecorded",
      data: {
        stepId: STEP,
        decision,
        modelDecision: decision,
        override,
        summary: "s",
        findings: [
          { severity: "major", file: "a.ts", line: 3, message: "off by one" },
          { severity: "minor", file: "b.ts", message: "naming" },
        ],
      },
    });
    const changes = started(verdict("changes_requested", "tests failed"));
    expect(changes.openIssues).toEqual(["[major] a.ts:3: off by one", "[minor] b.ts: naming", "tests failed"]);
    expect(thenStarted(changes, verdict("approve", null)).openIssues).toEqual([]);
  });

  it("a failed test command adds one trimmed issue of at most 1,000 characters: the reason or the exit code, then stderr or stdout", () => {
    const test = (extra: Parameters<typeof commandResult>[1]): AppEvent => ({
      type: "TestCommandRecorded",
      data: { ...commandResult(["npm", "test"], extra), stepId: STEP, index: 0, passed: false },
    });
    const s = started(
      { type: "ExecutionRejected", data: { stepId: STEP, reasons: ["earlier"] } },
      test({ exitCode: 1, stderrTail: "boom  \n", stdoutTail: "out" }),
      test({ exitCode: 2, stderrTail: "", stdoutTail: "only stdout" }),
      test({ status: "refused", exitCode: null, reason: "not allowed", stderrTail: "", stdoutTail: "" }),
      test({ exitCode: 3, stderrTail: "x".repeat(2000) }),
      { type: "TestCommandRecorded", data: { ...commandResult(["npm", "run", "lint"]), stepId: STEP, index: 4, passed: true } },
    );
    expect(s.openIssues).toEqual([
      "earlier",
      "test npm test: exit 1 boom",
      "test npm test: exit 2 only stdout",
      "test npm test: not allowed",
      `test npm test: exit 3 ${"x".repeat(2000)}`.slice(0, 1000),
    ]);
    expect(s.openIssues[4]).toHaveLength(1000);
  });

  it("the system's replies join the thread after what was there", () => {
    const s = started({ type: "OperatorMessagePosted", data: { text: "hi" } }, { type: "SystemReplied", data: { text: "finished" } });
    expect(s.thread).toEqual([
      { from: "operator", text: "hi" },
      { from: "system", text: "finished" },
    ]);
  });

  it("the thread keeps its window: at least the latest 20 messages, from a start on a multiple of 10, each cut to 4,000 characters", () => {
    const messages = Array.from({ length: 45 }, (_, i) => (i === 44 ? "y".repeat(5000) : `message ${i + 1}`));
    const cut = (text: string) => ({ from: "operator", text: text.slice(0, THREAD_TEXT_CHARS) });
    // What a prompt would show if the state kept every message: from the last multiple of 10 at or before the 20th from the end.
    const windowOf = (n: number) =>
      messages
        .slice(0, n)
        .slice(Math.floor(Math.max(0, n - 20) / 10) * 10)
        .map(cut);
    for (const n of [1, 19, 20, 21, 29, 30, 31, 39, 40, 45]) {
      const s = started(...messages.slice(0, n).map((text): AppEvent => ({ type: "OperatorMessagePosted", data: { text } })));
      const active = s.status === "active" ? s : { ...s, status: "active" as const };
      expect(threadContext(active), `after ${n} messages`).toEqual(windowOf(n));
      expect(s.threadCount).toBe(n);
      expect(s.thread.length).toBeLessThan(30);
    }
    // Successive prompts share their start until the window moves on (a stable prefix).
    const at = (n: number) => {
      const s = started(...messages.slice(0, n).map((text): AppEvent => ({ type: "OperatorMessagePosted", data: { text } })));
      return threadContext(s.status === "active" ? s : { ...s, status: "active" as const });
    };
    expect(at(31)[0]).toEqual(at(39)[0]);
    expect(at(39).slice(0, at(31).length)).toEqual(at(31));
  });

  it("applyEmitted folds events as the next versions of the state it is given", () => {
    const s = started();
    const after = applyEmitted(s, [
      { type: "OperatorMessagePosted", data: { text: "a" } },
      { type: "OperatorMessagePosted", data: { text: "b" } },
    ]);
    expect(after.version).toBe(s.version + 2);
    // An emitted event has no recorded time yet: the clock of the budget stays.
    const resumed = applyEmitted(s, [{ type: "SessionResumed", data: { from: "failed", state: "x" } }]);
    expect(resumed.status !== "none" && resumed.startedAtMs).toBe(s.startedAtMs);
  });
});

describe("task fold: stages, artifacts and a person's part", () => {
  it("a stage that starts again leaves the completed list, sets the iteration to 1, and completing twice lists it once", () => {
    const s = started(
      { type: "StageStarted", data: { stage: "idea" } },
      { type: "StageCompleted", data: { stage: "idea", artifacts: [] } },
      { type: "StageStarted", data: { stage: "prd" } },
      { type: "IterationStarted", data: { iteration: 3, reason: "again", stage: "prd" } },
      { type: "StageCompleted", data: { stage: "prd", artifacts: [] } },
      { type: "StageCompleted", data: { stage: "prd", artifacts: [] } },
    );
    expect(s.stages.completed).toEqual(["idea", "prd"]);
    expect(s.iteration).toBe(3);
    const again = thenStarted(s, { type: "StageStarted", data: { stage: "prd" } });
    expect(again.iteration).toBe(1);
    expect(again.stages).toMatchObject({ current: "prd", completed: ["idea"], iterations: { prd: 1 } });
    const reopened = thenStarted(s, { type: "StageReopened", data: { stage: "idea", reason: "check" } });
    expect(reopened.stages).toMatchObject({ current: "idea", completed: ["prd"] });
  });

  it("an artifact's entry carries its JSON only when it has one", () => {
    const s = started(artifact("ArtifactRecorded", "a.md", "A"), artifact("ArtifactRecorded", "b.json", "B", "prd", { ok: true }));
    expect(s.pipeline.artifacts["a.md"]).toStrictEqual({
      stage: "prd",
      hash: hashOf("A"),
      blob: blobRef("A"),
      size: 1,
      by: "agent",
      problems: [],
      shownAfter: 0,
    });
    expect(s.pipeline.artifacts["b.json"]).toMatchObject({ json: { ok: true }, by: "agent" });
  });

  it("an artifact's version and the latest commit are placed after the thread's message of the step that made them (prompts show them there)", () => {
    const s = started(
      agentOutput(),
      artifact("ArtifactRecorded", "a.md", "A1"),
      agentOutput(),
      agentOutput(),
      artifact("ArtifactRecorded", "a.md", "A2"),
      artifact("ArtifactEdited", "b.md", "B-person"),
      { type: "WorkspaceCommitted", data: { stepId: STEP, ...buildCommit("c1", [{ path: "a.md", status: "added" }]) } },
      agentOutput(),
    );
    // The second version of a.md replaces the first, after the third message; the commit came after it too.
    expect(s.pipeline.artifacts["a.md"]).toMatchObject({ hash: hashOf("A2"), shownAfter: 3 });
    expect(s.pipeline.artifacts["b.md"]).toMatchObject({ by: "person", shownAfter: 3 });
    expect(s).toMatchObject({ threadCount: 4, lastDiffAfter: 3 });
    expect(started(agentOutput())).toMatchObject({ lastDiffAfter: null });
  });

  it("held drafts: an agent's draft keeps them; a person's edit settles that file's; taking the held version over lets go of that file's edits only", () => {
    const held = (path: string, text: string): AppEvent => ({
      type: "ArtifactDraftHeld",
      data: { stepId: STEP, stage: "prd", path, hash: hashOf(text), blob: blobRef(text), conflicts: 2 },
    });
    const s = started(
      artifact("ArtifactRecorded", "a.md", "A1"),
      artifact("ArtifactRecorded", "b.md", "B1"),
      artifact("ArtifactEdited", "a.md", "A-person"),
      artifact("ArtifactEdited", "b.md", "B-person"),
      held("a.md", "A2"),
      held("b.md", "B2"),
    );
    expect(s.pipeline.held).toEqual({
      "a.md": { hash: hashOf("A2"), blob: blobRef("A2"), conflicts: 2 },
      "b.md": { hash: hashOf("B2"), blob: blobRef("B2"), conflicts: 2 },
    });
    expect(s.pipeline.edits["a.md"]).toEqual([{ base: blobRef("A1"), edited: blobRef("A-person"), version: expect.any(Number) }]);

    const redrafted = thenStarted(s, artifact("ArtifactRecorded", "a.md", "A3"));
    expect(Object.keys(redrafted.pipeline.held)).toEqual(["a.md", "b.md"]);
    expect(redrafted.pipeline.edits).toEqual(s.pipeline.edits);

    const taken = thenStarted(s, artifact("ArtifactEdited", "a.md", "A2"));
    expect(taken.pipeline.edits).toEqual({ "a.md": [], "b.md": s.pipeline.edits["b.md"] });
    expect(Object.keys(taken.pipeline.held)).toEqual(["b.md"]);
    expect(taken.pipeline.artifacts["a.md"]).toMatchObject({ hash: hashOf("A2"), by: "person" });

    const own = thenStarted(s, artifact("ArtifactEdited", "a.md", "A-mine"));
    expect(own.pipeline.edits["a.md"]).toEqual([
      { base: blobRef("A1"), edited: blobRef("A-person"), version: expect.any(Number) },
      { base: blobRef("A-person"), edited: blobRef("A-mine"), version: expect.any(Number) },
    ]);
    expect(Object.keys(own.pipeline.held)).toEqual(["b.md"]);
  });

  it("versions: drafts and edits in order, a held redraft none; an agent's draft names the edits it kept, until the person takes the agent's version", () => {
    const held: AppEvent = {
      type: "ArtifactDraftHeld",
      data: { stepId: STEP, stage: "prd", path: "a.md", hash: hashOf("A2"), blob: blobRef("A2"), conflicts: 1 },
    };
    const s = started(
      artifact("ArtifactRecorded", "a.md", "A1"),
      artifact("ArtifactEdited", "a.md", "A-person"),
      held,
      artifact("ArtifactRecorded", "a.md", "A3"),
    );
    const edit = s.pipeline.versions["a.md"]![1]!;
    expect(s.pipeline.versions["a.md"]!.map((v) => [v.kind, v.hash, v.keptEdits])).toEqual([
      ["draft", hashOf("A1"), []],
      ["edit", hashOf("A-person"), []],
      ["draft", hashOf("A3"), [edit.version]],
    ]);
    expect(s.pipeline.edits["a.md"]!.map((e) => e.version)).toEqual([edit.version]);
    // Taking the agent's held version lets go of the edit: a later draft keeps none.
    const taken = started(
      artifact("ArtifactRecorded", "a.md", "A1"),
      artifact("ArtifactEdited", "a.md", "A-person"),
      held,
      artifact("ArtifactEdited", "a.md", "A2"),
      artifact("ArtifactRecorded", "a.md", "A4"),
    );
    expect(taken.pipeline.versions["a.md"]!.map((v) => [v.kind, v.keptEdits.length])).toEqual([
      ["draft", 0],
      ["edit", 0],
      ["edit", 0],
      ["draft", 0],
    ]);
  });

  it("a critique: blocking ids and its text kept per stage; the open issues are its non-minor findings; only a non-pass is feedback", () => {
    const findings = [finding("F1", "blocking"), finding("F2", "major"), finding("F3", "minor")];
    const revise = started({ type: "IterationStarted", data: { iteration: 2, reason: "r" } }, critique("revise", findings));
    const text = "The PRD\nF1 is wrong\nF2 is wrong\nF3 is wrong";
    expect(revise.pipeline.critiques).toEqual({ prd: [{ blocking: ["F1"], text, decision: "revise" }] });
    expect(revise.openIssues).toEqual(["[blocking] F1: F1 is wrong", "[major] F2: F2 is wrong"]);
    expect(revise.pipeline.feedback).toEqual([{ stage: "prd", iteration: 2, source: "critic", severity: "normal", text }]);

    const pass = started(critique("pass", []));
    expect(pass.pipeline.feedback).toEqual([]);
    expect(pass.pipeline.critiques).toEqual({ prd: [{ blocking: [], text: "The PRD", decision: "pass" }] });
  });

  it("a routed check is feedback to the stage it goes back to; a person's feedback keeps its own fields", () => {
    const s = started(
      { type: "CheckRouted", data: { stepId: STEP, goto: "plan", reason: "cycle" } },
      { type: "FeedbackGiven", data: { stage: "plan", iteration: 1, source: "guidance", severity: "critical", text: "split it" } },
    );
    expect(s.pipeline.feedback).toEqual([
      { stage: "plan", iteration: 1, source: "critic", severity: "normal", text: "check failed: cycle" },
      { stage: "plan", iteration: 1, source: "guidance", severity: "critical", text: "split it" },
    ]);
  });

  it("a person's errand ends with a gate passed, a choice, a new stage or a state change", () => {
    const needed: AppEvent = {
      type: "PersonNeeded",
      data: { stage: "prd", cause: "cap", message: "cap reached", errorClass: null, resume: null },
    };
    const waiting = started(needed);
    expect(waiting.needed).toEqual(needed.data);
    for (const ends of [
      { type: "GatePassed", data: { stage: "prd" } },
      { type: "PersonChose", data: { choice: "retry" } },
      { type: "StageStarted", data: { stage: "design" } },
      { type: "SessionStateChanged", data: { from: "a", to: "b", reason: "r" } },
    ] as AppEvent[]) {
      expect(thenStarted(waiting, ends).needed, ends.type).toBeNull();
    }
  });
});
