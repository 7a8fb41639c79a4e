// The planning workflow (req M7) end to end through the runner: a planner's TaskSpec,
// an executor whose changes are checked from git against its manifest and the TaskSpec,
// a tester's plan run through the allowlist, and the bounded EXECUTING↔TESTING loop.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../server/events/types";
import { startTask } from "../../server/tasks/commands";
import type { TaskState } from "../../server/task-engine";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { BUGGY_SUM, createHarness, FIXED_SUM, testPlan, type Harness, type Script, ofType } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
});

const finished = (s: TaskState) => s.status === "finished";
const transitions = (events: RecordedEvent[]) =>
  ofType<{ from: string; to: string }>(events, "SessionStateChanged").map((d) => `${d.from}→${d.to}`);
const stepPrompts = (events: RecordedEvent[], state: string) =>
  ofType<{ input: { state: string; prompt: string } }>(events, "StepScheduled")
    .filter((d) => d.input.state === state)
    .map((d) => d.input.prompt);
const sumWith = (body: string) => `function sum(a, b) {\n  return ${body};\n}\nmodule.exports = { sum };\n`;

const EPIC = "Fix sum() so that the unit test passes";
const taskSpec = {
  title: "Fix sum",
  description: "sum() subtracts its arguments; it must add them.",
  acceptanceCriteria: ["sum(2, 3) returns 5", "node --test test/ passes"],
  files: ["src/sum.js"],
  tests: [{ argv: ["node", "--test", "test/"] }],
};
const MANIFEST = { allowedFiles: ["src/**", "test/**"] };

/** A project whose planner and executor carry manifests (file globs they may touch). */
function planningProject(id: string, scripts: { planner: Script; executor: Script; tester: Script }, maxIterations = 3) {
  return h.project(
    id,
    {
      planner: { kind: "scripted", id: "planner-sim", responses: scripts.planner, manifest: MANIFEST },
      executor: { kind: "scripted", id: "executor-sim", responses: scripts.executor, manifest: MANIFEST },
      tester: scripts.tester,
    },
    { maxIterations },
  );
}

async function run(projectId: string) {
  const { sessionId } = await startTask(
    { store: db.store, pool: db.pool },
    { projectId, prompt: EPIC, mode: "implementation", workflow: "planning" },
    testActor,
  );
  const state = await h.waitFor(sessionId, "finish", finished);
  return { sessionId, state, events: await db.store.readStream(sessionId) };
}

