// Reading a step's output (server/workflow/interpret.ts; drafts, critiques and routes by
// Forge's readers, server/forge/outputs.ts), called directly: the events each
// output records, the trigger it fires and the failure it carries, with the exact texts a
// person reads (diagnoses, refusal reasons), for commands, strict JSON, an executor's work
// and a staged workflow's drafts and critiques.
import { describe, expect, it } from "vitest";
import { FORGE_DESIGN_JSON } from "../../server/demo/forge-content";
import { ARTIFACT_PATHS as A, parseArtifact } from "../../server/forge/artifacts";
import type { AppEvent } from "../../server/events/catalog";
import type { AgentStepOutput } from "../../server/events/step-contract";
import { forgeExtension } from "../../server/forge/extension";
import { BUILTIN_WORKFLOWS, foldTask, type ActiveTask } from "../../server/task-engine";
import type { TaskCommandOf } from "../../server/workflow/commands";
import { ZWorkflowDefinition, type StateSpec, type WorkflowDefinition } from "../../server/workflow/definition";
import type { Interpretation } from "../../server/workflow/engine";
import { interpret as engineInterpret } from "../../server/workflow/interpret";
import {
  agentOutput,
  BASE_COMMIT,
  blobRef,
  buildCommit,
  commandResult,
  commandsOutput,
  expectValidEvents,
  recorded,
  type TaskConfig,
} from "../helpers/decider";

const STEP = "22222222-0000-4000-8000-000000000001";

/** The engine's interpret with the application's extension (Forge reads drafts, critiques and routes). */
function interpretOutput(
  state: ActiveTask,
  stateSpec: Extract<StateSpec, { type: "step" }>,
  cmd: TaskCommandOf<"StepSucceeded">,
  def: WorkflowDefinition,
): Interpretation {
  return engineInterpret(state, stateSpec, cmd, def, forgeExtension);
}

/** interpret, with every event it emits checked against the catalog (as an append would). */
const interpret: typeof interpretOutput = (...args) => {
  const out = interpretOutput(...args);
  expectValidEvents(out.events);
  return out;
};
const forge = BUILTIN_WORKFLOWS.forge!;
const planning = BUILTIN_WORKFLOWS.planning!;
const reviewLoop = BUILTIN_WORKFLOWS.review_loop!;

function task(def: WorkflowDefinition, extra: Partial<TaskConfig> = {}, events: AppEvent[] = []): ActiveTask {
  const config: TaskConfig = {
    workflow: def.id,
    workflowVersion: def.version,
    mode: "implementation",
    prompt: "A word counter.",
    maxIterations: 3,
    project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [] },
    agents: { planner: { id: "planner" }, coder: { id: "coder" }, reviewer: { id: "reviewer" }, executor: { id: "executor" } },
    ...extra,
  };
  expectValidEvents(events);
  const s = foldTask(
    recorded([
      { type: "SessionCreated", data: { title: "T", workflow: def.id, state: def.initial } },
      { type: "TaskStarted", data: config },
      ...events,
    ]),
  );
  if (s.status !== "active") throw new Error("the task is not active");
  return s;
}

function stepState(def: WorkflowDefinition, name: string): Extract<StateSpec, { type: "step" }> {
  const s = def.states[name];
  if (s?.type !== "step") throw new Error(`${name} is not a step state of ${def.id}`);
  return s;
}

function stepSucceeded(output: TaskCommandOf<"StepSucceeded">["output"], extra: Partial<TaskCommandOf<"StepSucceeded">> = {}) {
  return {
    type: "StepSucceeded" as const,
    stepId: STEP,
    attempt: 1,
    output,
    rawText: output.kind === "agent" ? output.preview : null,
    ...extra,
  };
}

/** The one step state of `def` whose step has `output`. */
function stateWithOutput(def: WorkflowDefinition, output: string): Extract<StateSpec, { type: "step" }> {
  const found = Object.values(def.states).find((s) => s.type === "step" && s.step.output === output);
  if (!found || found.type !== "step") throw new Error(`${def.id} has no ${output} step`);
  return found;
}

