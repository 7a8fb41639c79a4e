// The engine's built-in workflow definitions, as data: the review loop of the task workflow
// (req W1–W12) and the planning FSM (req M7). Both pass loadDefinition's checks. The Forge
// pipeline's (req F1–F14) is Forge's (server/forge/definition.ts); the application's
// built-ins are composed in server/task-engine.ts.
import { loadDefinition, type WorkflowDefinition } from "./definition";

const reviewLoop = {
  id: "review_loop",
  version: 1,
  title: "Review loop: roundtable, confirm, build, strict review and tests",
  modes: ["proposal", "implementation"],
  initial: "start",
  maxIterations: 3,
  global: { cancel: "cancelled", step_failed: "failed" },
  // A modify fork builds the requested change, then review and tests as usual.
  modify: { state: "building", iterate: true },
  states: {
    start: {
      type: "wait",
      description: "The task was submitted; its mode picks the first phase.",
      on: {
        start: [
          { target: "proposal_coder", guard: "mode_proposal" },
          { target: "building", guard: "mode_implementation" },
        ],
      },
    },
    proposal_coder: {
      type: "step",
      description: "Roundtable: the coder proposes an approach.",
      step: {
        role: "coder",
        output: "text",
        phase: "discussion",
        instruction: "Propose how you would implement the task: approach, files to change, risks. Do not change any file yet.",
      },
      on: { done: [{ target: "proposal_reviewer" }] },
    },
    proposal_reviewer: {
      type: "step",
      description: "Roundtable: the reviewer critiques the proposal in plain text.",
      step: {
        role: "reviewer",
        output: "text",
        phase: "discussion",
        instruction: "Critique the coder's proposal in plain text: what is missing, what could go wrong, what you would do differently.",
      },
      on: { done: [{ target: "proposal_tester" }] },
    },
    proposal_tester: {
      type: "step",
      description: "Roundtable: the tester comments on testability and risk in plain text.",
      step: {
        role: "tester",
        output: "text",
        phase: "discussion",
        instruction: "Comment in plain text on how the proposal can be tested and what the risks are.",
      },
      on: { done: [{ target: "awaiting_operator_confirm" }] },
    },
    awaiting_operator_confirm: {
      type: "wait",
      description: "The roundtable is over; only an operator's confirm starts the implementation.",
      on: { confirm: [{ target: "building", reason: "operator confirmed" }] },
    },
    building: {
      type: "step",
      description: "The coder implements; its edits are committed in the session workspace.",
      step: {
        role: "coder",
        output: "build",
        phase: "build",
        instruction: "Implement the task in the workspace. Address every finding and failure listed below.",
      },
      on: { done: [{ target: "reviewing" }] },
    },
    reviewing: {
      type: "step",
      description: "The reviewer returns a strict JSON verdict; blocking findings forbid approve.",
      step: {
        role: "reviewer",
        output: "review_verdict",
        phase: "verdict",
        instruction:
          'Review the change (its git diff is headed "The change under review"). Reply with JSON only: {"decision": "approve" | "changes_requested", "summary": string, "findings": [{"severity": "blocking" | "major" | "minor" | "nit", "file": string, "line"?: number, "message": string}]}',
      },
      on: {
        approve: [{ target: "testing" }],
        changes_requested: [
          { target: "building", guard: "under_cap", iterate: true, reason: "changes_requested" },
          { target: "max_iterations_reached", guard: "at_cap", reason: "changes_requested" },
        ],
        schema_invalid: [{ target: "review_schema_invalid", reason: "review_schema_invalid" }],
      },
    },
    testing: {
      type: "step",
      description: "The tester returns a strict JSON test plan: commands with expectations.",
      step: {
        role: "tester",
        output: "test_plan",
        phase: "test",
        instruction:
          'Plan the tests. Reply with JSON only: {"summary": string, "commands": [{"argv": [string, ...], "description"?: string, "expect"?: {"exitCode": number}}]}. Commands run without a shell, through the project allowlist.',
      },
      on: {
        plan_valid: [{ target: "running_tests" }],
        schema_invalid: [
          { target: "building", guard: "under_cap", iterate: true, reason: "tester_schema_invalid" },
          { target: "max_iterations_reached", guard: "at_cap", reason: "tester_schema_invalid" },
        ],
      },
    },
    running_tests: {
      type: "step",
      description: "The test plan's commands run through the allowlist runner.",
      step: { role: "tester", output: "commands", phase: "test", instruction: "Run the planned commands." },
      on: {
        tests_passed: [{ target: "approved" }],
        tests_failed: [
          { target: "building", guard: "under_cap", iterate: true, reason: "test_failed" },
          { target: "max_iterations_reached", guard: "at_cap", reason: "test_failed" },
        ],
      },
    },
    approved: { type: "terminal", outcome: "approved", description: "Reviewed, tested, approved." },
    review_schema_invalid: {
      type: "terminal",
      outcome: "review_schema_invalid",
      description: "The reviewer's output was not valid JSON or failed the schema.",
    },
    max_iterations_reached: {
      type: "terminal",
      outcome: "max_iterations_reached",
      description: "The iteration cap was reached with items unresolved.",
    },
    failed: { type: "terminal", outcome: "failed", description: "An agent or tool failed beyond its retries." },
    cancelled: { type: "terminal", outcome: "cancelled", description: "An operator cancelled the run." },
  },
};