describe("planning workflow through the runner", () => {
  it("INIT → PLANNING → EXECUTING → TESTING → DONE: the TaskSpec is recorded, the executor fixes the file, the planned test really runs", async () => {
    const projectId = await planningProject("plan-happy", {
      planner: [{ reply: JSON.stringify(taskSpec) }],
      executor: [{ reply: "Made sum add.", files: { "src/sum.js": FIXED_SUM } }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId, state, events } = await run(projectId);
    expect(state.outcome).toBe("done");
    expect(
      ofType<{ from: string; to: string; reason: string }>(events, "SessionStateChanged").map((d) => [d.from, d.to, d.reason]),
    ).toEqual([
      ["init", "planning", "epic_received"],
      ["planning", "executing", "task_spec_valid"],
      ["executing", "testing", "execution_done"],
      ["testing", "running_tests", "plan_valid"],
      ["running_tests", "done", "tests_pass"],
    ]);
    const recorded = ofType<{ spec: unknown }>(events, "TaskSpecRecorded");
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.spec).toMatchObject({ ...taskSpec, tests: [{ argv: ["node", "--test", "test/"], expect: { exitCode: 0 } }] });
    expect(stepPrompts(events, "executing")[0]).toContain('"src/sum.js"'); // the executor is given the TaskSpec
    expect(ofType(events, "WorkspaceCommitted")).toMatchObject([
      { empty: false, changedFiles: [{ path: "src/sum.js", status: "modified" }] },
    ]);
    expect(ofType(events, "ExecutionRejected")).toEqual([]);
    const tests = ofType<{ argv: string[]; passed: boolean; exitCode: number; stdoutTail: string }>(events, "TestCommandRecorded");
    expect(tests).toMatchObject([{ argv: ["node", "--test", "test/"], passed: true, exitCode: 0 }]);
    expect(tests[0]!.stdoutTail).toMatch(/# pass 1/);
    expect(ofType(events, "SessionFinalized")).toEqual([
      { outcome: "done", reason: "tests_pass", iterations: 1, unresolved: [], errorClass: null, diagnosis: null },
    ]);
    expect(fs.readFileSync(path.join(h.workspacesRoot, sessionId, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
    expect(fs.readFileSync(path.join(h.repo, "src/sum.js"), "utf8")).toBe(BUGGY_SUM);
  });

  it("an executor that changes files outside its manifest or the TaskSpec is rejected (files from git, not its word) and stays in EXECUTING; a second attempt that behaves → DONE", async () => {
    const projectId = await planningProject("plan-reject", {
      planner: [{ reply: JSON.stringify(taskSpec) }],
      executor: [
        {
          reply: "I only changed src/sum.js.",
          files: { "src/sum.js": sumWith("a * b"), "README.md": "notes\n", "src/extra.js": "module.exports = {};\n" },
        },
        { reply: "Made sum add.", files: { "src/sum.js": FIXED_SUM } },
      ],
      tester: [{ reply: testPlan() }],
    });
    const { state, events } = await run(projectId);
    expect(state.outcome).toBe("done");
    expect(transitions(events)).toEqual([
      "init→planning",
      "planning→executing",
      "executing→executing",
      "executing→testing",
      "testing→running_tests",
      "running_tests→done",
    ]);
    const commits = ofType<{ changedFiles: Array<{ path: string; status: string }> }>(events, "WorkspaceCommitted");
    expect(commits.map((c) => c.changedFiles.map((f) => `${f.status} ${f.path}`).sort())).toEqual([
      ["added README.md", "added src/extra.js", "modified src/sum.js"],
      ["modified src/sum.js"],
    ]);
    const rejected = ofType<{ reasons: string[] }>(events, "ExecutionRejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reasons).toEqual([
      "changed files outside the executor's manifest (src/**, test/**): README.md",
      "changed files the TaskSpec does not name: README.md, src/extra.js",
    ]);
    expect(ofType(events, "IterationStarted")).toEqual([{ iteration: 2, reason: "execution_rejected" }]);
    const prompts = stepPrompts(events, "executing");
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain("changed files the TaskSpec does not name: README.md, src/extra.js");
    expect(ofType(events, "SessionFinalized")).toMatchObject([{ outcome: "done", iterations: 2, unresolved: [] }]);
  });

  // Known bug (reported, not ours to fix): WorkspaceCommitted moves the session head even when
  // the execution is then rejected, so the next attempt starts from the rejected commit and
  // the rejected files (README.md) end up in the result of a session that ends DONE.
  it("a rejected execution's changes do not survive into the next attempt", async () => {
    const projectId = await planningProject("plan-reject-revert", {
      planner: [{ reply: JSON.stringify(taskSpec) }],
      executor: [
        { reply: "Done.", files: { "src/sum.js": sumWith("a * b"), "README.md": "notes\n" } },
        { reply: "Made sum add.", files: { "src/sum.js": FIXED_SUM } },
      ],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId, state } = await run(projectId);
    expect(state.outcome).toBe("done");
    expect(fs.existsSync(path.join(h.workspacesRoot, sessionId, "README.md"))).toBe(false);
  });

  it("a TaskSpec that fails its schema, or names files outside the planner's manifest, ends FAILED with a schema_invalid diagnosis; nothing is executed", async () => {
    const cases = [
      { id: "plan-bad-json", reply: JSON.stringify({ title: "x" }), diagnosis: /description/ },
      {
        id: "plan-bad-files",
        reply: JSON.stringify({ ...taskSpec, files: ["src/sum.js", "package.json"] }),
        diagnosis: /outside the planner's manifest.*package\.json/,
      },
    ];
    for (const c of cases) {
      const projectId = await planningProject(c.id, {
        planner: [{ reply: c.reply }],
        executor: [{ reply: "x", files: { "src/sum.js": FIXED_SUM } }],
        tester: [{ reply: testPlan() }],
      });
      const { state, events } = await run(projectId);
      expect(state.outcome).toBe("failed");
      expect(transitions(events)).toEqual(["init→planning", "planning→failed"]);
      const final = ofType<{ outcome: string; reason: string; errorClass: string; diagnosis: string }>(events, "SessionFinalized");
      expect(final).toMatchObject([{ outcome: "failed", reason: "task_spec_invalid", errorClass: "schema_invalid" }]);
      expect(final[0]!.diagnosis).toMatch(c.diagnosis);
      const output = ofType<{ role: string; validationErrors: string[] }>(events, "AgentOutputRecorded");
      expect(output).toHaveLength(1);
      expect(output[0]!.validationErrors.join("; ")).toMatch(c.diagnosis);
      expect(ofType(events, "TaskSpecRecorded")).toEqual([]);
      expect(ofType<{ input: { role: string } }>(events, "StepScheduled").map((s) => s.input.role)).toEqual(["planner"]);
    }
  });

  it("tests that keep failing loop EXECUTING↔TESTING up to maxIterations, then end FAILED and escalated to a person", async () => {
    const projectId = await planningProject(
      "plan-loop",
      {
        planner: [{ reply: JSON.stringify(taskSpec) }],
        executor: [
          { reply: "try 1", files: { "src/sum.js": sumWith("a * b") } },
          { reply: "try 2", files: { "src/sum.js": sumWith("a - b - 0") } },
          { reply: "try 3", files: { "src/sum.js": sumWith("a / b") } },
        ],
        tester: [{ reply: testPlan() }],
      },
      3,
    );
    const { state, events } = await run(projectId);
    expect(state.outcome).toBe("failed");
    expect(transitions(events)).toEqual([
      "init→planning",
      "planning→executing",
      "executing→testing",
      "testing→running_tests",
      "running_tests→executing",
      "executing→testing",
      "testing→running_tests",
      "running_tests→executing",
      "executing→testing",
      "testing→running_tests",
      "running_tests→failed",
    ]);
    expect(ofType(events, "IterationStarted")).toEqual([
      { iteration: 2, reason: "tests_fail" },
      { iteration: 3, reason: "tests_fail" },
    ]);
    expect(ofType<{ passed: boolean; exitCode: number }>(events, "TestCommandRecorded").map((t) => [t.passed, t.exitCode])).toEqual([
      [false, 1],
      [false, 1],
      [false, 1],
    ]);
    expect(ofType(events, "ExecutionRejected")).toEqual([]);
    const final = ofType<{ outcome: string; reason: string; iterations: number; unresolved: string[] }>(events, "SessionFinalized")[0]!;
    expect(final).toMatchObject({ outcome: "failed", iterations: 3 });
    expect(final.reason).toMatch(/^tests_fail: .*loop limit reached, escalated to a person$/);
    expect(final.unresolved).toHaveLength(1);
    expect(final.unresolved[0]).toMatch(/^test node --test test\/: exited with code 1/);
  });
});
