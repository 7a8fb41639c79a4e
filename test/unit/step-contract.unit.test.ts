// The step contract in the event catalog: what the engine and the runner wrote before the
// contract was typed still reads back unchanged (the log is forever), a workflow step's
// payloads are refused at append with the path of the problem, and the runner's own step
// kinds keep free JSON.
import { describe, expect, it } from "vitest";
import { appRegistry } from "../../server/events/catalog";
import { isWorkflowStep, isWorkflowStepOutput, ZStepResult, ZStepScheduled } from "../../server/events/step-contract";

const STEP = "00000000-0000-4000-8000-000000000001";
const blob = (c: string) => ({ blob: c.repeat(64), size: 12, mediaType: "text/plain; charset=utf-8" });
const BASE = "a".repeat(40);

// Shapes as the engine and executors wrote them before this contract (server/workflow/engine.ts at 3c59eef).
const agentInput = {
  workflow: "review_loop",
  state: "reviewing",
  role: "reviewer",
  phase: "verdict",
  output: "review_verdict",
  prompt: "Review the change.\n\nTask:\nFix sum()",
  context: [
    { from: "operator", text: "/confirm" },
    { from: "coder", text: "(invalid output) not json" },
  ],
  agent: { kind: "scripted", id: "reviewer-sim", responses: [{ reply: "{}" }], manifest: { allowedFiles: ["src/**"] } },
  invocation: 1,
  workspace: { repoPath: "/srv/repo", baseCommit: BASE, head: "b".repeat(40) },
  diff: blob("d"),
  commands: [],
  allowlist: [["node", "--test", "**"]],
};
const commandsInput = {
  ...agentInput,
  state: "running_tests",
  role: "tester",
  phase: "test",
  output: "commands",
  agent: null,
  commands: [
    { argv: ["npm", "test"], description: "unit tests", expect: { exitCode: 0 } },
    { argv: ["node", "--test"], expect: { exitCode: 1 } },
  ],
};
const scheduled = (kind: string, input: unknown) => ({ stepId: STEP, kind, input, timeoutMs: 600_000, maxAttempts: 4 });

const agentOutput = {
  kind: "agent",
  agentId: "coder-sim",
  raw: blob("f"),
  preview: "done",
  simulated: true,
  usage: { inputTokens: 10, outputTokens: 20 },
  commit: {
    commit: "c".repeat(40),
    parent: BASE,
    empty: false,
    changedFiles: [
      { path: "src/sum.js", status: "modified" },
      { path: "src/add.js", status: "renamed", previousPath: "src/plus.js" },
    ],
    diff: blob("e"),
  },
};
const commandsOutput = {
  kind: "commands",
  results: [
    {
      argv: ["npm", "test"],
      status: "ran",
      exitCode: 1,
      expectedExitCode: 0,
      durationMs: 120,
      stdoutTail: "",
      stderrTail: "1 failing",
      errorClass: "command_failed",
      reason: "exited with code 1, expected 0",
    },
    {
      argv: ["rm", "-rf", "/"],
      status: "refused",
      exitCode: null,
      expectedExitCode: 0,
      durationMs: 0,
      stdoutTail: "",
      stderrTail: "",
      errorClass: "command_refused",
      reason: "not in the allowlist",
    },
  ],
};

function readsBack(type: string, data: unknown): void {
  expect(appRegistry.decode(type, data, 1), `${type} as recorded`).toEqual(data);
  expect(appRegistry.encode(type, data).data, `${type} re-encoded`).toEqual(data);
}

describe("step contract: what is already in the log reads back unchanged", () => {
  it("StepScheduled: agent and commands steps, and the runner's own kinds with free JSON", () => {
    readsBack("StepScheduled", scheduled("agent", agentInput));
    readsBack("StepScheduled", scheduled("commands", commandsInput));
    readsBack("StepScheduled", { ...scheduled("echo", { message: "hello", delayMs: 0 }), availableAt: "2026-01-01T00:00:00.000Z" });
    readsBack("StepScheduled", scheduled("count", { i: 3 }));
  });

  it("StepCompleted: agent and commands outputs, and whatever other kinds returned", () => {
    readsBack("StepCompleted", { stepId: STEP, attempt: 1, output: agentOutput });
    const { usage: _usage, commit: _commit, ...prose } = agentOutput;
    readsBack("StepCompleted", { stepId: STEP, attempt: 2, output: prose });
    readsBack("StepCompleted", { stepId: STEP, attempt: 1, output: commandsOutput });
    readsBack("StepCompleted", { stepId: STEP, attempt: 1, output: { echo: "hello" } });
    readsBack("StepCompleted", { stepId: STEP, attempt: 1, output: { ok: 3 } });
  });

  it("TaskStarted: the agents as the project configured them (defaults not filled in)", () => {
    readsBack("TaskStarted", {
      workflow: "planning",
      workflowVersion: 1,
      mode: "implementation",
      prompt: "p",
      maxIterations: 3,
      project: { id: "p", name: "P", repoPath: "/r", baseCommit: BASE, allowlist: [] },
      agents: {
        planner: { kind: "scripted", id: "planner-sim", responses: [{ reply: "{}" }], manifest: { allowedFiles: ["docs/**"] } },
        executor: { kind: "command", id: "cli", argv: ["node", "agent.js"], env: { MODE: "ci" }, passEnv: ["OPENAI_API_KEY"] },
        tester: { kind: "openai", id: "gpt", model: "gpt-x", apiKeyEnv: "OPENAI_API_KEY" },
      },
    });
  });
});

describe("step contract: refused at append, with the path of the problem", () => {
  it("a workflow step's input must be a StepInput", () => {
    expect(() => appRegistry.encode("StepScheduled", scheduled("agent", { ...agentInput, role: "boss" }))).toThrow(/input\.role: /);
    expect(() => appRegistry.encode("StepScheduled", scheduled("commands", { ...commandsInput, commands: [{ argv: [] }] }))).toThrow(
      /input\.commands\.0\.argv: .*input\.commands\.0\.expect: /,
    );
    expect(() =>
      appRegistry.encode("StepScheduled", scheduled("agent", { ...agentInput, agent: { manifest: { allowedFiles: "src" } } })),
    ).toThrow(/input\.agent\.manifest\.allowedFiles: /);
  });

  it("an output shaped like a workflow output must be one", () => {
    expect(() => appRegistry.encode("StepCompleted", { stepId: STEP, attempt: 1, output: { ...agentOutput, raw: "r" } })).toThrow(
      /output\.raw: /,
    );
    expect(() =>
      appRegistry.encode("StepCompleted", { stepId: STEP, attempt: 1, output: { kind: "commands", results: [{ argv: ["x"] }] } }),
    ).toThrow(/output\.results\.0\.status: /);
  });
});

describe("step contract: narrowing what was read", () => {
  it("tells workflow steps and outputs from the runner's own", () => {
    expect(isWorkflowStep(ZStepScheduled.parse(scheduled("agent", agentInput)))).toBe(true);
    expect(isWorkflowStep(ZStepScheduled.parse(scheduled("echo", { message: "x" })))).toBe(false);
    expect(isWorkflowStepOutput(ZStepResult.parse(commandsOutput))).toBe(true);
    expect(isWorkflowStepOutput(ZStepResult.parse({ echo: "x" }))).toBe(false);
    expect(isWorkflowStepOutput(ZStepResult.parse("plain text"))).toBe(false);
  });
});
