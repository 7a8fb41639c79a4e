// The planning workflow (req M7) as a pure decider: INIT → PLANNING → EXECUTING → TESTING →
// DONE, the TaskSpec checked against its schema and the planner's manifest, the executor's
// changes checked (from git) against its manifest and the TaskSpec, a bounded loop.
import { describe, expect, it } from "vitest";
import type { AppEvent } from "../../server/events/catalog";
import { BUILTIN_WORKFLOWS } from "../../server/task-engine";
import type { TaskSpec, TestPlan } from "../../server/events/agent-outputs";
import type { ChangedFile } from "../../server/events/step-contract";
import {
  BASE_COMMIT,
  SessionHistory,
  agentOutput,
  buildCommit,
  commandResult,
  commandsOutput,
  decidedId,
  gaveUp,
  succeeded,
  workflowSpec,
  type TaskConfig,
} from "../helpers/decider";

const planning = BUILTIN_WORKFLOWS.planning!;
const spec = workflowSpec(planning);

const EPIC = "Let operators see debug output: add a --verbose flag";
const PLANNER_GLOBS = ["src/**", "test/**", "docs/**"];
const EXECUTOR_GLOBS = ["src/**", "test/**"];

function config(overrides: Partial<TaskConfig> = {}): TaskConfig {
  return {
    workflow: "planning",
    workflowVersion: 1,
    mode: "implementation",
    prompt: EPIC,
    maxIterations: 3,
    project: {
      id: "proj-1",
      name: "demo",
      repoPath: "/srv/catcafe/workspaces/demo",
      baseCommit: BASE_COMMIT,
      allowlist: [["npm", "test"]],
    },
    agents: {
      planner: { id: "planner", manifest: { allowedFiles: PLANNER_GLOBS } },
      executor: { id: "executor", manifest: { allowedFiles: EXECUTOR_GLOBS } },
      tester: { id: "tester" },
    },
    ...overrides,
  };
}

const taskSpec: TaskSpec = {
  title: "Add --verbose",
  description: "Add a --verbose flag that prints debug lines to stderr.",
  acceptanceCriteria: ["--verbose prints debug lines", "without it, output is unchanged"],
  files: ["src/cli.ts", "src/log/*.ts", "test/cli.test.ts", "docs/cli.md"],
  tests: [{ argv: ["npm", "test"], expect: { exitCode: 0 } }],
};
const plan: TestPlan = { summary: "unit tests", commands: [{ argv: ["npm", "test"], expect: { exitCode: 0 } }] };

// ---- histories ------------------------------------------------------------------------

function planningStarted(c: TaskConfig = config()): SessionHistory {
  return new SessionHistory(planning).created(c, "Verbose flag epic").enter("planning", { reason: "epic_received" });
}

function specAccepted(h: SessionHistory): SessionHistory {
  const stepId = h.current();
  return h
    .agentSaid(JSON.stringify(taskSpec), {
      parsed: taskSpec,
      then: [{ type: "TaskSpecRecorded", data: { stepId, spec: taskSpec as never } }],
    })
    .enter("executing", { reason: "task_spec_valid" });
}

const good: ChangedFile[] = [
  { path: "src/cli.ts", status: "modified" },
  { path: "test/cli.test.ts", status: "added" },
];

function executed(h: SessionHistory): SessionHistory {
  return h.agentSaid("Implemented.", { commit: buildCommit(`exec ${h.iteration}`, good) }).enter("testing", { reason: "execution_done" });
}

function planned(h: SessionHistory): SessionHistory {
  const stepId = h.current();
  return h
    .agentSaid(JSON.stringify(plan), { parsed: plan, then: [{ type: "TestPlanRecorded", data: { stepId, ...plan } }] })
    .enter("running_tests", { reason: "plan_valid" });
}

function testsFailed(h: SessionHistory): SessionHistory {
  const stepId = h.current();
  const result = commandResult(["npm", "test"], {
    exitCode: 1,
    errorClass: "command_failed",
    reason: "exited with code 1",
    stderrTail: "expected debug line",
  });
  h.stepCompleted(commandsOutput([result]));
  return h
    .add({ type: "TestCommandRecorded", data: { stepId, index: 0, ...result, passed: false } })
    .enter("executing", { reason: "tests_fail", iterate: "tests_fail" });
}

