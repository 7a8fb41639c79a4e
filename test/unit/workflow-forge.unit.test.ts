// The Forge pipeline's decider, stage by stage (req F1–F4, F8, F12, F13): every transition
// of the definition, driven through `decide` alone (no database, no runner), each emitted
// event checked against the catalog.
import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS as A } from "../../server/forge/artifacts";
import { FORGE_DEFINITION } from "../../server/forge/definition";
import { forgeExtension } from "../../server/forge/extension";
import {
  FORGE_CODE_METADATA,
  FORGE_CRITIQUES,
  FORGE_DESIGN_JSON,
  FORGE_FEATURES,
  FORGE_PLAN,
  FORGE_REQUIREMENTS,
  FORGE_REQUIREMENTS_V1,
} from "../../server/demo/forge-content";
import type { AppEvent, Budget } from "../../server/events/catalog";
import type { RecordedEvent } from "../../server/events/types";
import { type ActiveTask, BUILTIN_WORKFLOWS, decide, foldTask, type TaskCommand } from "../../server/task-engine";
import { attentionOf, budgetSpent } from "../../server/workflow/transition";
import {
  agentOutput,
  BASE_COMMIT,
  blobRef,
  commandResult,
  commandsOutput,
  counterIds,
  expectValidEvents,
  gaveUp,
  recorded,
  testContext,
  type TaskConfig,
} from "../helpers/decider";

const forge = BUILTIN_WORKFLOWS.forge!;
const IDEA = "A command-line word counter, with a unit test.";

function config(extra: Partial<TaskConfig> = {}): TaskConfig {
  return {
    workflow: "forge",
    workflowVersion: 1,
    mode: "new",
    prompt: IDEA,
    maxIterations: 5,
    project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [["node", "--test", "**"]] },
    agents: { planner: { id: "planner" }, coder: { id: "coder" }, reviewer: { id: "reviewer" } },
    ...extra,
  };
}

/** A session driven through the decider: each command decided on the history so far, its events appended. */
class Pipeline {
  history: RecordedEvent[] = [];
  private ids = counterIds("11111111");
  private now = Date.UTC(2026, 0, 1);

  constructor(extra: Partial<TaskConfig> = {}) {
    this.do({ type: "StartTask", title: "Forge", config: config(extra) });
  }

  get state(): ActiveTask {
    const s = foldTask(this.history);
    if (s.status !== "active") throw new Error(`the session is ${s.status}`);
    return s;
  }

  do(command: TaskCommand): AppEvent[] {
    const emitted = decide(foldTask(this.history), command, {
      definition: forge,
      extension: forgeExtension,
      newId: this.ids,
      maxAttempts: 4,
      stepTimeoutMs: 600_000,
      now: () => this.now,
    }) as AppEvent[];
    expectValidEvents(emitted);
    this.history.push(...recorded(emitted, this.history.length + 1));
    return emitted;
  }

  /** The current step's actor writes `files` (path → text). */
  draft(files: Record<string, string>, extra: { changed?: string[] } = {}): AppEvent[] {
    const stepId = this.state.step!.id;
    const artifacts = Object.entries(files).map(([path, text]) => {
      const blob = blobRef(text);
      return { path, hash: blob.blob, blob, size: blob.size };
    });
    const changed = extra.changed ?? Object.keys(files);
    return this.do({
      type: "StepSucceeded",
      stepId,
      attempt: 1,
      output: agentOutput("drafted", {
        forge: { artifacts, refusedWrites: [], held: [], warnings: [] },
        commit: {
          commit: "b".repeat(40),
          parent: BASE_COMMIT,
          empty: false,
          changedFiles: changed.map((path) => ({ path, status: "added" as const })),
          diff: blobRef("diff"),
        },
      }),
      rawText: "drafted",
      artifactTexts: Object.fromEntries(Object.entries(files).filter(([p]) => p.endsWith(".json"))),
    });
  }

  critique(reply: string): AppEvent[] {
    return this.do({ type: "StepSucceeded", stepId: this.state.step!.id, attempt: 1, output: agentOutput(reply), rawText: reply });
  }

  checks(passed: boolean): AppEvent[] {
    const result = commandResult(["node", "--test", "test/count.test.js"], passed ? {} : { exitCode: 1, errorClass: "command_failed" });
    return this.do({ type: "StepSucceeded", stepId: this.state.step!.id, attempt: 1, output: commandsOutput([result]), rawText: null });
  }
}

const types = (events: AppEvent[]) => events.map((e) => e.type);
const stateChange = (events: AppEvent[]) =>
  events
    .filter((e) => e.type === "SessionStateChanged")
    .map((e) => `${(e.data as { from: string }).from}→${(e.data as { to: string }).to}`);
const revise = (id: string, message = `problem ${id}`) =>
  JSON.stringify({ decision: "revise", summary: `revise: ${message}`, findings: [{ id, severity: "blocking", message }] });
const PRD = { [A.prd]: "# PRD\n", [A.requirements]: FORGE_REQUIREMENTS, [A.features]: FORGE_FEATURES };