const planning = {
  id: "planning",
  version: 1,
  title: "Planning: INIT → PLANNING → EXECUTING → TESTING → DONE",
  modes: ["implementation"],
  initial: "init",
  maxIterations: 3,
  global: { cancel: "cancelled", step_failed: "failed" },
  states: {
    init: {
      type: "wait",
      description: "INIT: accepts the human's epic.",
      on: { start: [{ target: "planning", reason: "epic_received" }] },
    },
    planning: {
      type: "step",
      description: "PLANNING: the planner writes a TaskSpec, checked against its schema and the planner's manifest.",
      step: {
        role: "planner",
        output: "task_spec",
        phase: "plan",
        instruction:
          'Write the TaskSpec for the epic. Reply with JSON only: {"title": string, "description": string, "acceptanceCriteria": [string, ...], "files": [path or glob, ...], "tests": [{"argv": [string, ...]}]}',
      },
      on: { task_spec_valid: [{ target: "executing" }], task_spec_invalid: [{ target: "failed", reason: "task_spec_invalid" }] },
    },
    executing: {
      type: "step",
      description: "EXECUTING: the executor changes the code; changes outside its manifest or the TaskSpec are rejected.",
      step: {
        role: "executor",
        output: "execution",
        phase: "execute",
        instruction: "Implement the TaskSpec in the workspace. Change only the files it names.",
      },
      on: {
        execution_done: [{ target: "testing" }],
        execution_rejected: [
          { target: "executing", guard: "under_cap", iterate: true, reason: "execution_rejected" },
          { target: "failed", guard: "at_cap", reason: "execution_rejected: loop limit reached, escalated to a person" },
        ],
      },
    },
    testing: {
      type: "step",
      description: "TESTING: the tester plans the test commands.",
      step: {
        role: "tester",
        output: "test_plan",
        phase: "test",
        instruction: 'Plan the tests for the TaskSpec. Reply with JSON only: {"summary": string, "commands": [{"argv": [string, ...]}]}',
      },
      on: {
        plan_valid: [{ target: "running_tests" }],
        schema_invalid: [
          { target: "executing", guard: "under_cap", iterate: true, reason: "tester_schema_invalid" },
          { target: "failed", guard: "at_cap", reason: "tester_schema_invalid: loop limit reached, escalated to a person" },
        ],
      },
    },
    running_tests: {
      type: "step",
      description: "TESTING: the commands run through the allowlist runner.",
      step: { role: "tester", output: "commands", phase: "test", instruction: "Run the planned commands." },
      on: {
        tests_passed: [{ target: "done", reason: "tests_pass" }],
        tests_failed: [
          { target: "executing", guard: "under_cap", iterate: true, reason: "tests_fail" },
          { target: "failed", guard: "at_cap", reason: "tests_fail: EXECUTING↔TESTING loop limit reached, escalated to a person" },
        ],
      },
    },
    done: { type: "terminal", outcome: "done", description: "DONE (read-only)." },
    failed: { type: "terminal", outcome: "failed", description: "FAILED: a person must step in." },
    cancelled: { type: "terminal", outcome: "cancelled", description: "An operator cancelled the run." },
  },
};

export const REVIEW_LOOP_WORKFLOW: WorkflowDefinition = loadDefinition(reviewLoop);
export const PLANNING_WORKFLOW: WorkflowDefinition = loadDefinition(planning);