/** In `executing` at `iteration` (earlier rounds: the tests failed). */
function executingAt(iteration: number): SessionHistory {
  const h = specAccepted(planningStarted());
  while (h.iteration < iteration) testsFailed(planned(executed(h)));
  return h;
}

const testingAt = (iteration: number) => executed(executingAt(iteration));
const runningTestsAt = (iteration: number) => planned(testingAt(iteration));

function promptOf(events: AppEvent[]): string {
  const scheduled = events.find((e) => e.type === "StepScheduled");
  if (scheduled?.type !== "StepScheduled") throw new Error("no step scheduled");
  return (scheduled.data.input as { prompt: string }).prompt;
}

// ---- INIT → PLANNING ----------------------------------------------------------------------

describe("planning: start (epic_received)", () => {
  it("StartTask → INIT → PLANNING: the planner writes a TaskSpec", () => {
    spec
      .given([])
      .when({ type: "StartTask", title: "Verbose flag epic", config: config() })
      .then([
        { type: "SessionCreated", data: { title: "Verbose flag epic", workflow: "planning", state: "init" } },
        { type: "TaskStarted", data: { workflow: "planning", mode: "implementation", prompt: EPIC } },
        { type: "SessionStateChanged", data: { from: "init", to: "planning", reason: "epic_received" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            maxAttempts: 4,
            timeoutMs: 600_000,
            input: {
              workflow: "planning",
              state: "planning",
              role: "planner",
              output: "task_spec",
              phase: "plan",
              agent: { id: "planner", manifest: { allowedFiles: PLANNER_GLOBS } },
            },
          },
        },
      ]);
  });

  it("rejects a mode planning does not have", () => {
    spec
      .given([])
      .when({ type: "StartTask", title: "x", config: config({ mode: "proposal" }) })
      .thenThrows("INVALID_INPUT", 'workflow planning has no mode "proposal" (modes: implementation)');
  });

  it("there is nothing to confirm in planning → CONFLICT", () => {
    spec
      .given(planningStarted().events)
      .when({ type: "Confirm", via: "button" })
      .thenThrows("CONFLICT", 'nothing to confirm: the session already moved on (it is in "planning")');
  });
});

// ---- PLANNING → EXECUTING | FAILED ---------------------------------------------------------