describe("interpret: commands", () => {
  const testing = stateWithOutput(reviewLoop, "commands");

  it("all passed (exit code as expected): tests_passed, each command recorded with its index", () => {
    const out = interpret(
      task(reviewLoop),
      testing,
      stepSucceeded(commandsOutput([commandResult(["npm", "test"]), commandResult(["false"], { exitCode: 1, expectedExitCode: 1 })])),
      reviewLoop,
    );
    expect(out.trigger).toBe("tests_passed");
    expect(out.failure).toBeUndefined();
    expect(out.events.map((e) => e.data)).toMatchObject([
      { index: 0, argv: ["npm", "test"], passed: true },
      { index: 1, argv: ["false"], passed: true },
    ]);
  });

  it("a failure names the first failed command: its reason, or its exit code; the class is the command's", () => {
    const refused = commandResult(["rm", "-rf", "x"], {
      status: "refused",
      exitCode: null,
      errorClass: "command_refused",
      reason: "not in the allowlist",
    });
    const out = interpret(
      task(reviewLoop),
      testing,
      stepSucceeded(commandsOutput([commandResult(["npm", "test"]), refused, commandResult(["npm", "run", "lint"], { exitCode: 2 })])),
      reviewLoop,
    );
    expect(out.trigger).toBe("tests_failed");
    expect(out.failure).toEqual({ errorClass: "command_refused", diagnosis: "rm -rf x: not in the allowlist" });
    expect(out.events.map((e) => (e.data as { passed: boolean }).passed)).toEqual([true, false, false]);

    const exited = interpret(
      task(reviewLoop),
      testing,
      stepSucceeded(commandsOutput([commandResult(["npm", "test"], { exitCode: 1 })])),
      reviewLoop,
    );
    expect(exited.failure).toEqual({ errorClass: "command_failed", diagnosis: "npm test: exit 1" });
  });

  it("a refused command fails even when its result carries the expected exit code", () => {
    const refused = commandResult(["rm", "-rf", "x"], {
      status: "refused",
      exitCode: 0,
      errorClass: "command_refused",
      reason: "not allowed",
    });
    const out = interpret(task(reviewLoop), testing, stepSucceeded(commandsOutput([refused])), reviewLoop);
    expect(out.trigger).toBe("tests_failed");
    expect(out.events.map((e) => (e.data as { passed: boolean }).passed)).toEqual([false]);
    expect(out.failure).toEqual({ errorClass: "command_refused", diagnosis: "rm -rf x: not allowed" });
  });

  it("no commands at all is a failure too", () => {
    const out = interpret(task(reviewLoop), testing, stepSucceeded(commandsOutput([])), reviewLoop);
    expect(out).toEqual({
      events: [],
      trigger: "tests_failed",
      failure: { errorClass: "command_failed", diagnosis: "the test plan had no commands" },
    });
  });
});