/** What `fn` throws: its code, message and details (an AppError's). */
function thrown(fn: () => unknown): { code: string; message: string; details: unknown } {
  try {
    fn();
  } catch (err) {
    const e = err as { code: string; message: string; details?: unknown };
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new Error("expected a refusal, and the command was decided");
}

const edit = (path: string, content: string, baseHash: string | null): TaskCommand => ({
  type: "EditArtifact",
  path,
  content,
  hash: blobRef(content).blob,
  blob: blobRef(content),
  baseHash,
});

/** A pipeline (no gates unless given) taken to the start of `stage`'s draft. */
function through(stage: "prd" | "design" | "plan" | "coding" | "check" | "delivery", extra: Partial<TaskConfig> = {}): Pipeline {
  const p = new Pipeline({ gates: [], ...extra });
  p.draft({ [A.idea]: "# Idea\n" });
  if (stage === "prd") return p;
  p.draft(PRD);
  p.critique(FORGE_CRITIQUES.prdPass);
  if (stage === "design") return p;
  p.draft({ [A.design]: "# Design\n", [A.designSpec]: FORGE_DESIGN_JSON });
  p.critique(FORGE_CRITIQUES.designPass);
  if (stage === "plan") return p;
  p.draft({ [A.plan]: FORGE_PLAN });
  p.critique(FORGE_CRITIQUES.planPass);
  if (stage === "coding") return p;
  p.draft({ [A.codeMetadata]: FORGE_CODE_METADATA }, { changed: ["src/count.js", "test/count.test.js", A.codeMetadata] });
  p.critique(FORGE_CRITIQUES.codingPass);
  if (stage === "check") return p;
  p.checks(true);
  return p;
}

describe("forge: stage by stage", () => {
  it("start → idea: the idea stage starts and its actor is scheduled", () => {
    const p = new Pipeline();
    expect(types(p.history.map((e) => e as unknown as AppEvent))).toEqual([
      "SessionCreated",
      "TaskStarted",
      "SessionStateChanged",
      "StageStarted",
      "StepScheduled",
    ]);
    expect(p.state).toMatchObject({ fsm: "idea_draft", stages: { current: "idea", iterations: { idea: 1 } } });
    const input = (p.history[4]!.data as { input: { forge: { stage: string; writes: string[]; collect: string[] } } }).input;
    expect(input.forge).toMatchObject({ stage: "idea", writes: [A.idea], collect: [A.idea] });
  });

  it("idea drafted with its gate on → idea_review (edit-only: a pass, no feedback); gate off → the PRD directly", () => {
    const gated = new Pipeline({ gates: ["idea"] });
    expect(stateChange(gated.draft({ [A.idea]: "# Idea\n" }))).toEqual(["idea_draft→idea_review"]);
    expect(() => gated.do({ type: "GiveFeedback", text: "more" })).toThrow(/edits only/);
    const passed = gated.do({ type: "PassGate" });
    expect(types(passed)).toEqual(["GatePassed", "SessionStateChanged", "StageCompleted", "StageStarted", "StepScheduled"]);
    const open = new Pipeline({ gates: [] });
    expect(stateChange(open.draft({ [A.idea]: "# Idea\n" }))).toEqual(["idea_draft→prd_draft"]);
  });

  it("PRD: gate → feedback → redraft (iteration 2, feedback in the prompt) → pass → critic → pass → design", () => {
    const p = new Pipeline({ gates: ["prd"] });
    p.draft({ [A.idea]: "# Idea\n" });
    expect(stateChange(p.draft(PRD))).toEqual(["prd_draft→prd_review"]);
    const fed = p.do({ type: "GiveFeedback", text: "Say who it is for." });
    expect(types(fed)).toEqual(["FeedbackGiven", "SessionStateChanged", "IterationStarted", "StepScheduled"]);
    expect(fed[2]).toMatchObject({ data: { iteration: 2, stage: "prd" } });
    expect((fed[3]!.data as { input: { prompt: string } }).input.prompt).toContain("Say who it is for.");
    p.draft(PRD);
    expect(stateChange(p.do({ type: "PassGate" }))).toEqual(["prd_review→prd_critic"]);
    const passed = p.critique(FORGE_CRITIQUES.prdPass);
    expect(types(passed)).toEqual([
      "AgentOutputRecorded",
      "CritiqueRecorded",
      "SessionStateChanged",
      "StageCompleted",
      "StageStarted",
      "StepScheduled",
    ]);
    expect(passed[3]).toMatchObject({
      data: { stage: "prd", artifacts: expect.arrayContaining([expect.objectContaining({ path: A.requirements })]) },
    });
    expect(p.state.fsm).toBe("design_draft");
  });

  it("PRD: the rules checked by code make a critic's pass a revise (7 requirements, monitoring)", () => {
    const p = through("prd");
    const seven = JSON.stringify({
      requirements: Array.from({ length: 7 }, (_, i) => ({ id: `R${i + 1}`, title: `Requirement ${i + 1}`, description: "x" })),
    });
    p.draft({ ...PRD, [A.requirements]: seven });
    const out = p.critique(FORGE_CRITIQUES.prdPass);
    const critique = out.find((e) => e.type === "CritiqueRecorded")!.data as {
      decision: string;
      modelDecision: string;
      findings: Array<{ id: string }>;
    };
    expect(critique).toMatchObject({ decision: "revise", modelDecision: "pass" });
    expect(critique.findings.map((f) => f.id)).toEqual(["rule:prd.requirements-count"]);
    expect(p.state.fsm).toBe("prd_draft");
    p.draft({ ...PRD, [A.requirements]: FORGE_REQUIREMENTS_V1 });
    const second = p.critique(FORGE_CRITIQUES.prdPass).find((e) => e.type === "CritiqueRecorded")!.data as {
      findings: Array<{ id: string }>;
    };
    expect(second.findings.map((f) => f.id)).toEqual(["rule:prd.non-core.R5"]);
  });

  it("critic revise at the cap → the stage stops for a person (cap, with the transition's reason), not failed", () => {
    const p = through("prd", { stageCaps: { prd: 2 } });
    p.draft(PRD);
    p.critique(revise("a"));
    p.draft(PRD);
    const out = p.critique(revise("b"));
    expect(stateChange(out)).toEqual(["prd_critic→prd_stopped"]);
    expect(out.find((e) => e.type === "PersonNeeded")?.data).toEqual({
      stage: "prd",
      cause: "cap",
      message: "the iteration cap was reached (critic_revise)",
      errorClass: null,
      resume: null,
    });
    // At a stop a person may give guidance (the loop goes on), pass over the critic, or abort.
    expect(stateChange(p.do({ type: "GiveFeedback", text: "Narrow it to one file." }))).toEqual(["prd_stopped→prd_draft"]);
  });

  it("the same issue three times, or a resolved finding coming back, escalates at the third critique", () => {
    const same = through("prd");
    for (let i = 0; i < 2; i++) {
      same.draft(PRD);
      same.critique(revise("x", `the same issue, worded ${"differently ".repeat(i)}`));
    }
    same.draft(PRD);
    const third = same.critique(revise("x", "the same issue, yet again"));
    expect(stateChange(third)).toEqual(["prd_critic→prd_stopped"]);
    expect(third.find((e) => e.type === "PersonNeeded")).toMatchObject({
      data: { cause: "loop", message: expect.stringContaining("same issue") },
    });
    // A warning came at the second critique.
    expect(same.history.filter((e) => e.type === "ForgeWarning")).toHaveLength(1);
  });

  it("design and plan: a critic's pass moves on; a plan with a cycle names the cycle", () => {
    const p = through("design");
    p.draft({ [A.design]: "# Design\n", [A.designSpec]: FORGE_DESIGN_JSON });
    expect(stateChange(p.critique(FORGE_CRITIQUES.designPass))).toEqual(["design_critic→plan_draft"]);
    const cyclic = JSON.parse(FORGE_PLAN) as { tasks: Array<{ id: string; dependsOn: string[] }> };
    cyclic.tasks[0]!.dependsOn = ["T4"];
    p.draft({ [A.plan]: JSON.stringify(cyclic) });
    const out = p.critique(FORGE_CRITIQUES.planPass);
    const findings = (out.find((e) => e.type === "CritiqueRecorded")!.data as { findings: Array<{ id: string; message: string }> })
      .findings;
    expect(findings).toEqual([expect.objectContaining({ id: "rule:plan.cycle", message: expect.stringContaining("T1 → T4 → T3 → T1") })]);
    p.draft({ [A.plan]: FORGE_PLAN });
    expect(stateChange(p.critique(FORGE_CRITIQUES.planPass))).toEqual(["plan_critic→coding_draft"]);
  });

  it("coding (no gate) → critic → check with the coder's own checks; progress cascades to features", () => {
    const p = through("coding");
    const drafted = p.draft({ [A.codeMetadata]: FORGE_CODE_METADATA }, { changed: ["src/count.js", "test/count.test.js", A.codeMetadata] });
    expect(stateChange(drafted)).toEqual(["coding_draft→coding_critic"]);
    expect(drafted.find((e) => e.type === "ProgressRecorded")).toMatchObject({
      data: {
        features: [
          { id: "F1", status: "done" },
          { id: "F2", status: "done" },
        ],
      },
    });
    const toCheck = p.critique(FORGE_CRITIQUES.codingPass);
    expect(stateChange(toCheck)).toEqual(["coding_critic→check_run"]);
    const step = toCheck.find((e) => e.type === "StepScheduled")!.data as { kind: string; input: { commands: unknown } };
    expect(step).toMatchObject({
      kind: "commands",
      input: { commands: [{ argv: ["node", "--test", "test/count.test.js"], expect: { exitCode: 0 } }] },
    });
  });

  it("coding writes no tests unless the PRD asks (a rule finding)", () => {
    const p = new Pipeline({ gates: [] });
    p.draft({ [A.idea]: "# Idea\n" });
    const noTests = JSON.stringify({
      requirements: (JSON.parse(FORGE_REQUIREMENTS) as { requirements: unknown[] }).requirements.slice(0, 3),
    });
    const features = FORGE_FEATURES.replace('"R1",\n        "R4"', '"R1"');
    expect(features).not.toContain("R4");
    p.draft({ ...PRD, [A.requirements]: noTests, [A.features]: features });
    p.critique(FORGE_CRITIQUES.prdPass);
    p.draft({ [A.design]: "# Design\n", [A.designSpec]: FORGE_DESIGN_JSON });
    p.critique(FORGE_CRITIQUES.designPass);
    p.draft({ [A.plan]: FORGE_PLAN });
    p.critique(FORGE_CRITIQUES.planPass);
    p.draft({ [A.codeMetadata]: FORGE_CODE_METADATA }, { changed: ["src/count.js", "test/count.test.js", A.codeMetadata] });
    const out = p.critique(FORGE_CRITIQUES.codingPass);
    const findings = (out.find((e) => e.type === "CritiqueRecorded")!.data as { findings: Array<{ id: string }> }).findings;
    expect(findings.map((f) => f.id)).toEqual(["rule:coding.unasked-tests"]);
  });

  it("a failed check goes to its triage, which names the stage: coding reopens (the fix loop, within its cap); at the cap coding stops", () => {
    const p = through("check", { stageCaps: { coding: 2 } });
    const failed = p.checks(false);
    expect(types(failed)).toEqual(["TestCommandRecorded", "SessionStateChanged", "StepScheduled"]);
    expect(stateChange(failed)).toEqual(["check_run→check_triage"]);
    const routed = p.critique(JSON.stringify({ goto: "coding", reason: "count() miscounts a final newline" }));
    // Going back leaves the check open (not completed); coding reopens for its next iteration.
    expect(types(routed)).toEqual([
      "AgentOutputRecorded",
      "CheckRouted",
      "SessionStateChanged",
      "StageReopened",
      "IterationStarted",
      "StepScheduled",
    ]);
    expect(routed[4]).toMatchObject({ data: { stage: "coding", iteration: 2 } });
    const prompt = (routed[5]!.data as { input: { prompt: string } }).input.prompt;
    expect(prompt).toContain("Resolve these from the previous round");
    expect(prompt).toContain("check failed: count() miscounts a final newline");
    expect(p.state.stages.completed).not.toContain("check");
    p.draft({ [A.codeMetadata]: FORGE_CODE_METADATA }, { changed: ["src/count.js"] });
    p.critique(FORGE_CRITIQUES.codingPass);
    p.checks(false);
    expect(stateChange(p.critique(JSON.stringify({ goto: "coding", reason: "still wrong" })))).toEqual(["check_triage→coding_stopped"]);
  });

  it("a failed check named for the plan reopens the plan (a replan); the pipeline then comes forward again through coding", () => {
    const p = through("check");
    p.checks(false);
    const routed = p.critique(JSON.stringify({ goto: "plan", reason: "no task reads the file" }));
    expect(stateChange(routed)).toEqual(["check_triage→plan_draft"]);
    expect(routed.find((e) => e.type === "StageReopened")).toMatchObject({ data: { stage: "plan" } });
    // The plan's artifacts may be written again while it is open.
    expect((routed.at(-1)!.data as { input: { forge: { writes: string[] } } }).input.forge.writes).toEqual([A.plan]);
    p.draft({ [A.plan]: FORGE_PLAN });
    const planned = p.critique(FORGE_CRITIQUES.planPass);
    expect(stateChange(planned)).toEqual(["plan_critic→coding_draft"]);
    expect(types(planned)).toEqual([
      "AgentOutputRecorded",
      "CritiqueRecorded",
      "SessionStateChanged",
      "StageCompleted",
      "StageReopened",
      "StepScheduled",
    ]);
  });

  it("delivery: the report completes the session", () => {
    const p = through("delivery");
    const out = p.draft({ [A.deliveryReport]: "# Delivered\n" });
    expect(types(out)).toEqual([
      "AgentOutputRecorded",
      "WorkspaceCommitted",
      "ArtifactRecorded",
      "SessionStateChanged",
      "StageCompleted",
      "SessionFinalized",
    ]);
    expect(out.at(-1)).toMatchObject({ data: { outcome: "completed", unresolved: [] } });
    expect(foldTask(p.history)).toMatchObject({
      status: "finished",
      outcome: "completed",
      stages: { completed: ["idea", "prd", "design", "plan", "coding", "check", "delivery"] },
    });
  });

  it("an actor that writes no required artifact, or an agent that gave up, waits for a person; retry re-enters the stage", () => {
    const p = new Pipeline({ gates: [] });
    const out = p.draft({});
    expect(stateChange(out)).toEqual(["idea_draft→agent_failed"]);
    expect(out.find((e) => e.type === "PersonNeeded")).toMatchObject({
      data: { cause: "agent_failed", resume: "idea_draft", errorClass: "tool_error" },
    });
    expect(types(p.do({ type: "Choose", choice: "retry" }))).toEqual(["PersonChose", "SessionStateChanged", "StepScheduled"]);
    const gave = p.do(gaveUp(p.state.step!.id, "provider_network_error", "HTTP 503"));
    expect(stateChange(gave)).toEqual(["idea_draft→agent_failed"]);
    const aborted = p.do({ type: "Choose", choice: "abort" });
    expect(aborted.at(-1)).toMatchObject({ type: "SessionFinalized", data: { outcome: "failed", errorClass: "provider_network_error" } });
  });

  it("the budget is reserved before each call: no call past maxCalls (the reason names the limit), tokens reserved per call, wall time", () => {
    const calls = new Pipeline({ gates: [], budget: { maxCalls: 1 } });
    const out = calls.draft({ [A.idea]: "# Idea\n" });
    expect(types(out)).toContain("BudgetExhausted");
    expect(out.at(-1)).toMatchObject({ type: "SessionFinalized", data: { outcome: "budget_exhausted" } });
    expect(stateChange(out)).toEqual(["idea_draft→budget_exhausted"]);
    expect(out.find((e) => e.type === "SessionStateChanged")?.data).toMatchObject({ reason: "budget exhausted (calls)" });
    expect(out.at(-1)).toMatchObject({ data: { reason: "budget exhausted (calls)" } });
    // With a reservation of 100 tokens per call, 950 spent of 1000 leaves no room for another.
    const tokens = new Pipeline({ gates: [], budget: { maxTokens: 1000, reserveTokensPerCall: 100 } });
    const stepId = tokens.state.step!.id;
    const blob = blobRef("# Idea\n");
    const spent = tokens.do({
      type: "StepSucceeded",
      stepId,
      attempt: 1,
      output: agentOutput("ok", {
        usage: { inputTokens: 900, outputTokens: 50 },
        forge: { artifacts: [{ path: A.idea, hash: blob.blob, blob, size: blob.size }], refusedWrites: [], held: [], warnings: [] },
      }),
      rawText: "ok",
    });
    expect(spent.find((e) => e.type === "BudgetExhausted")).toMatchObject({ data: { limit: "tokens", used: { tokens: 950 } } });
  });

  it("only an agent call is paid for: with every call spent, a person's gate and the checks are still entered", () => {
    // One call, the idea's: the gate after it waits for a person instead of ending the session.
    const gate = new Pipeline({ gates: ["idea"], budget: { maxCalls: 1 } });
    const waiting = gate.draft({ [A.idea]: "# Idea\n" });
    expect(stateChange(waiting)).toEqual(["idea_draft→idea_review"]);
    expect(types(waiting)).not.toContain("BudgetExhausted");
    // Nine calls take the pipeline through the coding critic; the checks run no agent.
    const checks = through("check", { budget: { maxCalls: 9 } });
    expect(checks.state.fsm).toBe("check_run");
    expect(lastStep(checks)).toMatchObject({ kind: "commands", input: { state: "check_run" } });
    expect(checks.state.usage.calls).toBe(9);
  });

  it("resume after the budget ran out: refused with the sums while the budget is still spent; with a larger one the interrupted stage runs again", () => {
    const p = new Pipeline({ gates: [], budget: { maxCalls: 1 } });
    const out = p.draft({ [A.idea]: "# Idea\n" });
    expect(foldTask(p.history)).toMatchObject({ status: "finished", outcome: "budget_exhausted" });
    // The idea was drafted; the PRD's first call is the one the budget could not pay for.
    expect(out.find((e) => e.type === "BudgetExhausted")).toMatchObject({ data: { state: "prd_draft" } });
    expect(() => p.do({ type: "Resume", state: "idea_draft" })).toThrow(
      "the budget is spent (calls: 1 calls, 0 tokens so far): resume with a larger budget",
    );
    const resumed = p.do({ type: "Resume", state: "prd_draft", budget: { maxCalls: 5 } });
    expect(resumed[0]).toEqual({ type: "SessionResumed", data: { from: "budget_exhausted", state: "prd_draft", budget: { maxCalls: 5 } } });
    expect(stateChange(resumed)).toEqual(["budget_exhausted→prd_draft"]);
    expect(resumed.at(-1)).toMatchObject({ type: "StepScheduled", data: { input: { state: "prd_draft" } } });
    expect(p.state).toMatchObject({ status: "active", config: { budget: { maxCalls: 5 } } });
    // Resuming what runs, or what finished well, is refused.
    expect(() => p.do({ type: "Resume", state: "prd_draft" })).toThrow('the session is still running (in "prd_draft"): nothing to resume');
  });

  it("edits: only at the stage's own wait state, on the current version; a completed stage refuses and the refusal is an event", () => {
    const p = new Pipeline({ gates: ["prd"] });
    const idea = blobRef("# Idea\n");
    p.draft({ [A.idea]: "# Idea\n" });
    // The idea stage completed (no gate on it): its artifact is immutable.
    const refused = p.do(edit(A.idea, "x", idea.blob));
    expect(refused).toEqual([
      expect.objectContaining({ type: "ArtifactWriteRefused", data: expect.objectContaining({ by: "person", paths: [A.idea] }) }),
    ]);
    // While the PRD is drafted (not waiting), no edit.
    expect(() => p.do(edit(A.prd, "x", null))).toThrow(/waits for a person/);
    p.draft(PRD);
    const current = p.state.pipeline.artifacts[A.prd]!.hash;
    expect(() => p.do(edit(A.prd, "x", "0".repeat(64)))).toThrow(/stale edit/);
    expect(() => p.do(edit("src/x.js", "x", null))).toThrow(/no artifact/);
    const edited = p.do(edit(A.prd, "# Mine\n", current));
    expect(edited).toEqual([expect.objectContaining({ type: "ArtifactEdited" })]);
    // The next redraft protects the person's edit and writes it first.
    const fed = p.do({ type: "GiveFeedback", text: "shorter" });
    const input = (
      fed.find((e) => e.type === "StepScheduled")!.data as { input: { forge: { protect: unknown[]; materialize: unknown[] } } }
    ).input.forge;
    expect(input.protect).toEqual([expect.objectContaining({ path: A.prd })]);
    expect(input.materialize).toEqual([expect.objectContaining({ path: A.prd })]);
  });
});

/**
 * A modify fork of a delivered pipeline, as modifySession records it (server/tasks/fork.ts):
 * the fork, the change request, then the workflow's modify entry (the triage).
 */
function modified(): Pipeline {
  const p = through("delivery");
  p.draft({ [A.deliveryReport]: "# Report\n" });
  const fork: AppEvent[] = [
    {
      type: "SessionForked",
      data: {
        parentId: "base",
        atVersion: p.history.length,
        reason: "modify",
        title: "Forge (modify)",
        workflow: "forge",
        state: "completed",
      },
    },
    {
      type: "ChangeRequested",
      data: {
        text: "Count lines too.",
        baseSessionId: "base",
        baseCommit: "b".repeat(40),
        fingerprint: { files: 2, digest: "d", changedSinceBase: [], addedSinceBase: [], removedSinceBase: [] },
        basePlan: {},
      },
    },
  ];
  expectValidEvents(fork);
  p.history.push(...recorded(fork, p.history.length + 1));
  p.do({ type: "Continue", state: forge.modify!.state, reason: "change requested", iterate: false });
  return p;
}

const changeRequest = (layers: string[]) =>
  JSON.stringify({
    summary: "Count lines",
    layers,
    risk: "low",
    components: [],
    constraints: [],
    acceptanceCriteria: ["lines are counted"],
  });

describe("forge: a modify session", () => {
  it("the triage's change request picks the earliest layer it touches; an invalid one stops for a person", () => {
    const layer = (layers: string[]) => {
      const p = modified();
      return stateChange(p.draft({ [A.changeRequest]: changeRequest(layers) }));
    };
    expect(layer(["design", "code"])).toEqual(["modify_triage→design_draft"]);
    expect(layer(["plan"])).toEqual(["modify_triage→plan_draft"]);
    expect(layer(["prd", "plan"])).toEqual(["modify_triage→prd_draft"]);
    expect(layer(["code"])).toEqual(["modify_triage→coding_draft"]);
    expect(layer([])).toEqual(["modify_triage→change_stopped"]);
  });

  it("its steps are told they modify; after the checks the change report, not the delivery report, is written, given the base and the plan's change", () => {
    const p = modified();
    expect(lastStep(p).input.forge).toMatchObject({ stage: "change", modifying: true });
    p.draft({ [A.changeRequest]: changeRequest(["code"]) });
    expect(lastStep(p).input.forge).toMatchObject({ stage: "coding", modifying: true });
    p.draft({ [A.codeMetadata]: FORGE_CODE_METADATA }, { changed: ["src/count.js", A.codeMetadata] });
    p.critique(FORGE_CRITIQUES.codingPass);
    expect(stateChange(p.checks(true))).toEqual(["check_run→change_report"]);
    // The change report is given the base commit and how the plan moved since it (the base had none: 5 tasks added).
    expect(lastStep(p).input.forge).toMatchObject({
      patch: { baseCommit: "b".repeat(40), tasks: { kept: 0, changed: 0, added: 5, removed: 0 } },
    });
    // A session that modifies nothing is told nothing of it.
    expect(lastStep(through("prd")).input.forge).not.toHaveProperty("modifying");
  });
});

describe("forge: a person's commands, exactly what each records or refuses", () => {
  it("cancel ends the session with the reason as its diagnosis; a result for another step than the current one decides nothing", () => {
    const p = new Pipeline({ gates: [] });
    expect(p.do(gaveUp("not-the-current-step", "provider_network_error", "HTTP 503"))).toEqual([]);
    expect(p.do({ type: "StepSucceeded", stepId: "not-the-current-step", attempt: 1, output: agentOutput("x"), rawText: "x" })).toEqual([]);
    const out = p.do({ type: "Cancel", reason: "not needed any more" });
    expect(out.find((e) => e.type === "SessionFinalized")).toMatchObject({
      data: { outcome: "cancelled", errorClass: "cancelled", diagnosis: "not needed any more" },
    });
  });

  it("continue: to a state the workflow has, with its reason and no new iteration unless asked; an unknown state is refused by name", () => {
    const p = new Pipeline({ gates: [] });
    expect(thrown(() => p.do({ type: "Continue", state: "nowhere", reason: "r", iterate: false }))).toMatchObject({
      code: "INVALID_INPUT",
      message: 'workflow forge has no state "nowhere"',
    });
    const out = p.do({ type: "Continue", state: "prd_draft", reason: "skip the idea", iterate: false });
    expect(out[0]).toEqual({ type: "SessionStateChanged", data: { from: "idea_draft", to: "prd_draft", reason: "skip the idea" } });
    expect(types(out)).not.toContain("IterationStarted");
  });

  it("resume: refused for a session that does not exist or that finished well, with the reason; a resume records why and starts no iteration", () => {
    expect(thrown(() => decide(foldTask([]), { type: "Resume", state: "idea_draft" }, testContext(forge)))).toMatchObject({
      code: "NOT_FOUND",
      message: "no such task session",
    });
    const p = through("delivery");
    p.draft({ [A.deliveryReport]: "# Report\n" });
    expect(foldTask(p.history)).toMatchObject({ status: "finished", outcome: "completed" });
    expect(thrown(() => p.do({ type: "Resume", state: "delivery" }))).toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "the session finished completed, it was not interrupted: fork, revert or modify it instead of resuming",
    });

    const spent = new Pipeline({ gates: [], budget: { maxCalls: 1 } });
    spent.draft({ [A.idea]: "# Idea\n" });
    expect(thrown(() => spent.do({ type: "Resume", state: "prd_draft" }))).toMatchObject({
      code: "PRECONDITION_FAILED",
      details: { limit: "calls", used: { calls: 1, tokens: 0 } },
    });
    const resumed = spent.do({ type: "Resume", state: "prd_draft", budget: { maxCalls: 5 } });
    expect(resumed[1]).toEqual({
      type: "SessionStateChanged",
      data: { from: "budget_exhausted", to: "prd_draft", reason: "resumed after budget_exhausted" },
    });
    expect(types(resumed)).not.toContain("IterationStarted");
  });

  it("edits: the refusals say why, with the state or the current version; an edit that changes nothing is refused; a JSON artifact's edit carries its parsed value", () => {
    const p = new Pipeline({ gates: ["idea", "prd"] });
    p.draft({ [A.idea]: "# Idea\n" });
    // At the idea's gate (an edit-only gate): the PRD is not the stage waiting.
    expect(thrown(() => p.do(edit(A.prd, "x", null)))).toEqual({
      code: "CONFLICT",
      message: `${A.prd} can be edited while the prd draft waits for a person; the session is in "idea_review"`,
      details: { state: "idea_review" },
    });
    expect(thrown(() => p.do({ type: "GiveFeedback", text: "more" }))).toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "this gate takes edits only: edit the draft, then pass",
    });
    const idea = p.state.pipeline.artifacts[A.idea]!.hash;
    expect(thrown(() => p.do(edit(A.idea, "# Idea\n", idea)))).toMatchObject({
      code: "INVALID_INPUT",
      message: "the edit changes nothing",
    });
    expect(p.do({ type: "PassGate" })[0]).toEqual({ type: "GatePassed", data: { stage: "idea" } });
    expect(p.do(edit(A.idea, "x", idea))).toEqual([
      {
        type: "ArtifactWriteRefused",
        data: { stage: "idea", by: "person", paths: [A.idea], reason: "stage idea is complete: its artifacts are immutable" },
      },
    ]);
    // While the PRD is drafted: nothing waits for a person.
    expect(thrown(() => p.do({ type: "PassGate" }))).toEqual({
      code: "CONFLICT",
      message: 'nothing to pass: the session is in "prd_draft"',
      details: { state: "prd_draft" },
    });
    expect(thrown(() => p.do({ type: "GiveFeedback", text: "more" }))).toMatchObject({
      message: 'nothing to give feedback on: the session is in "prd_draft"',
    });
    expect(thrown(() => p.do({ type: "Choose", choice: "abort" }))).toMatchObject({
      message: 'nothing to abort: the session is in "prd_draft"',
    });
    expect(thrown(() => p.do(edit(A.requirements, "[]", "0".repeat(64))))).toMatchObject({ code: "CONFLICT" });
    p.draft(PRD);
    const current = p.state.pipeline.artifacts[A.requirements]!.hash;
    expect(thrown(() => p.do(edit(A.requirements, "[]", "0".repeat(64))))).toEqual({
      code: "CONFLICT",
      message: `stale edit: ${A.requirements} changed since it was opened (it is now ${current.slice(0, 12)})`,
      details: { current },
    });
    expect(thrown(() => p.do(edit(A.design, "# D\n", "0".repeat(64))))).toMatchObject({ code: "CONFLICT" });
    const json = p.do(edit(A.requirements, FORGE_REQUIREMENTS_V1, current))[0]!;
    expect(json.data).toMatchObject({ path: A.requirements, json: JSON.parse(FORGE_REQUIREMENTS_V1) });
    const prd = p.state.pipeline.artifacts[A.prd]!.hash;
    const md = p.do(edit(A.prd, "# Mine\n", prd))[0]!;
    expect(md.data).not.toHaveProperty("json");
  });

  it("a stale edit of an artifact the stage has not written says it is absent", () => {
    const p = new Pipeline({ gates: ["prd"] });
    p.draft({ [A.idea]: "# Idea\n" });
    p.draft(PRD);
    // The PRD's gate as it would be had the draft left features.json out.
    const atGate = p.state;
    const { [A.features]: _features, ...artifacts } = atGate.pipeline.artifacts;
    const state = { ...atGate, pipeline: { ...atGate.pipeline, artifacts } };
    expect(thrown(() => decide(state, edit(A.features, "[]", "0".repeat(64)), testContext(forge)))).toEqual({
      code: "CONFLICT",
      message: `stale edit: ${A.features} changed since it was opened (it is now absent)`,
      details: { current: null },
    });
  });

  it("abort records the failure it answers, or none; retry and guidance are refused unless an agent failed; guidance is critical feedback, trimmed, and needs a text", () => {
    const atGate = new Pipeline({ gates: ["idea"] });
    atGate.draft({ [A.idea]: "# Idea\n" });
    expect(thrown(() => atGate.do({ type: "Choose", choice: "retry" }))).toEqual({
      code: "CONFLICT",
      message: 'nothing to retry: no failed agent waits for a person (the session is in "idea_review")',
      details: { state: "idea_review" },
    });
    const aborted = atGate.do({ type: "Choose", choice: "abort" });
    expect(aborted[0]).toEqual({ type: "PersonChose", data: { choice: "abort" } });
    expect(aborted.find((e) => e.type === "SessionFinalized")).toMatchObject({
      data: { outcome: "failed", errorClass: null, diagnosis: "aborted by a person" },
    });

    const failed = new Pipeline({ gates: [] });
    failed.do(gaveUp(failed.state.step!.id, "provider_network_error", "HTTP 503"));
    expect(thrown(() => failed.do({ type: "Choose", choice: "guidance", text: "   " }))).toMatchObject({
      code: "INVALID_INPUT",
      message: "guidance needs a text: what should the agent do differently?",
    });
    const guided = failed.do({ type: "Choose", choice: "guidance", text: "  use the other API  " });
    expect(guided.slice(0, 3)).toEqual([
      { type: "PersonChose", data: { choice: "guidance" } },
      { type: "FeedbackGiven", data: { stage: "idea", iteration: 1, source: "guidance", severity: "critical", text: "use the other API" } },
      { type: "SessionStateChanged", data: { from: "agent_failed", to: "idea_draft", reason: "guidance by a person" } },
    ]);
    failed.do(gaveUp(failed.state.step!.id, "provider_network_error", "HTTP 503 again"));
    expect(failed.do({ type: "Choose", choice: "abort" }).find((e) => e.type === "SessionFinalized")).toMatchObject({
      data: { errorClass: "provider_network_error", diagnosis: "aborted by a person after: HTTP 503 again" },
    });
  });

  it("at a gate that takes no abort, an abort is refused as nothing to abort, not as an edit-only gate", () => {
    const p = new Pipeline({ gates: ["idea"] });
    p.draft({ [A.idea]: "# Idea\n" });
    const gate = forge.states.idea_review!;
    if (gate.type !== "wait") throw new Error("idea_review is a wait state");
    const { abort: _abort, ...on } = gate.on;
    const noAbort = { ...forge, states: { ...forge.states, idea_review: { ...gate, on } } };
    expect(thrown(() => decide(p.state, { type: "Choose", choice: "abort" }, testContext(noAbort)))).toEqual({
      code: "CONFLICT",
      message: 'nothing to abort: the session is in "idea_review"',
      details: { state: "idea_review" },
    });
  });

  it("a command the workflow has no decision for is an internal error naming it", () => {
    const p = new Pipeline({ gates: [] });
    expect(thrown(() => p.do({ type: "Teleport" } as unknown as TaskCommand))).toEqual({
      code: "INTERNAL",
      message: 'the workflow has no decision for {"type":"Teleport"}',
      details: undefined,
    });
  });
});

