// The review_loop workflow (req W1–W12) as a pure decider: given a session's events, when
// a command, then exactly these events or this error. Every transition of the built-in
// definition is covered; every emitted event is checked against the event catalog.
import { describe, expect, it } from "vitest";
import type { AppEvent } from "../../server/events/catalog";
import { BUILTIN_WORKFLOWS, hasConfirmSignal } from "../../server/task-engine";
import type { ReviewVerdict, TestPlan } from "../../server/events/agent-outputs";
import {
  BASE_COMMIT,
  SessionHistory,
  buildCommit,
  commandResult,
  commandsOutput,
  agentOutput,
  decidedId,
  gaveUp,
  succeeded,
  workflowSpec,
  type TaskConfig,
} from "../helpers/decider";

const reviewLoop = BUILTIN_WORKFLOWS.review_loop!;
const spec = workflowSpec(reviewLoop);

const PROMPT = "Add a --verbose flag to the CLI";

function config(mode: string, overrides: Partial<TaskConfig> = {}): TaskConfig {
  return {
    workflow: "review_loop",
    workflowVersion: 1,
    mode,
    prompt: PROMPT,
    maxIterations: 3,
    project: {
      id: "proj-1",
      name: "demo",
      repoPath: "/srv/catcafe/workspaces/demo",
      baseCommit: BASE_COMMIT,
      allowlist: [
        ["npm", "test"],
        ["npm", "run", "lint"],
      ],
    },
    agents: {
      coder: { id: "coder", shell: "command", brain: "scripted" },
      reviewer: { id: "reviewer", shell: "command", brain: "scripted" },
      tester: { id: "tester", shell: "command", brain: "scripted" },
    },
    ...overrides,
  };
}

const approve: ReviewVerdict = {
  decision: "approve",
  summary: "Clean change, flag is wired through.",
  findings: [{ severity: "nit", file: "src/cli.ts", message: "prefer a const" }],
};
const changes: ReviewVerdict = {
  decision: "changes_requested",
  summary: "The flag is parsed but never used.",
  findings: [
    { severity: "major", file: "src/cli.ts", line: 12, message: "--verbose is parsed but ignored" },
    { severity: "minor", file: "README.md", message: "document the flag" },
  ],
};
const CHANGES_ISSUES = ["[major] src/cli.ts:12: --verbose is parsed but ignored", "[minor] README.md: document the flag"];
const plan: TestPlan = {
  summary: "Unit tests and lint",
  commands: [
    { argv: ["npm", "test"], description: "unit tests", expect: { exitCode: 0 } },
    { argv: ["npm", "run", "lint"], expect: { exitCode: 0 } },
  ],
};

// ---- histories ------------------------------------------------------------------------

function proposalStarted(): SessionHistory {
  return new SessionHistory(reviewLoop).created(config("proposal")).enter("proposal_coder", { reason: "start" });
}

function awaitingConfirm(): SessionHistory {
  return proposalStarted()
    .agentSaid("Proposal: add the flag in src/cli.ts and thread a logger through.")
    .enter("proposal_reviewer")
    .agentSaid("Critique: the logger should not print secrets.")
    .enter("proposal_tester")
    .agentSaid("Testability: snapshot the --help output; risk: noisy logs.")
    .enter("awaiting_operator_confirm");
}

function building(maxIterations = 3): SessionHistory {
  return new SessionHistory(reviewLoop).created(config("implementation", { maxIterations })).enter("building", { reason: "start" });
}