describe("interpret: agent output", () => {
  it("invalid strict JSON: the errors are recorded, and the diagnosis joins them with '; ', cut at 500 characters", () => {
    const review = stateWithOutput(reviewLoop, "review_verdict");
    const out = interpret(task(reviewLoop), review, stepSucceeded(agentOutput("not json at all")), reviewLoop);
    expect(out.trigger).toBe("schema_invalid");
    const errors = (out.events[0]!.data as { validationErrors: string[] }).validationErrors;
    expect(errors.length).toBeGreaterThan(0);
    expect(out.failure).toEqual({ errorClass: "schema_invalid", diagnosis: errors.join("; ").slice(0, 500) });

    const long = JSON.stringify({ decision: "approve", summary: "s", findings: Array.from({ length: 60 }, () => ({ nope: true })) });
    const cut = interpret(task(reviewLoop), review, stepSucceeded(agentOutput(long), { rawText: long }), reviewLoop);
    const many = (cut.events[0]!.data as { validationErrors: string[] }).validationErrors;
    expect(many.join("; ").length).toBeGreaterThan(500);
    expect(cut.failure?.diagnosis).toBe(many.join("; ").slice(0, 500));
  });

  it("a build records its commit; a staged draft's empty commit is not recorded", () => {
    const build = stateWithOutput(reviewLoop, "build");
    const commit = buildCommit("c1", [{ path: "a.js", status: "added" }]);
    const out = interpret(task(reviewLoop), build, stepSucceeded(agentOutput("built", { commit })), reviewLoop);
    expect(out.trigger).toBe("done");
    expect(out.events.map((e) => e.type)).toEqual(["AgentOutputRecorded", "WorkspaceCommitted"]);

    const empty = buildCommit("c2", []);
    const forgeOut = { artifacts: [], refusedWrites: [], held: [], warnings: [] };
    const state = task(forge, {}, [{ type: "StageStarted", data: { stage: "idea" } }]);
    const drafted = interpret(
      state,
      stepState(forge, "idea_draft"),
      stepSucceeded(agentOutput("x", { commit: empty, forge: forgeOut })),
      forge,
    );
    expect(drafted.events.map((e) => e.type)).not.toContain("WorkspaceCommitted");
    expect(drafted.events[0]).toMatchObject({ type: "AgentOutputRecorded", data: { parsed: null, validationErrors: [] } });
    const nonEmpty = interpret(
      state,
      stepState(forge, "idea_draft"),
      stepSucceeded(agentOutput("x", { commit: buildCommit("c3", [{ path: A.idea, status: "added" }]), forge: forgeOut })),
      forge,
    );
    expect(nonEmpty.events.map((e) => e.type)).toContain("WorkspaceCommitted");
  });

  it("a TaskSpec naming files outside the planner's manifest is invalid, with the globs and the files named", () => {
    const spec = {
      title: "Counter",
      description: "Count the words of a file.",
      acceptanceCriteria: ["counts words"],
      files: ["src/a.js", "secrets/key.txt", "docs/x.md"],
      tests: [],
    };
    const text = JSON.stringify(spec);
    const planner = { id: "planner", manifest: { allowedFiles: ["src/**", "test/**"] } };
    const out = interpret(
      task(planning, { agents: { planner, executor: { id: "executor" } } }),
      stepState(planning, "planning"),
      stepSucceeded(agentOutput(text), { rawText: text }),
      planning,
    );
    const problem = "files outside the planner's manifest (src/**, test/**): secrets/key.txt, docs/x.md";
    expect(out.trigger).toBe("task_spec_invalid");
    expect(out.events).toHaveLength(1);
    expect(out.events[0]!.data).toMatchObject({ parsed: spec, validationErrors: [problem] });
    expect(out.failure).toEqual({ errorClass: "schema_invalid", diagnosis: problem });
    const free = interpret(task(planning), stepState(planning, "planning"), stepSucceeded(agentOutput(text), { rawText: text }), planning);
    expect(free.trigger).toBe("task_spec_valid");
  });

  it("an executor's work is checked from git: nothing changed, files outside its manifest, files the TaskSpec does not name", () => {
    const executing = stepState(planning, "executing");
    const executor = { id: "executor", manifest: { allowedFiles: ["src/**"] } };
    const spec = {
      title: "Counter",
      description: "Count the words of a file.",
      acceptanceCriteria: ["counts words"],
      files: ["src/a.js"],
      tests: [],
    };
    const state = task(planning, { agents: { planner: { id: "planner" }, executor } }, [
      { type: "TaskSpecRecorded", data: { stepId: STEP, spec } },
    ]);
    const nothing = interpret(state, executing, stepSucceeded(agentOutput("done", { commit: buildCommit("c0", []) })), planning);
    expect(nothing.failure).toEqual({ errorClass: "tool_error", diagnosis: "no files changed: the TaskSpec was not carried out" });
    const commit = buildCommit("c1", [
      { path: "src/a.js", status: "modified" },
      { path: "src/b.js", status: "renamed", previousPath: "lib/b.js" },
    ]);
    const out = interpret(state, executing, stepSucceeded(agentOutput("done", { commit })), planning);
    const reasons = [
      "changed files outside the executor's manifest (src/**): lib/b.js",
      "changed files the TaskSpec does not name: src/b.js, lib/b.js",
    ];
    expect(out.trigger).toBe("execution_rejected");
    expect(out.events.at(-1)).toEqual({ type: "ExecutionRejected", data: { stepId: STEP, reasons } });
    expect(out.failure).toEqual({ errorClass: "tool_error", diagnosis: reasons.join("; ") });

    // Several globs and several files outside them: each list separated by commas.
    const twoGlobs = task(
      planning,
      { agents: { planner: { id: "planner" }, executor: { id: "executor", manifest: { allowedFiles: ["src/**", "test/**"] } } } },
      [{ type: "TaskSpecRecorded", data: { stepId: STEP, spec: { ...spec, files: ["src/a.js", "lib/b.js", "lib/c.js"] } } }],
    );
    const outside = buildCommit("c2", [
      { path: "lib/b.js", status: "added" },
      { path: "lib/c.js", status: "added" },
    ]);
    const rejected = interpret(twoGlobs, executing, stepSucceeded(agentOutput("done", { commit: outside })), planning);
    expect(rejected.events.at(-1)).toEqual({
      type: "ExecutionRejected",
      data: { stepId: STEP, reasons: ["changed files outside the executor's manifest (src/**, test/**): lib/b.js, lib/c.js"] },
    });
  });
});