type Scheduled = {
  kind: string;
  timeoutMs: number;
  maxAttempts: number;
  backoffMs?: number[];
  input: {
    workspace: Record<string, unknown>;
    diff: unknown;
    commands: unknown[];
    commandTimeoutMs?: number;
    forge: { writes: string[]; collect: string[]; attach: { path: string }[]; feedbackHistory: string };
  };
};
const scheduled = (events: readonly { type: string; data: unknown }[]) =>
  events.filter((e) => e.type === "StepScheduled").map((e) => e.data as Scheduled & { input: Record<string, unknown> });
const lastStep = (p: Pipeline) => scheduled(p.history).at(-1)!;
const LIMITS = { stepTimeoutMs: 1_234, maxAttempts: 2, backoffMs: [5, 50], commandTimeoutMs: 777 };

describe("forge: what each step is scheduled with, and who is told", () => {
  const promptOf = (events: AppEvent[]) =>
    (events.find((e) => e.type === "StepScheduled")!.data as { input: { prompt: string } }).input.prompt;

  it("a stage's prompt: the Forge's preamble and the idea (its stable part), then the instruction, the stage and its iteration, what to write, a person's edits to keep, and the stage's feedback", () => {
    const p = new Pipeline({ gates: ["prd"] });
    const { prompt: whole, promptStableChars } = (p.history[4]!.data as { input: { prompt: string; promptStableChars: number } }).input;
    const preamble = `${FORGE_DEFINITION.preamble}\n\n`;
    expect(whole.slice(0, promptStableChars)).toBe(`${preamble}Idea:\n${IDEA}\n`);
    const first = whole.slice(preamble.length);
    const lines = first.split("\n");
    expect([...lines.slice(0, 3), ...lines.slice(4)]).toEqual([
      "Idea:",
      IDEA,
      "",
      "",
      "Stage: idea (Idea), iteration 1 of at most 5.",
      "Write: .forge/idea.md. Anything outside .forge/idea.md is discarded.",
    ]);
    p.draft({ [A.idea]: "# Idea\n" });
    p.draft(PRD);
    p.do(edit(A.prd, "# PRD, as a person wrote it\n", blobRef("# PRD\n").blob));
    const redraft = promptOf(p.do({ type: "GiveFeedback", text: "Say who it is for." }));
    expect(redraft).toContain(
      [
        "Stage: prd (Requirements (PRD)), iteration 2 of at most 5.",
        "Write: .forge/prd.md, .forge/requirements.json, .forge/features.json. Anything outside .forge/prd.md .forge/requirements.json .forge/features.json is discarded.",
        "A person edited .forge/prd.md: keep their text exactly as it is.",
        "",
        "Feedback on this stage so far (oldest first):",
        "- [person, iteration 1] Say who it is for.",
      ].join("\n"),
    );
    p.draft(PRD);
    // The critic reads the stage and its feedback; it writes nothing, so it is told nothing about writing.
    const critic = promptOf(p.do({ type: "PassGate" }));
    expect(critic).toContain(
      "Stage: prd (Requirements (PRD)), iteration 2 of at most 5.\n\nFeedback on this stage so far (oldest first):\n- [person, iteration 1] Say who it is for.",
    );
    expect(critic).not.toContain("Write:");
    expect(critic).not.toContain("A person edited");
    // The next stage hears nothing of this one's feedback.
    const design = promptOf(p.critique(FORGE_CRITIQUES.prdPass));
    expect(design).toContain("Stage: design (");
    expect(design).not.toContain("Feedback on this stage");

    const failed = new Pipeline({ gates: [] });
    failed.do(gaveUp(failed.state.step!.id, "provider_network_error", "HTTP 503"));
    const guided = promptOf(failed.do({ type: "Choose", choice: "guidance", text: "use the other API" }));
    expect(guided).toContain("\n- [guidance, critical, iteration 1] use the other API");
  });

  it("an agent step carries the task's limits and the branch prefix; a check step carries the coder's checks (no other step does), the command timeout and one attempt", () => {
    const project = { ...config().project, branchPrefix: "cats/" };
    const p = through("check", { limits: LIMITS, project });
    const [draft] = scheduled(p.history);
    expect(draft).toMatchObject({ kind: "agent", timeoutMs: 1_234, maxAttempts: 2, backoffMs: [5, 50] });
    expect(draft!.input.workspace).toMatchObject({ branchPrefix: "cats/" });
    expect(draft!.input.commands).toEqual([]);
    expect(draft!.input).not.toHaveProperty("commandTimeoutMs");
    const check = lastStep(p);
    expect(check).toMatchObject({ kind: "commands", maxAttempts: 1, input: { commandTimeoutMs: 777 } });
    expect(check).not.toHaveProperty("backoffMs");
    expect(check.input.commands).toEqual([{ argv: JSON.parse(FORGE_CODE_METADATA).checks[0].argv, expect: { exitCode: 0 } }]);
    // The coder's checks are the check step's alone: the coding critic, scheduled after they were written, gets none.
    expect(scheduled(p.history).at(-2)).toMatchObject({ kind: "agent", input: { state: "coding_critic", commands: [] } });
    // Without a branch prefix (or limits): nothing of them in the input.
    const plain = new Pipeline({ gates: [] });
    expect(lastStep(plain).input.workspace).not.toHaveProperty("branchPrefix");
    expect(lastStep(plain)).not.toHaveProperty("backoffMs");
  });

  it("a critic writes and collects nothing; only the code's critic gets the diff; a draft attaches its own stage's and the completed stages' artifacts, never an open stage's; a stage completes with its own artifacts", () => {
    const p = through("prd");
    p.draft(PRD);
    const prdCritic = lastStep(p);
    expect(prdCritic.input.forge).toMatchObject({ writes: [], collect: [] });
    expect(prdCritic.input.diff).toBeNull();
    expect(prdCritic.input.forge.attach.map((a) => a.path).sort()).toEqual([A.features, A.idea, A.prd, A.requirements].sort());
    expect(prdCritic.input.forge.feedbackHistory).toBe("[]\n");
    // A stage completed freezes its own artifacts, not the earlier stages' too.
    const completed = (q: Pipeline, stage: string) =>
      q.history.find((e) => e.type === "StageCompleted" && (e.data as { stage: string }).stage === stage)!.data as {
        stage: string;
        artifacts: { path: string; hash: string }[];
      };
    expect(completed(p, "idea")).toEqual({ stage: "idea", artifacts: [{ path: A.idea, hash: blobRef("# Idea\n").blob }] });

    const c = through("coding");
    const codingDraft = lastStep(c);
    // The coder drafts the code (it may write anything): it is not the code's critic, so it gets no diff.
    expect(c.state.lastDiff).toEqual(blobRef("diff"));
    expect(codingDraft.input.diff).toBeNull();
    expect(codingDraft.input.forge.writes).toEqual(forge.stages!.coding!.writes);
    expect(codingDraft.input.forge.collect).toEqual(forge.stages!.coding!.artifacts);
    c.draft({ [A.codeMetadata]: FORGE_CODE_METADATA }, { changed: ["src/count.js", A.codeMetadata] });
    expect(lastStep(c).input.diff).toEqual(blobRef("diff"));

    // A replan: the plan's redraft reads every completed stage's artifacts, the code's too.
    const r = through("check");
    r.checks(false);
    r.critique(JSON.stringify({ goto: "plan", reason: "no task reads the file" }));
    expect(r.state.stages.completed).toContain("coding");
    expect(lastStep(r).input.forge.attach.map((a) => a.path)).toEqual(expect.arrayContaining([A.plan, A.codeMetadata]));
    expect(completed(r, "prd").artifacts.map((a) => a.path)).toEqual([A.prd, A.requirements, A.features]);

    // Back from the design's gate to the PRD: the design, drafted but open, is not attached to the PRD's redraft.
    const back = through("design", { gates: ["design"] });
    back.draft({ [A.design]: "# Design\n", [A.designSpec]: FORGE_DESIGN_JSON });
    expect(back.state.fsm).toBe("design_review");
    back.do({ type: "Continue", state: "prd_draft", reason: "the PRD first", iterate: true });
    expect(back.state.stages.completed).toEqual(["idea"]);
    expect(
      lastStep(back)
        .input.forge.attach.map((a) => a.path)
        .sort(),
    ).toEqual([A.features, A.idea, A.prd, A.requirements].sort());
  });

  it("the project's webhook hears when a person is needed or the session failed; not when it completes or is cancelled, nor without notify", () => {
    const webhooks = (events: readonly AppEvent[]) => scheduled(events).filter((s) => s.kind === "webhook");
    const p = new Pipeline({ gates: ["idea"], notify: true });
    const waiting = p.draft({ [A.idea]: "# Idea\n" });
    expect(waiting.find((e) => e.type === "SessionStateChanged")).toMatchObject({ data: { to: "idea_review", waitsFor: "person" } });
    expect(webhooks(waiting).map((w) => w.input)).toEqual([
      { projectId: "p", iteration: 1, attention: "waiting", state: "idea_review", outcome: null, reason: null },
    ]);
    p.do({ type: "PassGate" });
    p.do(gaveUp(p.state.step!.id, "provider_network_error", "HTTP 503"));
    const failed = p.do({ type: "Choose", choice: "abort" });
    expect(webhooks(failed).map((w) => w.input)).toEqual([
      {
        projectId: "p",
        iteration: 1,
        attention: "failed",
        state: "failed",
        outcome: "failed",
        reason: "aborted by a person after: HTTP 503",
      },
    ]);
    // A state change that does not wait for a person says nothing of one.
    expect(
      p.history.filter((e) => e.type === "SessionStateChanged" && (e.data as { to: string }).to === "prd_draft").map((e) => e.data),
    ).toEqual([expect.not.objectContaining({ waitsFor: expect.anything() })]);

    const cancelled = new Pipeline({ gates: [], notify: true }).do({ type: "Cancel", reason: "stop" });
    expect(webhooks(cancelled)).toEqual([]);
    const silent = new Pipeline({ gates: ["idea"] });
    expect(webhooks(silent.draft({ [A.idea]: "# Idea\n" }))).toEqual([]);
  });
});