describe("planning: the planner's TaskSpec", () => {
  it("valid (schema + planner manifest) → TaskSpecRecorded, EXECUTING with the TaskSpec in the prompt", () => {
    const h = planningStarted();
    const reply = { ...taskSpec, tests: [{ argv: ["npm", "test"] }] }; // expect defaults to exit 0
    const { events } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(reply))))
      .then([
        { type: "AgentOutputRecorded", data: { role: "planner", phase: "plan", parsed: taskSpec, validationErrors: [] } },
        { type: "TaskSpecRecorded", data: { stepId: h.current(), spec: taskSpec as never } },
        { type: "SessionStateChanged", data: { from: "planning", to: "executing", reason: "task_spec_valid" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            maxAttempts: 4,
            input: { state: "executing", role: "executor", output: "execution", phase: "execute", diff: null },
          },
        },
      ]);
    expect(promptOf(events)).toContain(`TaskSpec:\n${JSON.stringify(taskSpec, null, 2)}`);
    expect(promptOf(events)).toContain(`Task:\n${EPIC}`);
  });

  it("invalid against the schema → FAILED (task_spec_invalid), the errors kept", () => {
    const h = planningStarted();
    spec
      .given(h.events)
      .when(
        succeeded(
          h.current(),
          agentOutput(JSON.stringify({ title: "Ve", description: "short", acceptanceCriteria: [], files: ["src/cli.ts"] })),
        ),
      )
      .then([
        {
          type: "AgentOutputRecorded",
          data: {
            parsed: null,
            validationErrors: [
              "title: Too small: expected string to have >=3 characters",
              "description: Too small: expected string to have >=10 characters",
              "acceptanceCriteria: Too small: expected array to have >=1 items",
            ],
          },
        },
        { type: "SessionStateChanged", data: { from: "planning", to: "failed", reason: "task_spec_invalid" } },
        { type: "SessionFinalized", data: { outcome: "failed", reason: "task_spec_invalid", iterations: 1 } },
      ]);
  });

  it("not JSON at all → FAILED (task_spec_invalid)", () => {
    const h = planningStarted();
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("I think we should refactor everything first.")))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: null } },
        { type: "SessionStateChanged", data: { to: "failed", reason: "task_spec_invalid" } },
        { type: "SessionFinalized", data: { outcome: "failed" } },
      ]);
  });

  it("files outside the planner's manifest → FAILED, no TaskSpec recorded, the offending files named", () => {
    const h = planningStarted();
    const outside = { ...taskSpec, files: ["src/cli.ts", ".github/workflows/ci.yml", "package.json"] };
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(outside))))
      .then([
        {
          type: "AgentOutputRecorded",
          data: {
            parsed: outside,
            validationErrors: ["files outside the planner's manifest (src/**, test/**, docs/**): .github/workflows/ci.yml, package.json"],
          },
        },
        { type: "SessionStateChanged", data: { from: "planning", to: "failed", reason: "task_spec_invalid" } },
        { type: "SessionFinalized", data: { outcome: "failed", reason: "task_spec_invalid" } },
      ]);
  });

  it("a planner without a manifest restricts nothing", () => {
    const h = planningStarted(config({ agents: { planner: { id: "planner" }, executor: { id: "executor" } } }));
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify({ ...taskSpec, files: ["package.json"] }))))
      .then([
        { type: "AgentOutputRecorded", data: { validationErrors: [] } },
        { type: "TaskSpecRecorded" },
        { type: "SessionStateChanged", data: { to: "executing" } },
        { type: "StepScheduled" },
      ]);
  });

  // req W10/W11: a failure carries its class and a one-line diagnosis.
  it("a schema-invalid TaskSpec is finalized with errorClass schema_invalid and a diagnosis", () => {
    const h = planningStarted();
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify({ ...taskSpec, files: [] }))))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "SessionStateChanged", data: { to: "failed" } },
        {
          type: "SessionFinalized",
          data: {
            outcome: "failed",
            errorClass: "schema_invalid",
            diagnosis: expect.stringContaining("files: Too small") as unknown as string,
          },
        },
      ]);
  });
});

// ---- EXECUTING → TESTING | EXECUTING (rejected) | FAILED ------------------------------------