describe("interpret: a failed check's triage, and steps that cannot answer", () => {
  const triage = stepState(forge, "check_triage");
  const commit = buildCommit("t1", [{ path: "notes.md", status: "added" }]);

  it("a route names the stage to go back to, after the output and the commit; one that is not the strict JSON fails the step", () => {
    const text = JSON.stringify({ goto: "plan", reason: "no task reads the file" });
    const out = interpret(task(forge), triage, stepSucceeded(agentOutput(text, { commit }), { rawText: text }), forge);
    expect(out.trigger).toBe("goto_plan");
    expect(out.events.map((e) => e.type)).toEqual(["AgentOutputRecorded", "WorkspaceCommitted", "CheckRouted"]);
    expect(out.events[0]!.data).toMatchObject({ parsed: null, validationErrors: [] });
    expect(out.events[2]!.data).toEqual({ stepId: STEP, goto: "plan", reason: "no task reads the file" });

    const bad = interpret(task(forge), triage, stepSucceeded(agentOutput("the plan, I think", { commit })), forge);
    expect(bad.trigger).toBe("step_failed");
    expect(bad.events.map((e) => e.type)).toEqual(["AgentOutputRecorded", "WorkspaceCommitted"]);
    const errors = (bad.events[0]!.data as { validationErrors: string[] }).validationErrors;
    expect(errors.length).toBeGreaterThan(0);
    expect(bad.failure).toEqual({ errorClass: "schema_invalid", diagnosis: errors.join("; ") });
  });

  it("a draft step outside any stage (which the loader refuses) and a commands step with an agent's output are internal errors", () => {
    const def = ZWorkflowDefinition.parse({
      id: "stageless",
      version: 1,
      title: "A draft without a stage",
      modes: ["implementation"],
      initial: "start",
      global: { cancel: "cancelled", step_failed: "cancelled" },
      states: {
        start: { type: "wait", on: { start: [{ target: "writing" }] } },
        writing: {
          type: "step",
          step: { role: "planner", output: "draft", phase: "draft", instruction: "Write it." },
          on: { done: [{ target: "cancelled" }] },
        },
        cancelled: { type: "terminal", outcome: "cancelled" },
      },
    });
    const internal = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return { code: (err as { code: string }).code, message: (err as Error).message };
      }
      throw new Error("expected an internal error");
    };
    expect(internal(() => interpretOutput(task(def), stepState(def, "writing"), stepSucceeded(agentOutput("x")), def))).toEqual({
      code: "INTERNAL",
      message: "workflow stageless: a draft step outside any stage",
    });
    const running = stateWithOutput(reviewLoop, "commands");
    expect(internal(() => interpretOutput(task(reviewLoop), running, stepSucceeded(agentOutput("x")), reviewLoop))).toEqual({
      code: "INTERNAL",
      message: "a commands step returned agent output",
    });
  });
});