function built(h: SessionHistory, label = `build ${h.iteration}`): SessionHistory {
  return h.agentSaid(`Implemented (${label}).`, { commit: buildCommit(label, [{ path: "src/cli.ts", status: "modified" }], BASE_COMMIT) });
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

/** Implementation mode, in `reviewing` at `iteration` (earlier rounds: changes requested). */
function reviewingAt(iteration: number): SessionHistory {
  const h = built(building()).enter("reviewing");
  while (h.iteration < iteration) {
    reviewed(h, changes).enter("building", { reason: "changes_requested", iterate: "changes_requested" });
    built(h).enter("reviewing");
  }
  return h;
}

/** In `testing` at `iteration` (earlier rounds: tests failed). */
function testingAt(iteration: number): SessionHistory {
  const h = reviewed(reviewingAt(1), approve).enter("testing", { reason: "approve" });
  while (h.iteration < iteration) {
    testPlanned(h).enter("running_tests", { reason: "plan_valid" });
    testsRan(h, false).enter("building", { reason: "test_failed", iterate: "test_failed" });
    reviewed(built(h).enter("reviewing"), approve).enter("testing", { reason: "approve" });
  }
  return h;
}

function testPlanned(h: SessionHistory, p: TestPlan = plan): SessionHistory {
  const stepId = h.current();
  return h.agentSaid(JSON.stringify(p), { parsed: p, then: [{ type: "TestPlanRecorded", data: { stepId, ...p } }] });
}

function testsRan(h: SessionHistory, pass: boolean): SessionHistory {
  const stepId = h.current();
  const result = commandResult(
    ["npm", "test"],
    pass ? {} : { exitCode: 1, errorClass: "command_failed", reason: "exited with code 1", stderrTail: "1 failing" },
  );
  h.stepCompleted(commandsOutput([result]));
  return h.add({ type: "TestCommandRecorded", data: { stepId, index: 0, ...result, passed: pass } });
}

/** In `running_tests` at `iteration`, with `plan` recorded. */
function runningTestsAt(iteration: number): SessionHistory {
  return testPlanned(testingAt(iteration)).enter("running_tests", { reason: "plan_valid" });
}

function approvedSession(): SessionHistory {
  const h = runningTestsAt(1);
  return testsRan(h, true).enter("approved", { reason: "tests_passed" });
}

const stepInput = (events: AppEvent[]) => {
  const scheduled = events.find((e) => e.type === "StepScheduled");
  if (scheduled?.type !== "StepScheduled") throw new Error("no step scheduled");
  return scheduled.data.input as { prompt: string; promptStableChars?: number; context: { from: string; text: string }[] };
};

// ---- W1: starting a task ----------------------------------------------------------------

describe("review_loop: StartTask", () => {
  it("in proposal mode creates the session and schedules the coder's roundtable proposal", () => {
    spec
      .given([])
      .when({ type: "StartTask", title: "Verbose flag", config: config("proposal") })
      .then([
        { type: "SessionCreated", data: { title: "Verbose flag", workflow: "review_loop", state: "start" } },
        { type: "TaskStarted", data: { workflow: "review_loop", mode: "proposal", prompt: PROMPT, maxIterations: 3 } },
        { type: "SessionStateChanged", data: { from: "start", to: "proposal_coder", reason: "start" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            timeoutMs: 600_000,
            maxAttempts: 4,
            input: {
              workflow: "review_loop",
              state: "proposal_coder",
              role: "coder",
              phase: "discussion",
              output: "text",
              context: [],
              agent: { id: "coder", shell: "command", brain: "scripted" },
              invocation: 0,
              workspace: { repoPath: "/srv/catcafe/workspaces/demo", baseCommit: BASE_COMMIT, head: BASE_COMMIT },
              diff: null,
              commands: [],
              allowlist: [
                ["npm", "test"],
                ["npm", "run", "lint"],
              ],
            },
          },
        },
      ]);
  });

  it("puts the operator's prompt (the stable part, its length recorded) and then the instruction in the step's prompt", () => {
    const { events } = spec
      .given([])
      .when({ type: "StartTask", title: "Verbose flag", config: config("proposal") })
      .then([{ type: "SessionCreated" }, { type: "TaskStarted" }, { type: "SessionStateChanged" }, { type: "StepScheduled" }]);
    const proposalCoder = reviewLoop.states.proposal_coder;
    if (proposalCoder?.type !== "step") throw new Error("proposal_coder is a step state");
    const input = stepInput(events);
    expect(input.prompt).toBe(`Task:\n${PROMPT}\n\n${proposalCoder.step.instruction}`);
    expect(input.prompt.slice(0, input.promptStableChars)).toBe(`Task:\n${PROMPT}\n`);
  });

  it("the task's MCP servers go with every agent step, as TaskStarted recorded them, and never with a commands step", () => {
    const mcpServers = [{ name: "github", command: "npx", args: ["-y", "@example/github-mcp"], envFrom: { TOKEN: "GITHUB_TOKEN" } }];
    const { events } = spec
      .given([])
      .when({ type: "StartTask", title: "Verbose flag", config: config("implementation", { mcpServers }) })
      .then([
        { type: "SessionCreated" },
        { type: "TaskStarted", data: { mcpServers } },
        { type: "SessionStateChanged" },
        { type: "StepScheduled" },
      ]);
    expect((stepInput(events) as { mcpServers?: unknown }).mcpServers).toEqual(mcpServers);
    // Without servers the input says nothing about them.
    const started = [
      { type: "SessionCreated" },
      { type: "TaskStarted" },
      { type: "SessionStateChanged" },
      { type: "StepScheduled" },
    ] as const;
    const none = spec
      .given([])
      .when({ type: "StartTask", title: "Verbose flag", config: config("implementation") })
      .then(started).events;
    expect(stepInput(none)).not.toHaveProperty("mcpServers");

    const h = new SessionHistory(reviewLoop).created(config("implementation", { mcpServers })).enter("building", { reason: "start" });
    reviewed(built(h).enter("reviewing"), approve).enter("testing", { reason: "approve" });
    const planned = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(plan))))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "TestPlanRecorded" },
        { type: "SessionStateChanged" },
        { type: "StepScheduled", data: { kind: "commands" } },
      ]).events;
    expect(stepInput(planned)).not.toHaveProperty("mcpServers");
  });

  it("in implementation mode goes straight to building", () => {
    spec
      .given([])
      .when({ type: "StartTask", title: "Verbose flag", config: config("implementation") })
      .then([
        { type: "SessionCreated", data: { state: "start" } },
        { type: "TaskStarted", data: { mode: "implementation" } },
        { type: "SessionStateChanged", data: { from: "start", to: "building", reason: "start" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            maxAttempts: 4,
            input: { state: "building", role: "coder", output: "build", phase: "build", diff: null },
          },
        },
      ]);
  });

  it("rejects a mode the workflow does not have", () => {
    spec
      .given([])
      .when({ type: "StartTask", title: "Verbose flag", config: config("yolo") })
      .thenThrows("INVALID_INPUT", 'workflow review_loop has no mode "yolo" (modes: proposal, implementation)');
  });

  it("rejects starting a session that already exists", () => {
    spec
      .given(building().events)
      .when({ type: "StartTask", title: "Again", config: config("implementation") })
      .thenThrows("CONFLICT", "this session already exists");
  });
});

// ---- W2: the proposal roundtable -------------------------------------------------------