describe("planning: the executor's changes (checked from git)", () => {
  it("changed files inside the TaskSpec and the executor's manifest → TESTING with the diff", () => {
    const h = executingAt(1);
    const commit = buildCommit("exec", [...good, { path: "src/log/debug.ts", status: "added" }]);
    const { events } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Implemented.", { commit })))
      .then([
        { type: "AgentOutputRecorded", data: { role: "executor", phase: "execute", validationErrors: [] } },
        { type: "WorkspaceCommitted", data: { stepId: h.current(), ...commit } },
        { type: "SessionStateChanged", data: { from: "executing", to: "testing", reason: "execution_done" } },
        {
          type: "StepScheduled",
          data: {
            input: {
              state: "testing",
              role: "tester",
              output: "test_plan",
              phase: "test",
              diff: commit.diff,
              workspace: { head: commit.commit },
            },
          },
        },
      ]);
    expect(promptOf(events)).toContain("TaskSpec:\n");
  });

  it.each<[string, ChangedFile[], string[]]>([
    [
      "a file outside the executor's manifest (named by the TaskSpec)",
      [
        { path: "src/cli.ts", status: "modified" },
        { path: "docs/cli.md", status: "modified" },
      ],
      ["changed files outside the executor's manifest (src/**, test/**): docs/cli.md"],
    ],
    [
      "a file the TaskSpec does not name",
      [
        { path: "src/cli.ts", status: "modified" },
        { path: "src/server.ts", status: "modified" },
      ],
      ["changed files the TaskSpec does not name: src/server.ts"],
    ],
    [
      "a file outside both",
      [{ path: "package.json", status: "modified" }],
      [
        "changed files outside the executor's manifest (src/**, test/**): package.json",
        "changed files the TaskSpec does not name: package.json",
      ],
    ],
    [
      "a rename from outside",
      [{ path: "src/cli.ts", status: "renamed", previousPath: "lib/cli.ts" }],
      [
        "changed files outside the executor's manifest (src/**, test/**): lib/cli.ts",
        "changed files the TaskSpec does not name: lib/cli.ts",
      ],
    ],
  ])("%s → ExecutionRejected, stays in EXECUTING (new step, next iteration)", (_name, changedFiles, reasons) => {
    const h = executingAt(1);
    const { events, state } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Implemented.", { commit: buildCommit("exec", changedFiles) })))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "WorkspaceCommitted" },
        { type: "ExecutionRejected", data: { stepId: h.current(), reasons } },
        { type: "SessionStateChanged", data: { from: "executing", to: "executing", reason: "execution_rejected" } },
        { type: "IterationStarted", data: { iteration: 2, reason: "execution_rejected" } },
        { type: "StepScheduled", data: { stepId: decidedId(1), input: { state: "executing", role: "executor", output: "execution" } } },
      ]);
    expect(state.step).toEqual({ id: decidedId(1), state: "executing", role: "executor" });
    expect(promptOf(events)).toContain(`Resolve these from the previous round:\n${reasons.map((r) => `- ${r}`).join("\n")}`);
  });

  it("no commit at all (nothing changed) → rejected", () => {
    const h = executingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Everything already works.")))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "ExecutionRejected", data: { reasons: ["no files changed: the TaskSpec was not carried out"] } },
        { type: "SessionStateChanged", data: { from: "executing", to: "executing" } },
        { type: "IterationStarted", data: { iteration: 2 } },
        { type: "StepScheduled" },
      ]);
  });

  it("an empty commit → rejected", () => {
    const h = executingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Done.", { commit: buildCommit("empty", []) })))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "WorkspaceCommitted", data: { empty: true, changedFiles: [] } },
        { type: "ExecutionRejected", data: { reasons: ["no files changed: the TaskSpec was not carried out"] } },
        { type: "SessionStateChanged" },
        { type: "IterationStarted" },
        { type: "StepScheduled" },
      ]);
  });

  it("rejected at the loop limit → FAILED, escalated, the reasons unresolved", () => {
    const h = executingAt(3);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Done.", { commit: buildCommit("exec", [{ path: "package.json", status: "modified" }]) })))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "WorkspaceCommitted" },
        { type: "ExecutionRejected" },
        {
          type: "SessionStateChanged",
          data: { from: "executing", to: "failed", reason: "execution_rejected: loop limit reached, escalated to a person" },
        },
        {
          type: "SessionFinalized",
          data: {
            outcome: "failed",
            reason: "execution_rejected: loop limit reached, escalated to a person",
            iterations: 3,
            unresolved: [
              "changed files outside the executor's manifest (src/**, test/**): package.json",
              "changed files the TaskSpec does not name: package.json",
            ],
          },
        },
      ]);
  });
});

// ---- TESTING → DONE | EXECUTING | FAILED ----------------------------------------------------