describe("interpret: a staged workflow's drafts and critiques", () => {
  const draftOf = (artifacts: { path: string; text: string }[], extra: Partial<NonNullable<AgentStepOutput["forge"]>> = {}) =>
    agentOutput("drafted", {
      forge: {
        artifacts: artifacts.map((a) => ({ path: a.path, hash: blobRef(a.text).blob, blob: blobRef(a.text), size: a.text.length })),
        refusedWrites: [],
        held: [],
        warnings: [],
        ...extra,
      },
    });

  it("writes outside the stage are refused with the stage's globs; an empty markdown artifact is a problem; a missing one fails the step", () => {
    const state = task(forge, {}, [{ type: "StageStarted", data: { stage: "prd" } }]);
    const prdDraft = Object.entries(forge.states).find(([, s]) => s.type === "step" && s.stage === "prd" && s.step.output === "draft")![0];
    const out = interpret(
      state,
      stepState(forge, prdDraft),
      stepSucceeded(
        draftOf(
          [
            { path: A.prd, text: "" },
            { path: "notes.md", text: "n" },
          ],
          { refusedWrites: ["src/x.js"], warnings: ["unreadable"] },
        ),
      ),
      forge,
    );
    expect(out.events.find((e) => e.type === "ArtifactWriteRefused")?.data).toEqual({
      stage: "prd",
      stepId: STEP,
      by: "agent",
      paths: ["src/x.js"],
      reason: `the prd stage may write only ${A.prd} ${A.requirements} ${A.features}`,
    });
    const recordedArtifacts = out.events.filter((e) => e.type === "ArtifactRecorded").map((e) => e.data);
    expect(recordedArtifacts).toEqual([expect.objectContaining({ path: A.prd, problems: [`${A.prd} is empty`], stage: "prd" })]);
    expect(recordedArtifacts[0]).not.toHaveProperty("json");
    expect(out.events.find((e) => e.type === "ForgeWarning")?.data).toEqual({ stage: "prd", message: "unreadable" });
    expect(out.trigger).toBe("step_failed");
    expect(out.failure).toEqual({ errorClass: "tool_error", diagnosis: `the prd actor wrote no ${A.requirements}, ${A.features}` });
  });

  it("a stage that may write nothing says so when a write is refused; a draft without the runner's report records no warning", () => {
    const idea = forge.stages!.idea!;
    const readOnly = { ...forge, stages: { ...forge.stages, idea: { ...idea, writes: [] } } };
    const state = task(readOnly, {}, [{ type: "StageStarted", data: { stage: "idea" } }]);
    const refused = interpret(state, stepState(readOnly, "idea_draft"), stepSucceeded(draftOf([], { refusedWrites: [A.idea] })), readOnly);
    expect(refused.events.find((e) => e.type === "ArtifactWriteRefused")?.data).toMatchObject({
      paths: [A.idea],
      reason: "the idea stage may write only nothing",
    });

    const bare = interpret(state, stepState(forge, "idea_draft"), stepSucceeded(agentOutput("drafted")), forge);
    expect(bare.events.map((e) => e.type)).toEqual(["AgentOutputRecorded"]);
    expect(bare.trigger).toBe("step_failed");
    expect(bare.failure).toEqual({ errorClass: "tool_error", diagnosis: `the idea actor wrote no ${A.idea}` });
  });

  it("an artifact unchanged since its last version is not recorded again", () => {
    const idea = { path: A.idea, text: "the idea" };
    const state = task(forge, {}, [
      { type: "StageStarted", data: { stage: "idea" } },
      {
        type: "ArtifactRecorded",
        data: {
          stepId: STEP,
          stage: "idea",
          path: A.idea,
          hash: blobRef("the idea").blob,
          blob: blobRef("the idea"),
          size: 8,
          problems: [],
        },
      },
    ]);
    const out = interpret(state, stepState(forge, "idea_draft"), stepSucceeded(draftOf([idea])), forge);
    expect(out.events.map((e) => e.type)).toEqual(["AgentOutputRecorded"]);
    expect(out.trigger).toBe("done");
  });
});