describe("review_loop: proposal roundtable (plain text, no schema)", () => {
  it("coder's proposal → the reviewer critiques it, with the proposal in context", () => {
    const h = proposalStarted();
    const { events } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Proposal: add the flag in src/cli.ts.")))
      .then([
        {
          type: "AgentOutputRecorded",
          data: {
            stepId: h.current(),
            role: "coder",
            phase: "discussion",
            preview: "Proposal: add the flag in src/cli.ts.",
            parsed: null,
            validationErrors: [],
          },
        },
        { type: "SessionStateChanged", data: { from: "proposal_coder", to: "proposal_reviewer", reason: "done" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            maxAttempts: 4,
            input: { state: "proposal_reviewer", role: "reviewer", output: "text", phase: "discussion" },
          },
        },
      ]);
    expect(stepInput(events).context).toEqual([{ from: "coder", text: "Proposal: add the flag in src/cli.ts." }]);
  });

  it("reviewer's plain-text critique (not JSON) is accepted → the tester comments", () => {
    const h = proposalStarted().agentSaid("Proposal.").enter("proposal_reviewer");
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("I would not approve this yet: what about Windows?")))
      .then([
        { type: "AgentOutputRecorded", data: { role: "reviewer", phase: "discussion", parsed: null, validationErrors: [] } },
        { type: "SessionStateChanged", data: { from: "proposal_reviewer", to: "proposal_tester", reason: "done" } },
        { type: "StepScheduled", data: { input: { state: "proposal_tester", role: "tester", output: "text", phase: "discussion" } } },
      ]);
  });

  it("tester's comments → awaiting_operator_confirm, and nothing is scheduled", () => {
    const h = proposalStarted().agentSaid("Proposal.").enter("proposal_reviewer").agentSaid("Critique.").enter("proposal_tester");
    const { state } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Risky: log volume.")))
      .then([
        { type: "AgentOutputRecorded", data: { role: "tester", phase: "discussion", validationErrors: [] } },
        { type: "SessionStateChanged", data: { from: "proposal_tester", to: "awaiting_operator_confirm", reason: "done" } },
      ]);
    expect(state).toMatchObject({ fsm: "awaiting_operator_confirm", status: "active" });
  });
});

// ---- W3: confirm ----------------------------------------------------------------------

describe("review_loop: Confirm", () => {
  it("while awaiting confirm → OperatorConfirmed and the build starts in the same thread", () => {
    const { events } = spec
      .given(awaitingConfirm().events)
      .when({ type: "Confirm", via: "button" })
      .then([
        { type: "OperatorConfirmed", data: { via: "button" } },
        { type: "SessionStateChanged", data: { from: "awaiting_operator_confirm", to: "building", reason: "operator confirmed" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            maxAttempts: 4,
            input: { state: "building", role: "coder", output: "build", phase: "build" },
          },
        },
      ]);
    expect(stepInput(events).context.map((m) => m.from)).toEqual(["coder", "reviewer", "tester"]);
  });

  it.each(["proposal_coder", "building", "reviewing"])("in %s → CONFLICT: the session already moved on", (where) => {
    const history = where === "proposal_coder" ? proposalStarted() : where === "building" ? building() : reviewingAt(1);
    spec
      .given(history.events)
      .when({ type: "Confirm", via: "cli" })
      .thenThrows("CONFLICT", `nothing to confirm: the session already moved on (it is in "${where}")`);
  });

  it("a second Confirm (two operators at once) → CONFLICT, with the state in the details", () => {
    const h = awaitingConfirm()
      .add({ type: "OperatorConfirmed", data: { via: "button" } })
      .enter("building", { reason: "operator confirmed" });
    const error = spec
      .given(h.events)
      .when({ type: "Confirm", via: "button" })
      .thenThrows("CONFLICT", 'nothing to confirm: the session already moved on (it is in "building")');
    expect(error.details).toEqual({ state: "building" });
  });

  it("on a finished session → CONFLICT", () => {
    spec
      .given(approvedSession().events)
      .when({ type: "Confirm", via: "api" })
      .thenThrows("CONFLICT", "the session already finished (approved): it moved on");
  });

  it("on a session that does not exist → NOT_FOUND", () => {
    spec.given([]).when({ type: "Confirm", via: "api" }).thenThrows("NOT_FOUND", "no such task session");
  });
});

// ---- W3 / W9: follow-up -----------------------------------------------------------------

describe("review_loop: FollowUp", () => {
  it("without a confirm signal while awaiting confirm → appended and answered 'pending confirmation'; nothing is built", () => {
    const { state } = spec
      .given(awaitingConfirm().events)
      .when({ type: "FollowUp", text: "Could you also cover the --quiet flag?" })
      .then([
        { type: "OperatorMessagePosted", data: { text: "Could you also cover the --quiet flag?" } },
        {
          type: "SystemReplied",
          data: {
            text: "Pending confirmation: nothing is built until an operator confirms (Confirm button, /confirm, or `catcafe task confirm`).",
          },
        },
      ]);
    expect(state).toMatchObject({ fsm: "awaiting_operator_confirm", step: null });
  });

  it('with "/confirm" → confirmed in the same thread: the build sees the message', () => {
    const { events } = spec
      .given(awaitingConfirm().events)
      .when({ type: "FollowUp", text: "Also cover --quiet. /confirm" })
      .then([
        { type: "OperatorMessagePosted", data: { text: "Also cover --quiet. /confirm" } },
        { type: "OperatorConfirmed", data: { via: "followup" } },
        { type: "SessionStateChanged", data: { from: "awaiting_operator_confirm", to: "building", reason: "operator confirmed" } },
        { type: "StepScheduled", data: { stepId: decidedId(1), input: { state: "building", role: "coder", output: "build" } } },
      ]);
    expect(stepInput(events).context.at(-1)).toEqual({ from: "operator", text: "Also cover --quiet. /confirm" });
  });

  it("while building → only the message (no reply, no step)", () => {
    spec
      .given(building().events)
      .when({ type: "FollowUp", text: "Keep the output short" })
      .then([{ type: "OperatorMessagePosted", data: { text: "Keep the output short" } }]);
  });

  it("a message posted while building reaches the next step's context", () => {
    const h = building().add({ type: "OperatorMessagePosted", data: { text: "Keep the output short" } });
    const { events } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Done.", { commit: buildCommit("b1", [{ path: "src/cli.ts", status: "modified" }]) })))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "WorkspaceCommitted" },
        { type: "SessionStateChanged", data: { to: "reviewing" } },
        { type: "StepScheduled" },
      ]);
    expect(stepInput(events).context).toEqual([
      { from: "operator", text: "Keep the output short" },
      { from: "coder", text: "Done." },
    ]);
  });

  it("on a finished session → the message plus a reply about rerun", () => {
    spec
      .given(approvedSession().events)
      .when({ type: "FollowUp", text: "One more thing" })
      .then([
        { type: "OperatorMessagePosted", data: { text: "One more thing" } },
        { type: "SystemReplied", data: { text: "This session has finished (approved). Rerun it to start a new execution." } },
      ]);
  });

  it("on a session that does not exist → NOT_FOUND", () => {
    spec.given([]).when({ type: "FollowUp", text: "hello" }).thenThrows("NOT_FOUND", "no such task session");
  });

  it.each([
    ["/confirm", true],
    ["Looks good.\n/confirm", true],
    ["confirm", true],
    ["Confirmed!", true],
    ["go ahead", true],
    ["  Go ahead.  ", true],
    ["please confirm the approach with the team first", false],
    ["see /confirmation", false],
    ["I can't confirm yet", false],
    ["https://example.com/confirm", false],
  ])("confirm signal in %j: %s", (text, expected) => {
    expect(hasConfirmSignal(text)).toBe(expected);
  });
});