describe("planning: testing", () => {
  it("a valid plan → the commands run (one attempt)", () => {
    const h = testingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(plan))))
      .then([
        { type: "AgentOutputRecorded", data: { role: "tester", parsed: plan } },
        { type: "TestPlanRecorded", data: { commands: plan.commands } },
        { type: "SessionStateChanged", data: { from: "testing", to: "running_tests", reason: "plan_valid" } },
        {
          type: "StepScheduled",
          data: { kind: "commands", maxAttempts: 1, input: { state: "running_tests", output: "commands", commands: plan.commands } },
        },
      ]);
  });

  it("an invalid plan → back to EXECUTING (tester_schema_invalid)", () => {
    const h = testingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("tests: npm test")))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: null } },
        { type: "SessionStateChanged", data: { from: "testing", to: "executing", reason: "tester_schema_invalid" } },
        { type: "IterationStarted", data: { iteration: 2, reason: "tester_schema_invalid" } },
        { type: "StepScheduled", data: { input: { state: "executing", role: "executor" } } },
      ]);
  });

  it("an invalid plan at the loop limit → FAILED", () => {
    const h = testingAt(3);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("tests: npm test")))
      .then([
        { type: "AgentOutputRecorded" },
        // The definition labels this "tests_fail" although the tests never ran (see report).
        {
          type: "SessionStateChanged",
          data: { from: "testing", to: "failed", reason: "tester_schema_invalid: loop limit reached, escalated to a person" },
        },
        { type: "SessionFinalized", data: { outcome: "failed", iterations: 3 } },
      ]);
  });

  it("tests pass → DONE", () => {
    const h = runningTestsAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), commandsOutput([commandResult(["npm", "test"])])))
      .then([
        { type: "TestCommandRecorded", data: { passed: true } },
        { type: "SessionStateChanged", data: { from: "running_tests", to: "done", reason: "tests_pass" } },
        {
          type: "SessionFinalized",
          data: { outcome: "done", reason: "tests_pass", iterations: 1, unresolved: [], errorClass: null, diagnosis: null },
        },
      ]);
  });

  it("tests fail → EXECUTING again (controlled loop) with the failure and the TaskSpec in the prompt", () => {
    const h = runningTestsAt(1);
    const { events } = spec
      .given(h.events)
      .when(
        succeeded(
          h.current(),
          commandsOutput([
            commandResult(["npm", "test"], {
              exitCode: 1,
              errorClass: "command_failed",
              reason: "exited with code 1",
              stderrTail: "expected debug line",
            }),
          ]),
        ),
      )
      .then([
        { type: "TestCommandRecorded", data: { passed: false } },
        { type: "SessionStateChanged", data: { from: "running_tests", to: "executing", reason: "tests_fail" } },
        { type: "IterationStarted", data: { iteration: 2, reason: "tests_fail" } },
        { type: "StepScheduled", data: { input: { state: "executing", role: "executor", output: "execution" } } },
      ]);
    expect(promptOf(events)).toContain("- test npm test: exited with code 1 expected debug line");
    expect(promptOf(events)).toContain("TaskSpec:\n");
  });

  it("tests fail at the loop limit → FAILED with the escalation reason", () => {
    const h = runningTestsAt(3);
    spec
      .given(h.events)
      .when(
        succeeded(
          h.current(),
          commandsOutput([
            commandResult(["npm", "test"], {
              exitCode: 1,
              errorClass: "command_failed",
              reason: "exited with code 1",
              stderrTail: "still failing",
            }),
          ]),
        ),
      )
      .then([
        { type: "TestCommandRecorded", data: { passed: false } },
        {
          type: "SessionStateChanged",
          data: { from: "running_tests", to: "failed", reason: "tests_fail: EXECUTING↔TESTING loop limit reached, escalated to a person" },
        },
        {
          type: "SessionFinalized",
          data: {
            outcome: "failed",
            reason: "tests_fail: EXECUTING↔TESTING loop limit reached, escalated to a person",
            iterations: 3,
            unresolved: ["test npm test: exited with code 1 still failing"],
          },
        },
      ]);
  });
});

describe("planning: global transitions", () => {
  it("a step that gave up → FAILED with its class", () => {
    const h = executingAt(2);
    spec
      .given(h.events)
      .when(gaveUp(h.current(), "timeout", "executor did not answer within 600 s"))
      .then([
        { type: "SessionStateChanged", data: { from: "executing", to: "failed", reason: "step_failed" } },
        {
          type: "SessionFinalized",
          data: { outcome: "failed", iterations: 2, errorClass: "timeout", diagnosis: "executor did not answer within 600 s" },
        },
      ]);
  });

  it("cancel while planning → cancelled", () => {
    const h = planningStarted();
    spec
      .given(h.events)
      .when({ type: "Cancel", reason: "epic withdrawn" })
      .then([
        { type: "CancelRequested", data: { reason: "epic withdrawn" } },
        { type: "StepCancelled", data: { stepId: h.current() } },
        { type: "SessionStateChanged", data: { from: "planning", to: "cancelled", reason: "cancel" } },
        { type: "SessionFinalized", data: { outcome: "cancelled", errorClass: "cancelled" } },
      ]);
  });
});