describe("interpret: a critic's verdict", () => {
  const critic = stepState(forge, "design_critic");
  const critique = (decision: "pass" | "revise", findings: { id: string; severity: "blocking" | "major" | "minor"; message: string }[]) => {
    const text = JSON.stringify({ decision, summary: "The design", findings });
    return stepSucceeded(agentOutput(text), { rawText: text });
  };
  const artifact = (path: string, text: string): AppEvent => {
    const { json, problems } = parseArtifact(path, text);
    return {
      type: "ArtifactRecorded",
      data: {
        stepId: STEP,
        stage: "design",
        path,
        hash: blobRef(text).blob,
        blob: blobRef(text),
        size: text.length,
        problems,
        ...(json ? { json: json as never } : {}),
      },
    };
  };
  /** The design stage with both its artifacts written, after `later` events. */
  const designed = (...later: AppEvent[]) =>
    task(forge, {}, [
      { type: "StageStarted", data: { stage: "design" } },
      artifact(A.design, "# Design\n\nA counter."),
      artifact(A.designSpec, FORGE_DESIGN_JSON),
      ...later,
    ]);

  it("a pass with nothing blocking is a pass: round 1, no loop judged, the output recorded without errors", () => {
    const out = interpret(designed(), critic, critique("pass", [{ id: "naming", severity: "minor", message: "names" }]), forge);
    expect(out.trigger).toBe("pass");
    expect(out.failure).toBeUndefined();
    expect(out.events.map((e) => e.type)).toEqual(["AgentOutputRecorded", "CritiqueRecorded"]);
    expect(out.events[0]!.data).toMatchObject({ parsed: null, validationErrors: [] });
    expect(out.events[1]!.data).toEqual({
      stepId: STEP,
      stage: "design",
      round: 1,
      decision: "pass",
      modelDecision: "pass",
      summary: "The design",
      findings: [{ id: "naming", severity: "minor", message: "names", source: "critic" }],
      loop: { similarity: null, persisted: [], reopened: [], stalled: false, warning: null, escalate: null },
    });
  });

  it("the rules checked by code join the critic's findings as blocking: a pass becomes a revise", () => {
    const state = task(forge, {}, [{ type: "StageStarted", data: { stage: "design" } }, artifact(A.design, "# Design")]);
    const out = interpret(state, critic, critique("pass", [{ id: "scope", severity: "major", message: "too wide" }]), forge);
    expect(out.trigger).toBe("revise");
    const data = out.events[1]!.data as { decision: string; findings: unknown[]; round: number };
    expect(data.decision).toBe("revise");
    expect(data.findings).toEqual([
      { id: "scope", severity: "major", message: "too wide", source: "critic" },
      { id: `rule:missing:${A.designSpec}`, message: `${A.designSpec} is missing`, severity: "blocking", source: "rule" },
    ]);
    expect(data.round).toBe(1);
  });

  it("an artifact's schema problems are blocking findings, one per problem; a critic's revise with nothing blocking is a revise", () => {
    const spec = artifact(A.designSpec, "{}");
    const problems = (spec.data as { problems: string[] }).problems;
    expect(problems.length).toBeGreaterThan(0);
    const state = task(forge, {}, [
      { type: "StageStarted", data: { stage: "design" } },
      artifact(A.design, "# Design\n\nA counter."),
      spec,
    ]);
    const out = interpret(state, critic, critique("pass", []), forge);
    const findings = (out.events[1]!.data as { findings: { id: string }[] }).findings;
    expect(findings.slice(0, problems.length)).toEqual(
      problems.map((message, i) => ({ id: `rule:schema:${A.designSpec}:${i}`, message, severity: "blocking", source: "rule" })),
    );
    expect(out.trigger).toBe("revise");

    const minor = interpret(designed(), critic, critique("revise", [{ id: "naming", severity: "major", message: "names" }]), forge);
    expect(minor.trigger).toBe("revise");
    expect(minor.events[1]!.data).toMatchObject({ decision: "revise", modelDecision: "revise", round: 1 });
  });

  it("the same blocking finding a third time escalates: a person is asked, with the loop's reason as the diagnosis; the three critiques are wholly alike", () => {
    const blocking = [{ id: "no-api", severity: "blocking" as const, message: "the API is missing" }];
    const critiques: AppEvent[] = [];
    const outs = [1, 2, 3].map(() => {
      const out = interpret(designed(...critiques), critic, critique("revise", blocking), forge);
      critiques.push(out.events[1] as AppEvent);
      return out;
    });
    expect(outs.map((o) => o.trigger)).toEqual(["revise", "revise", "escalate"]);
    expect(outs.map((o) => (o.events[1]!.data as { round: number }).round)).toEqual([1, 2, 3]);
    const third = outs[2]!.events[1]!.data as { loop: { escalate: string | null } };
    expect(third.loop.escalate).toEqual(expect.any(String));
    // Three critiques with the same summary and finding are wholly alike (their summary and messages, line by line).
    expect(outs.map((o) => (o.events[1]!.data as { loop: { similarity: number | null } }).loop.similarity)).toEqual([null, null, 1]);
    expect(outs[2]!.failure).toEqual({ diagnosis: third.loop.escalate });
    expect(outs[1]!.events.at(-1)).toMatchObject({ type: "ForgeWarning", data: { stage: "design" } });
  });

  it("a critique that is not the strict JSON fails the step with the schema's errors", () => {
    const out = interpret(designed(), critic, stepSucceeded(agentOutput("looks fine")), forge);
    expect(out.trigger).toBe("step_failed");
    expect(out.events).toHaveLength(1);
    expect(out.failure?.errorClass).toBe("schema_invalid");
    expect(out.failure?.diagnosis).toBe((out.events[0]!.data as { validationErrors: string[] }).validationErrors.join("; "));
  });
});