// ---- W4 / W5: build and strict review --------------------------------------------------

describe("review_loop: building", () => {
  it("a build with a commit → recorded, committed, and the reviewer gets the committed diff", () => {
    const h = building();
    const commit = buildCommit("b1", [
      { path: "src/cli.ts", status: "modified" },
      { path: "src/log.ts", status: "added" },
    ]);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Implemented the flag.", { commit })))
      .then([
        { type: "AgentOutputRecorded", data: { stepId: h.current(), role: "coder", phase: "build", parsed: null, validationErrors: [] } },
        { type: "WorkspaceCommitted", data: { stepId: h.current(), ...commit } },
        { type: "SessionStateChanged", data: { from: "building", to: "reviewing", reason: "done" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            maxAttempts: 4,
            input: {
              state: "reviewing",
              role: "reviewer",
              output: "review_verdict",
              phase: "verdict",
              diff: commit.diff,
              workspace: { repoPath: "/srv/catcafe/workspaces/demo", baseCommit: BASE_COMMIT, head: commit.commit },
            },
          },
        },
      ]);
  });

  it("counts earlier invocations of the role (StepStarted) for the next step of that role", () => {
    const g = reviewingAt(2);
    reviewed(g, changes).enter("building", { reason: "changes_requested", iterate: "changes_requested" });
    // The coder has been started twice (iterations 1 and 2), the reviewer twice.
    spec
      .given(g.events)
      .when(
        succeeded(g.current(), agentOutput("Third build.", { commit: buildCommit("b3", [{ path: "src/cli.ts", status: "modified" }]) })),
      )
      .then([
        { type: "AgentOutputRecorded" },
        { type: "WorkspaceCommitted" },
        { type: "SessionStateChanged", data: { from: "building", to: "reviewing" } },
        { type: "StepScheduled", data: { input: { role: "reviewer", invocation: 2 } } },
      ]);
  });
});