describe("transition: attention and the budget", () => {
  it("who needs a person after an outcome: nobody after a success or a cancel; an escalation at the iteration cap; a failure otherwise", () => {
    expect(["approved", "done", "completed", "cancelled"].map(attentionOf)).toEqual([null, null, null, null]);
    expect(attentionOf("max_iterations_reached")).toBe("escalated");
    expect(["failed", "budget_exhausted", "review_schema_invalid"].map(attentionOf)).toEqual(["failed", "failed", "failed"]);
  });

  it("the budget: calls, tokens (spent or reserved past the limit; exactly at it is spent), wall time since the start", () => {
    const base = new Pipeline({ gates: [] }).state;
    const at = (budget: Budget, usage: { calls: number; tokens: number }, startedAtMs: number | null, now?: number) =>
      budgetSpent(
        { ...testContext(forge), ...(now !== undefined ? { now: () => now } : { now: undefined }) },
        {
          ...base,
          config: { ...base.config, budget },
          usage: { ...base.usage, ...usage },
          startedAtMs,
        },
      );
    expect(at({ maxTokens: 100 }, { calls: 0, tokens: 99 }, null)).toBeNull();
    expect(at({ maxTokens: 100 }, { calls: 0, tokens: 100 }, null)).toMatchObject({ limit: "tokens", used: { tokens: 100 } });
    expect(at({ maxTokens: 100, reserveTokensPerCall: 10 }, { calls: 0, tokens: 90 }, null)).toBeNull();
    expect(at({ maxTokens: 100, reserveTokensPerCall: 10 }, { calls: 0, tokens: 91 }, null)).toMatchObject({ limit: "tokens" });
    expect(at({ maxCalls: 3 }, { calls: 2, tokens: 0 }, null)).toBeNull();
    expect(at({ maxCalls: 3 }, { calls: 3, tokens: 0 }, null)).toMatchObject({ limit: "calls" });
    expect(at({ maxWallMs: 1_000 }, { calls: 0, tokens: 0 }, 5_000, 5_999)).toBeNull();
    expect(at({ maxWallMs: 1_000 }, { calls: 0, tokens: 0 }, 5_000, 6_000)).toEqual({
      limit: "wall",
      used: { calls: 0, tokens: 0, wallMs: 1_000 },
      budget: { maxWallMs: 1_000 },
    });
    // No clock, or no start recorded: no wall time spent.
    expect(at({ maxWallMs: 1_000 }, { calls: 0, tokens: 0 }, 5_000)).toBeNull();
    expect(at({ maxCalls: 9 }, { calls: 0, tokens: 0 }, null, 10_000)).toBeNull();
  });
});