describe("review_loop: reviewing (strict JSON verdict)", () => {
  it("approve → verdict recorded, the tester plans tests with the diff", () => {
    const h = reviewingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(approve))))
      .then([
        { type: "AgentOutputRecorded", data: { role: "reviewer", phase: "verdict", parsed: approve, validationErrors: [] } },
        {
          type: "ReviewVerdictRecorded",
          data: {
            stepId: h.current(),
            decision: "approve",
            modelDecision: "approve",
            override: null,
            summary: approve.summary,
            findings: approve.findings,
          },
        },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "testing", reason: "approve" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "agent",
            maxAttempts: 4,
            input: {
              state: "testing",
              role: "tester",
              output: "test_plan",
              phase: "test",
              diff: buildCommit("build 1", [{ path: "src/cli.ts", status: "modified" }]).diff,
            },
          },
        },
      ]);
  });

  it("approve with a blocking finding → overridden to changes_requested; iteration 2 builds with the findings", () => {
    const h = reviewingAt(1);
    const verdict: ReviewVerdict = {
      decision: "approve",
      summary: "Fine overall.",
      findings: [{ severity: "blocking", file: "src/cli.ts", line: 7, message: "crashes without a config file" }],
    };
    const { events, state } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(verdict))))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: verdict, validationErrors: [] } },
        {
          type: "ReviewVerdictRecorded",
          data: {
            decision: "changes_requested",
            modelDecision: "approve",
            override: "decision rule: 1 blocking finding(s) forbid approve",
            findings: verdict.findings,
          },
        },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "building", reason: "changes_requested" } },
        { type: "IterationStarted", data: { iteration: 2, reason: "changes_requested" } },
        { type: "StepScheduled", data: { stepId: decidedId(1), input: { state: "building", role: "coder", output: "build" } } },
      ]);
    expect(stepInput(events).prompt).toContain(
      "Resolve these from the previous round:\n- [blocking] src/cli.ts:7: crashes without a config file\n- decision rule: 1 blocking finding(s) forbid approve",
    );
    expect(state.iteration).toBe(2);
  });

  it("changes_requested under the cap → iteration 2 builds with every finding in its prompt", () => {
    const h = reviewingAt(1);
    const { events } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(changes))))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: changes } },
        { type: "ReviewVerdictRecorded", data: { decision: "changes_requested", modelDecision: "changes_requested", override: null } },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "building", reason: "changes_requested" } },
        { type: "IterationStarted", data: { iteration: 2, reason: "changes_requested" } },
        {
          type: "StepScheduled",
          data: { input: { state: "building", role: "coder", workspace: { head: buildCommit("build 1", []).commit } } },
        },
      ]);
    expect(stepInput(events).prompt).toContain(`Resolve these from the previous round:\n${CHANGES_ISSUES.map((i) => `- ${i}`).join("\n")}`);
  });

  it("changes_requested at the cap (iteration 3 of 3) → max_iterations_reached listing the findings", () => {
    const h = reviewingAt(3);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(changes))))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "ReviewVerdictRecorded", data: { decision: "changes_requested" } },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "max_iterations_reached", reason: "changes_requested" } },
        {
          type: "SessionFinalized",
          data: {
            outcome: "max_iterations_reached",
            reason: "changes_requested",
            iterations: 3,
            unresolved: CHANGES_ISSUES,
            errorClass: null,
            diagnosis: null,
          },
        },
      ]);
  });

  it("honours the session's own cap (maxIterations 1: the first changes_requested ends it)", () => {
    const h = built(building(1)).enter("reviewing");
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(changes))))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "ReviewVerdictRecorded" },
        { type: "SessionStateChanged", data: { to: "max_iterations_reached" } },
        { type: "SessionFinalized", data: { outcome: "max_iterations_reached", iterations: 1, unresolved: CHANGES_ISSUES } },
      ]);
  });

  it("a non-JSON reply → review_schema_invalid, keeping the raw output and the errors (parsed: null)", () => {
    const h = reviewingAt(1);
    const output = agentOutput("Looks good to me!");
    spec
      .given(h.events)
      .when(succeeded(h.current(), output))
      .then([
        {
          type: "AgentOutputRecorded",
          data: {
            role: "reviewer",
            phase: "verdict",
            raw: output.raw,
            preview: "Looks good to me!",
            parsed: null,
            validationErrors: ["not valid JSON: Unexpected token 'L', \"Looks good to me!\" is not valid JSON"],
          },
        },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "review_schema_invalid", reason: "review_schema_invalid" } },
        {
          type: "SessionFinalized",
          data: {
            outcome: "review_schema_invalid",
            reason: "review_schema_invalid",
            iterations: 1,
            unresolved: [expect.stringMatching(/^reviewer output rejected: not valid JSON/)],
            errorClass: "schema_invalid",
          },
        },
      ]);
  });

  it.each([
    ["missing summary", { decision: "approve", findings: [] }, "summary: Invalid input: expected string, received undefined"],
    [
      "unknown decision",
      { decision: "maybe", summary: "s", findings: [] },
      'decision: Invalid option: expected one of "approve"|"changes_requested"',
    ],
    ["extra key", { decision: "approve", summary: "s", findings: [], score: 9 }, '(root): Unrecognized key: "score"'],
    [
      "bad severity",
      { decision: "approve", summary: "s", findings: [{ severity: "fatal", file: "a.ts", message: "m" }] },
      'findings.0.severity: Invalid option: expected one of "blocking"|"major"|"minor"|"nit"',
    ],
    ["an array", [], "(root): Invalid input: expected object, received array"],
  ])("JSON failing the schema (%s) → review_schema_invalid with the zod path", (_name, json, error) => {
    const h = reviewingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(json))))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: null, validationErrors: [error] } },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "review_schema_invalid", reason: "review_schema_invalid" } },
        { type: "SessionFinalized", data: { outcome: "review_schema_invalid" } },
      ]);
  });

  it("a reply in one ```json fence is accepted", () => {
    const h = reviewingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("```json\n" + JSON.stringify(approve, null, 2) + "\n```")))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: approve, validationErrors: [] } },
        { type: "ReviewVerdictRecorded", data: { decision: "approve" } },
        { type: "SessionStateChanged", data: { to: "testing" } },
        { type: "StepScheduled" },
      ]);
  });

  it("prose around the fence is not strict JSON → review_schema_invalid", () => {
    const h = reviewingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("Here is my verdict:\n```json\n" + JSON.stringify(approve) + "\n```")))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: null } },
        { type: "SessionStateChanged", data: { to: "review_schema_invalid" } },
        { type: "SessionFinalized", data: { outcome: "review_schema_invalid" } },
      ]);
  });

  it("reads the whole raw text, not the preview", () => {
    const h = reviewingAt(1);
    const full = JSON.stringify(approve);
    spec
      .given(h.events)
      .when({
        type: "StepSucceeded",
        stepId: h.current(),
        attempt: 1,
        output: agentOutput(full, { preview: full.slice(0, 20) }),
        rawText: full,
      })
      .then([
        { type: "AgentOutputRecorded", data: { parsed: approve } },
        { type: "ReviewVerdictRecorded" },
        { type: "SessionStateChanged", data: { to: "testing" } },
        { type: "StepScheduled" },
      ]);
  });

  // req W10/W11: every failure is classified and carries a one-line diagnosis. The
  // schema-invalid review is a failure of class schema_invalid; its errors are the diagnosis.
  it("review_schema_invalid is finalized with errorClass schema_invalid and the errors as diagnosis", () => {
    const h = reviewingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify({ decision: "approve", findings: [] }))))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "SessionStateChanged", data: { to: "review_schema_invalid" } },
        {
          type: "SessionFinalized",
          data: {
            outcome: "review_schema_invalid",
            errorClass: "schema_invalid",
            diagnosis: expect.stringContaining("summary: Invalid input") as unknown as string,
          },
        },
      ]);
  });
});

// ---- W6 / W7 / W8: test plan and test commands ------------------------------------------

describe("review_loop: testing (strict JSON test plan)", () => {
  it("a valid plan → TestPlanRecorded and running_tests: a commands step, one attempt, the plan's commands", () => {
    const h = testingAt(1);
    const reply = {
      summary: plan.summary,
      commands: [{ argv: ["npm", "test"], description: "unit tests" }, { argv: ["npm", "run", "lint"] }],
    };
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(reply))))
      .then([
        { type: "AgentOutputRecorded", data: { role: "tester", phase: "test", parsed: plan, validationErrors: [] } },
        { type: "TestPlanRecorded", data: { stepId: h.current(), summary: plan.summary, commands: plan.commands } },
        { type: "SessionStateChanged", data: { from: "testing", to: "running_tests", reason: "plan_valid" } },
        {
          type: "StepScheduled",
          data: {
            stepId: decidedId(1),
            kind: "commands",
            maxAttempts: 1,
            timeoutMs: 600_000,
            input: {
              state: "running_tests",
              role: "tester",
              output: "commands",
              commands: plan.commands,
              allowlist: [
                ["npm", "test"],
                ["npm", "run", "lint"],
              ],
            },
          },
        },
      ]);
  });

  it("an invalid plan (shell string for argv) → iterate tester_schema_invalid: back to building", () => {
    const h = testingAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput('{"summary":"x","commands":[{"argv":"npm test"}]}')))
      .then([
        {
          type: "AgentOutputRecorded",
          data: { parsed: null, validationErrors: ["commands.0.argv: Invalid input: expected array, received string"] },
        },
        { type: "SessionStateChanged", data: { from: "testing", to: "building", reason: "tester_schema_invalid" } },
        { type: "IterationStarted", data: { iteration: 2, reason: "tester_schema_invalid" } },
        { type: "StepScheduled", data: { input: { state: "building", role: "coder" } } },
      ]);
  });

  it("an invalid plan at the cap → max_iterations_reached", () => {
    const h = testingAt(3);
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput("I ran the tests, all fine.")))
      .then([
        { type: "AgentOutputRecorded", data: { parsed: null } },
        { type: "SessionStateChanged", data: { from: "testing", to: "max_iterations_reached", reason: "tester_schema_invalid" } },
        { type: "SessionFinalized", data: { outcome: "max_iterations_reached", reason: "tester_schema_invalid", iterations: 3 } },
      ]);
  });

  // req W7: reaching the cap lists the unresolved items. Here the unresolved item is the
  // tester's invalid plan; the engine lists nothing (openIssues were cleared by the approve).
  it("an invalid plan at the cap lists the tester's validation error as unresolved", () => {
    const h = testingAt(3);
    const { events } = spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput('{"summary":"x","commands":[]}')))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "SessionStateChanged" },
        { type: "SessionFinalized", data: { outcome: "max_iterations_reached" } },
      ]);
    const finalized = events.at(-1)!;
    expect(finalized.type === "SessionFinalized" && finalized.data.unresolved.join("\n")).toContain("commands: Too small");
  });
});

describe("review_loop: running_tests (allowlist runner results)", () => {
  it("all commands pass → approved, nothing unresolved", () => {
    const h = runningTestsAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), commandsOutput([commandResult(["npm", "test"]), commandResult(["npm", "run", "lint"])])))
      .then([
        {
          type: "TestCommandRecorded",
          data: { stepId: h.current(), index: 0, argv: ["npm", "test"], status: "ran", passed: true, exitCode: 0 },
        },
        { type: "TestCommandRecorded", data: { stepId: h.current(), index: 1, argv: ["npm", "run", "lint"], passed: true } },
        { type: "SessionStateChanged", data: { from: "running_tests", to: "approved", reason: "tests_passed" } },
        {
          type: "SessionFinalized",
          data: { outcome: "approved", reason: null, iterations: 1, unresolved: [], errorClass: null, diagnosis: null },
        },
      ]);
  });

  it("a command expected to exit non-zero passes when it does", () => {
    const h = runningTestsAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), commandsOutput([commandResult(["npm", "test"], { exitCode: 1, expectedExitCode: 1 })])))
      .then([
        { type: "TestCommandRecorded", data: { passed: true } },
        { type: "SessionStateChanged", data: { to: "approved" } },
        { type: "SessionFinalized", data: { outcome: "approved" } },
      ]);
  });

  it("a failing command → iterate test_failed; the failure is in the next build's prompt", () => {
    const h = runningTestsAt(1);
    const failing = commandResult(["npm", "test"], {
      exitCode: 1,
      errorClass: "command_failed",
      reason: "exited with code 1",
      stderrTail: "1 failing: verbose flag",
    });
    const { events, state } = spec
      .given(h.events)
      .when(succeeded(h.current(), commandsOutput([failing, commandResult(["npm", "run", "lint"])])))
      .then([
        {
          type: "TestCommandRecorded",
          data: {
            index: 0,
            passed: false,
            exitCode: 1,
            errorClass: "command_failed",
            reason: "exited with code 1",
            stderrTail: "1 failing: verbose flag",
          },
        },
        { type: "TestCommandRecorded", data: { index: 1, passed: true } },
        { type: "SessionStateChanged", data: { from: "running_tests", to: "building", reason: "test_failed" } },
        { type: "IterationStarted", data: { iteration: 2, reason: "test_failed" } },
        { type: "StepScheduled", data: { input: { state: "building", role: "coder", output: "build" } } },
      ]);
    expect(state.openIssues).toEqual(["test npm test: exited with code 1 1 failing: verbose flag"]);
    expect(stepInput(events).prompt).toContain(
      "Resolve these from the previous round:\n- test npm test: exited with code 1 1 failing: verbose flag",
    );
  });

  it("a refused command fails the run with its reason (never silently skipped)", () => {
    const h = runningTestsAt(1);
    const refused = commandResult(["npm", "start"], {
      status: "refused",
      exitCode: null,
      durationMs: 0,
      stdoutTail: "",
      errorClass: "command_refused",
      reason: "long-running server commands are refused",
    });
    const { events } = spec
      .given(h.events)
      .when(succeeded(h.current(), commandsOutput([commandResult(["npm", "test"]), refused])))
      .then([
        { type: "TestCommandRecorded", data: { passed: true } },
        {
          type: "TestCommandRecorded",
          data: {
            index: 1,
            status: "refused",
            passed: false,
            exitCode: null,
            errorClass: "command_refused",
            reason: "long-running server commands are refused",
          },
        },
        { type: "SessionStateChanged", data: { to: "building", reason: "test_failed" } },
        { type: "IterationStarted", data: { iteration: 2 } },
        { type: "StepScheduled" },
      ]);
    expect(stepInput(events).prompt).toContain("- test npm start: long-running server commands are refused");
  });

  it("no results at all is not a pass", () => {
    const h = runningTestsAt(1);
    spec
      .given(h.events)
      .when(succeeded(h.current(), commandsOutput([])))
      .then([
        { type: "SessionStateChanged", data: { to: "building", reason: "test_failed" } },
        { type: "IterationStarted" },
        { type: "StepScheduled" },
      ]);
  });

  it("a failing command at the cap → max_iterations_reached listing the failing command", () => {
    const h = runningTestsAt(3);
    spec
      .given(h.events)
      .when(
        succeeded(
          h.current(),
          commandsOutput([
            commandResult(["npm", "test"], {
              exitCode: 2,
              errorClass: "command_failed",
              reason: "exited with code 2",
              stderrTail: "TypeError: x is undefined",
            }),
          ]),
        ),
      )
      .then([
        { type: "TestCommandRecorded", data: { passed: false } },
        { type: "SessionStateChanged", data: { from: "running_tests", to: "max_iterations_reached", reason: "test_failed" } },
        {
          type: "SessionFinalized",
          data: {
            outcome: "max_iterations_reached",
            reason: "test_failed",
            iterations: 3,
            unresolved: ["test npm test: exited with code 2 TypeError: x is undefined"],
            errorClass: "command_failed",
            diagnosis: "npm test: exited with code 2",
          },
        },
      ]);
  });
});

// ---- W9 / W10 / R4: failures, cancel, late results --------------------------------------

describe("review_loop: a step that gave up", () => {
  it("provider_network_error after retries → failed with its class and diagnosis", () => {
    const h = building();
    spec
      .given(h.events)
      .when(gaveUp(h.current(), "provider_network_error", "socket hang up (ECONNRESET) after 4 attempts"))
      .then([
        { type: "SessionStateChanged", data: { from: "building", to: "failed", reason: "step_failed" } },
        {
          type: "SessionFinalized",
          data: {
            outcome: "failed",
            reason: null,
            iterations: 1,
            errorClass: "provider_network_error",
            diagnosis: "socket hang up (ECONNRESET) after 4 attempts",
          },
        },
      ]);
  });

  it("a disconnect while reviewing is never classified schema_invalid (req W10)", () => {
    const h = reviewingAt(1);
    const { events } = spec
      .given(h.events)
      .when(gaveUp(h.current(), "provider_network_error", "stream ended before the reply was complete"))
      .then([
        { type: "SessionStateChanged", data: { from: "reviewing", to: "failed", reason: "step_failed" } },
        {
          type: "SessionFinalized",
          data: { outcome: "failed", errorClass: "provider_network_error", diagnosis: "stream ended before the reply was complete" },
        },
      ]);
    expect(JSON.stringify(events)).not.toContain("schema_invalid");
  });

  it.each([
    ["proposal_coder", "provider_auth_error"],
    ["testing", "provider_rate_limit"],
    ["running_tests", "timeout"],
    ["reviewing", "tool_error"],
  ] as const)("in %s with %s → failed with that class", (where, errorClass) => {
    const h =
      where === "proposal_coder"
        ? proposalStarted()
        : where === "testing"
          ? testingAt(1)
          : where === "running_tests"
            ? runningTestsAt(1)
            : reviewingAt(1);
    spec
      .given(h.events)
      .when(gaveUp(h.current(), errorClass, "diagnosis line"))
      .then([
        { type: "SessionStateChanged", data: { from: where, to: "failed", reason: "step_failed" } },
        { type: "SessionFinalized", data: { outcome: "failed", errorClass, diagnosis: "diagnosis line" } },
      ]);
  });
});

describe("review_loop: Cancel", () => {
  it("mid-step → CancelRequested, the current step cancelled, finalized cancelled", () => {
    const h = reviewingAt(2);
    const { state } = spec
      .given(h.events)
      .when({ type: "Cancel", reason: "wrong branch" })
      .then([
        { type: "CancelRequested", data: { reason: "wrong branch" } },
        { type: "StepCancelled", data: { stepId: h.current() } },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "cancelled", reason: "cancel" } },
        {
          type: "SessionFinalized",
          data: { outcome: "cancelled", reason: "cancelled by an operator", iterations: 2, errorClass: "cancelled" },
        },
      ]);
    expect(state).toMatchObject({ status: "finished", outcome: "cancelled", step: null });
  });

  it("while awaiting confirm (no step) → no StepCancelled", () => {
    spec
      .given(awaitingConfirm().events)
      .when({ type: "Cancel", reason: "not needed" })
      .then([
        { type: "CancelRequested" },
        { type: "SessionStateChanged", data: { from: "awaiting_operator_confirm", to: "cancelled" } },
        { type: "SessionFinalized", data: { outcome: "cancelled", errorClass: "cancelled" } },
      ]);
  });

  it("on a finished session → CONFLICT (it moved on: the same rule as confirm, docs/api.md)", () => {
    spec
      .given(approvedSession().events)
      .when({ type: "Cancel", reason: "too late" })
      .thenThrows("CONFLICT", "the session already finished (approved): it moved on");
  });

  it("on a session that does not exist → NOT_FOUND", () => {
    spec.given([]).when({ type: "Cancel", reason: "x" }).thenThrows("NOT_FOUND", "no such task session");
  });
});

describe("review_loop: results for a step that is not the current one", () => {
  it("a late result for an earlier step → no events", () => {
    const h = building();
    const earlier = h.current();
    built(h).enter("reviewing");
    spec
      .given(h.events)
      .when(succeeded(earlier, agentOutput("late")))
      .thenNothing();
  });

  it("a result after cancel → no events", () => {
    const h = building();
    const stepId = h.current();
    h.add({ type: "CancelRequested", data: { reason: "stop" } }, { type: "StepCancelled", data: { stepId } }).enter("cancelled", {
      reason: "cancel",
    });
    spec
      .given(h.events)
      .when(succeeded(stepId, agentOutput("done anyway")))
      .thenNothing();
  });

  it("a give-up after cancel → no events", () => {
    const h = reviewingAt(1);
    const stepId = h.current();
    h.add({ type: "CancelRequested", data: { reason: "stop" } }, { type: "StepCancelled", data: { stepId } }).enter("cancelled", {
      reason: "cancel",
    });
    spec
      .given(h.events)
      .when(gaveUp(stepId, "cancelled", "aborted"))
      .thenNothing();
  });

  it("a result for an unknown step id → no events", () => {
    spec
      .given(reviewingAt(1).events)
      .when(succeeded("99999999-0000-4000-8000-000000000001", agentOutput(JSON.stringify(approve))))
      .thenNothing();
  });

  it("a retry's success after a retryable failure (StepFailed with retryAt) still counts", () => {
    const h = reviewingAt(1);
    h.add({
      type: "StepFailed",
      data: {
        stepId: h.current(),
        attempt: 1,
        errorClass: "provider_network_error",
        message: "reset",
        retryAt: "2026-01-01T00:00:01.000Z",
      },
    });
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(approve)), 2))
      .then([
        { type: "AgentOutputRecorded", data: { attempt: 2 } },
        { type: "ReviewVerdictRecorded" },
        { type: "SessionStateChanged", data: { to: "testing" } },
        { type: "StepScheduled" },
      ]);
  });
});

// The runner records StepCompleted / the final StepFailed, and the reactor
// (server/workflow/reactor.ts) folds the stream *including* that event before it decides.
describe("review_loop: deciding on a history that already holds the step's outcome", () => {
  it("StepCompleted recorded for the current step, then StepSucceeded → the workflow moves on", () => {
    const h = building();
    const output = agentOutput("Implemented.", { commit: buildCommit("b1", [{ path: "src/cli.ts", status: "modified" }]) });
    h.stepCompleted(output);
    spec
      .given(h.events)
      .when(succeeded(h.current(), output))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "WorkspaceCommitted" },
        { type: "SessionStateChanged", data: { from: "building", to: "reviewing" } },
        { type: "StepScheduled" },
      ]);
  });

  it("final StepFailed recorded for the current step, then StepGaveUp → failed", () => {
    const h = building();
    h.add({
      type: "StepFailed",
      data: { stepId: h.current(), attempt: 4, errorClass: "provider_network_error", message: "ECONNRESET", retryAt: null },
    });
    spec
      .given(h.events)
      .when(gaveUp(h.current(), "provider_network_error", "ECONNRESET"))
      .then([
        { type: "SessionStateChanged", data: { from: "building", to: "failed" } },
        { type: "SessionFinalized", data: { outcome: "failed", errorClass: "provider_network_error" } },
      ]);
  });
});

// ---- W9: rerun (a fork whose state is the workflow's initial state) ---------------------

describe("review_loop: Begin (rerun fork)", () => {
  /** The parent's history (with `mode`), then the rerun fork back to the initial state. */
  const forked = (parent: SessionHistory, mode: string): AppEvent[] => [
    ...parent.events.map((e): AppEvent => (e.type === "TaskStarted" ? { ...e, data: { ...e.data, mode } } : e)),
    {
      type: "SessionForked",
      data: {
        parentId: "parent-session",
        atVersion: parent.events.length,
        reason: "rerun",
        title: "Verbose flag (rerun)",
        workflow: "review_loop",
        state: "start",
      },
    },
  ];

  it("forked right after TaskStarted → the start transition (implementation: building)", () => {
    const parent = new SessionHistory(reviewLoop).created(config("implementation"));
    spec
      .given(forked(parent, "implementation"))
      .when({ type: "Begin" })
      .then([
        { type: "SessionStateChanged", data: { from: "start", to: "building", reason: "start" } },
        { type: "StepScheduled", data: { stepId: decidedId(1), input: { state: "building", role: "coder", output: "build" } } },
      ]);
  });

  it("a finished proposal-mode session rerun → the roundtable starts again", () => {
    const parent = awaitingConfirm();
    parent.add({ type: "CancelRequested", data: { reason: "x" } }).enter("cancelled", { reason: "cancel" });
    spec
      .given(forked(parent, "proposal"))
      .when({ type: "Begin" })
      .then([
        { type: "SessionStateChanged", data: { from: "start", to: "proposal_coder", reason: "start" } },
        { type: "StepScheduled", data: { input: { state: "proposal_coder", role: "coder", output: "text" } } },
      ]);
  });

  it("outside the initial state → PRECONDITION_FAILED", () => {
    spec.given(building().events).when({ type: "Begin" }).thenThrows("PRECONDITION_FAILED", 'cannot begin: session is in "building"');
  });

  it("on a finished session that was not forked → PRECONDITION_FAILED", () => {
    spec
      .given(approvedSession().events)
      .when({ type: "Begin" })
      .thenThrows("PRECONDITION_FAILED", 'cannot begin: session is in "approved"');
  });

  // W9: a rerun is a *new execution*. Forked from a session that used up its 3 iterations,
  // it must get its own budget: its first changes_requested iterates, it does not end it.
  it("a rerun of a session that hit the cap starts again at iteration 1", () => {
    const parent = reviewingAt(3);
    reviewed(parent, changes).enter("max_iterations_reached", { reason: "changes_requested" });
    const h = new SessionHistory(reviewLoop);
    h.add(...forked(parent, "implementation"));
    h.fsm = "start";
    h.iteration = 1;
    h.enter("building", { reason: "start" });
    built(h).enter("reviewing");
    spec
      .given(h.events)
      .when(succeeded(h.current(), agentOutput(JSON.stringify(changes))))
      .then([
        { type: "AgentOutputRecorded" },
        { type: "ReviewVerdictRecorded" },
        { type: "SessionStateChanged", data: { from: "reviewing", to: "building", reason: "changes_requested" } },
        { type: "IterationStarted", data: { iteration: 2 } },
        { type: "StepScheduled" },
      ]);
  });
});
