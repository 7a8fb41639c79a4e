// The one-line summary of every event type, as timelines and exports show it
// (appRegistry.summarize over the data the catalog stored). One row per event type and one
// more per branch of its summary (optional parts, ternaries, joins, cuts), each with the
// exact line written out, so that any change to a summary's wording or logic fails a row.
// Also: the table names every type the registry knows, and summarize's own 200-character
// cut and its fallback to the type name; and how an actor is labelled (actorLabel).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actorLabel, appRegistry, type AppEventOf, type AppEventType } from "../../server/events/catalog";
import { configCatalog } from "../../server/events/config-catalog";
import { conversationCatalog } from "../../server/events/conversation-catalog";
import { deliveryCatalog } from "../../server/events/delivery-catalog";
import { forgeCatalog } from "../../server/events/forge-catalog";
import { stepCatalog } from "../../server/events/step-catalog";
import { pruningCatalog } from "../../server/events/pruning-catalog";
import { teamCatalog } from "../../server/events/team-catalog";
import { defineEvent, EventRegistry } from "../../server/events/registry";
import { BASE_COMMIT, blobRef, commandResult } from "../helpers/decider";

const STEP = "22222222-0000-4000-8000-000000000001";
const CALL = "33333333-0000-4000-8000-000000000001";
const INVITE = "44444444-0000-4000-8000-000000000001";
const USER = "55555555-0000-4000-8000-000000000001";
const TOKEN = "66666666-0000-4000-8000-000000000001";
/** Hex digests whose cut (first 10 or 12 characters) is easy to read. */
const HASH = "0123456789abcdef".repeat(4);
const OTHER_HASH = "fedcba9876543210".repeat(4);
const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const BLOB = blobRef("# PRD");
const LOOP = { similarity: null, persisted: [], reopened: [], stalled: false, warning: null, escalate: null };

type Row = [type: AppEventType, data: unknown, summary: string];

/** A row of the table: the data is typed by the catalog, the summary written out. */
function row<T extends AppEventType>(type: T, data: AppEventOf<T>["data"], summary: string): Row {
  return [type, data, summary];
}

/** The line a timeline shows: the data as the catalog stores it, summarized. */
function timelineLine(type: string, data: unknown): string {
  return appRegistry.summarize(type, appRegistry.encode(type, data).data);
}

const ROWS: Row[] = [
  // ---- Sessions and steps ------------------------------------------------------------
  row("SessionCreated", { title: "Word counter", workflow: "forge", state: "start" }, 'Session "Word counter" created (forge)'),
  row(
    "SessionForked",
    { parentId: "s-1", atVersion: 7, reason: "modify", title: "T", workflow: "forge", state: "start" },
    "Forked from s-1 at event 7 (modify)",
  ),
  row(
    "SessionForked",
    { parentId: "s-1", atVersion: 7, reason: "modify", title: "T", workflow: "forge", state: "start", note: "try again" },
    "Forked from s-1 at event 7 (modify): try again",
  ),
  row("SessionResumed", { from: "cancelled", state: "coding" }, "Resumed (it had ended cancelled): coding runs again"),
  row(
    "ChangeRequested",
    {
      text: "Count lines too.",
      baseSessionId: "s-1",
      baseCommit: COMMIT,
      fingerprint: { files: 3, digest: "d", changedSinceBase: [], addedSinceBase: [], removedSinceBase: [] },
      basePlan: {},
    },
    "Change requested on s-1: Count lines too.",
  ),
  row("SessionStateChanged", { from: "coding", to: "reviewing" }, "State coding → reviewing"),
  row("SessionStateChanged", { from: "coding", to: "reviewing", reason: "built" }, "State coding → reviewing (built)"),
  row("SessionStateChanged", { from: "coding", to: "gate", waitsFor: "person" }, "State coding → gate — waits for a person"),
  row("OperatorMessagePosted", { text: "Ship it" }, "Message: Ship it"),
  row("StepScheduled", { stepId: STEP, kind: "echo", input: { say: "hi" }, timeoutMs: 1000, maxAttempts: 1 }, "Step echo scheduled"),
  row(
    "StepStarted",
    { stepId: STEP, attempt: 2, runnerId: "runner-1", leaseExpiresAt: "2026-01-01T00:10:00.000Z" },
    "Step started (attempt 2) on runner runner-1",
  ),
  row("StepCompleted", { stepId: STEP, attempt: 3, output: { ok: true } }, "Step completed (attempt 3)"),
  row(
    "StepCompleted",
    { stepId: STEP, attempt: 1, output: { egressRefused: ["example.com:443", "evil.test:80"] } },
    "Step completed (attempt 1); the egress proxy refused example.com:443, evil.test:80",
  ),
  row("StepCompleted", { stepId: STEP, attempt: 1, output: { egressRefused: "not a list" } }, "Step completed (attempt 1)"),
  row(
    "StepFailed",
    { stepId: STEP, attempt: 1, errorClass: "timeout", message: "took too long", retryAt: null },
    "Step failed (attempt 1): timeout: took too long",
  ),
  row(
    "StepFailed",
    { stepId: STEP, attempt: 1, errorClass: "timeout", message: "took too long", retryAt: "2026-01-01T00:01:00.000Z" },
    "Step failed (attempt 1): timeout: took too long — will retry",
  ),
  row("StepReleased", { stepId: STEP, attempt: 2, reason: "shutting down" }, "Step released by its runner (attempt 2): shutting down"),

  // ---- Tasks ---------------------------------------------------------------------------
  row(
    "TaskStarted",
    {
      workflow: "forge",
      workflowVersion: 1,
      mode: "new",
      prompt: "A word counter.",
      maxIterations: 5,
      project: { id: "p", name: "Counter", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [] },
      agents: { coder: { id: "coder" } },
    },
    "Task started (forge, new mode) on Counter: A word counter.",
  ),
  row("IterationStarted", { iteration: 2, reason: "changes requested" }, "Iteration 2 (changes requested)"),
  row("IterationStarted", { iteration: 2, reason: "changes requested", stage: "design" }, "Iteration 2 of design (changes requested)"),
  row(
    "AgentOutputRecorded",
    {
      stepId: STEP,
      attempt: 1,
      role: "coder",
      agentId: "claude",
      phase: "discussion",
      raw: blobRef("Looks fine."),
      preview: "Looks fine.",
      parsed: null,
      validationErrors: [],
      simulated: true,
    },
    "coder said: Looks fine.",
  ),
  row(
    "AgentOutputRecorded",
    {
      stepId: STEP,
      attempt: 1,
      role: "reviewer",
      agentId: "codex",
      phase: "verdict",
      raw: blobRef("not json"),
      preview: "not json",
      parsed: null,
      validationErrors: ["no decision", "no summary"],
      simulated: false,
    },
    "reviewer (verdict): INVALID: no decision",
  ),
  row(
    "AgentOutputStreamed",
    { stepId: STEP, attempt: 1, role: "coder", seq: 0, text: "Reading\n\n  the \t files" },
    "coder is writing: Reading the files",
  ),
  // Whitespace runs collapse to one space, then only the last 120 characters are kept.
  row(
    "AgentOutputStreamed",
    { stepId: STEP, attempt: 1, role: "coder", seq: 3, text: `first\n\n${"a".repeat(10)}  \t ${"b".repeat(115)}` },
    `coder is writing: aaaa ${"b".repeat(115)}`,
  ),
  row(
    "WorkspaceCommitted",
    { stepId: STEP, commit: COMMIT, parent: BASE_COMMIT, empty: true, changedFiles: [], diff: blobRef("") },
    "No files changed",
  ),
  row(
    "WorkspaceCommitted",
    {
      stepId: STEP,
      commit: COMMIT,
      parent: BASE_COMMIT,
      empty: false,
      changedFiles: [
        { path: "src/count.js", status: "added" },
        { path: "test/count.test.js", status: "modified" },
      ],
      diff: blobRef("diff"),
    },
    "Committed 0123456789: src/count.js, test/count.test.js",
  ),
  row(
    "ReviewVerdictRecorded",
    { stepId: STEP, decision: "approve", modelDecision: "approve", override: null, summary: "ok", findings: [] },
    "Verdict: approve — 0 finding(s)",
  ),
  row(
    "ReviewVerdictRecorded",
    {
      stepId: STEP,
      decision: "changes_requested",
      modelDecision: "approve",
      override: "tests failed",
      summary: "ok",
      findings: [
        { severity: "blocking", file: "a.js", message: "m" },
        { severity: "nit", file: "b.js", line: 3, message: "n" },
      ],
    },
    "Verdict: changes_requested (tests failed) — 2 finding(s)",
  ),
  row(
    "TestPlanRecorded",
    {
      stepId: STEP,
      summary: "s",
      commands: [
        { argv: ["node", "--test"], expect: { exitCode: 0 } },
        { argv: ["npm", "run", "lint"], expect: { exitCode: 0 } },
      ],
    },
    "Test plan: node --test; npm run lint",
  ),
  row("TestCommandRecorded", { ...commandResult(["node", "--test"]), stepId: STEP, index: 0, passed: true }, "PASS node --test (exit 0)"),
  row(
    "TestCommandRecorded",
    { ...commandResult(["node", "--test"], { exitCode: 1, errorClass: "command_failed" }), stepId: STEP, index: 1, passed: false },
    "FAIL node --test (exit 1)",
  ),
  row(
    "TestCommandRecorded",
    {
      ...commandResult(["rm", "-rf", "/"], {
        status: "refused",
        exitCode: null,
        errorClass: "command_refused",
        reason: "not in the allowlist",
      }),
      stepId: STEP,
      index: 2,
      passed: false,
    },
    "FAIL rm -rf / — refused: not in the allowlist",
  ),
  row(
    "TestCommandRecorded",
    {
      ...commandResult(["rm", "x"], { status: "refused", exitCode: null, errorClass: "command_refused" }),
      stepId: STEP,
      index: 3,
      passed: false,
    },
    "FAIL rm x — refused",
  ),
  row(
    "TaskSpecRecorded",
    {
      stepId: STEP,
      spec: {
        title: "Counter",
        description: "Count the words of a file.",
        acceptanceCriteria: ["counts words"],
        files: ["src/count.js"],
        tests: [],
      },
    },
    "TaskSpec accepted",
  ),
  row("ExecutionRejected", { stepId: STEP, reasons: ["touched README.md", "no tests"] }, "Execution rejected: touched README.md; no tests"),
  row("OperatorConfirmed", { via: "button" }, "Operator confirmed the proposal (button)"),
  row("SystemReplied", { text: "Nothing to do." }, "Nothing to do."),
  row("CancelRequested", { reason: "wrong idea" }, "Cancel requested: wrong idea"),
  row("StepCancelled", { stepId: STEP }, "Running step cancelled"),
  row(
    "SessionFinalized",
    { outcome: "approved", reason: null, iterations: 2, unresolved: [], errorClass: null, diagnosis: null },
    "Finished: approved",
  ),
  row(
    "SessionFinalized",
    { outcome: "unresolved", reason: "iteration cap reached", iterations: 5, unresolved: ["F1"], errorClass: null, diagnosis: null },
    "Finished: unresolved (iteration cap reached)",
  ),
  // The error class wins over the reason.
  row(
    "SessionFinalized",
    {
      outcome: "failed",
      reason: "agent failed",
      iterations: 1,
      unresolved: [],
      errorClass: "provider_auth_error",
      diagnosis: "the API key was refused",
    },
    "Finished: failed — provider_auth_error: the API key was refused",
  ),
  // A failure whose class has no diagnosis: the class alone.
  row(
    "SessionFinalized",
    { outcome: "failed", reason: "agent failed", iterations: 1, unresolved: [], errorClass: "timeout", diagnosis: null },
    "Finished: failed — timeout",
  ),

  // ---- Brains, runtime context, attention, configuration -------------------------------
  row(
    "RateLimitWaited",
    { stepId: STEP, attempt: 1, brain: "claude", minIntervalMs: 2000, waitMs: 1500 },
    "Waited 1500 ms for brain claude (rate limit: one call per 2000 ms)",
  ),
  row(
    "ProviderRetried",
    { stepId: STEP, attempt: 1, agent: "claude-cli", retry: 2, maxRetries: 5, delayMs: 3000, error: "429 Too Many Requests" },
    "claude-cli retried its provider request (2 of 5) after: 429 Too Many Requests, waiting 3000 ms",
  ),
  row(
    "ProviderRetried",
    { stepId: STEP, attempt: 1, agent: "claude-cli", retry: 2, maxRetries: null, delayMs: null, error: "429 Too Many Requests" },
    "claude-cli retried its provider request (2) after: 429 Too Many Requests",
  ),
  // Zero is a value, not an absence.
  row(
    "ProviderRetried",
    { stepId: STEP, attempt: 1, agent: "claude-cli", retry: 1, maxRetries: 0, delayMs: 0, error: "overloaded" },
    "claude-cli retried its provider request (1 of 0) after: overloaded, waiting 0 ms",
  ),
  row(
    "RuntimeContextRecorded",
    {
      runId: "run-1",
      createdAt: "2026-01-01T00:00:00.000Z",
      source: { dir: ".catcafe", commit: COMMIT, files: ["settings.json"], configVersion: "1" },
      settings: {},
      project: {},
      roles: { coder: { agentId: "claude", source: "config" }, reviewer: { agentId: "codex", source: "project" } },
      agents: {},
    },
    "Runtime context run-1: coder=claude, reviewer=codex (.catcafe 1 at 0123456789)",
  ),
  row("AttentionAcknowledged", { attention: "escalated" }, "Acknowledged (escalated)"),
  row(
    "ConfigChanged",
    {
      scope: "project",
      projectId: "p-1",
      changes: [
        { path: ["limits", "maxCalls"], from: 5, to: 10 },
        { path: ["agents", 0, "model"], to: "gpt" },
      ],
      revertOf: 4,
    },
    'Project p-1 (revert of #4): limits.maxCalls 5 → 10; agents.0.model null → "gpt"',
  ),
  row(
    "ConfigChanged",
    { scope: "server", projectId: null, changes: [{ path: ["rateLimit"], from: { ms: 100 } }] },
    'Server settings: rateLimit {"ms":100} → null',
  ),

  // ---- Staged workflows (Forge) ----------------------------------------------------------
  row("StageStarted", { stage: "prd" }, "Stage prd started"),
  row("StageCompleted", { stage: "prd", artifacts: [] }, "Stage prd completed (no artifacts)"),
  row(
    "StageCompleted",
    {
      stage: "prd",
      artifacts: [
        { path: "docs/prd.md", hash: HASH },
        { path: "docs/features.json", hash: OTHER_HASH },
      ],
    },
    "Stage prd completed (docs/prd.md, docs/features.json)",
  ),
  row("StageReopened", { stage: "coding", reason: "a check failed" }, "Stage coding reopened (a check failed)"),
  row(
    "ArtifactRecorded",
    { stepId: STEP, stage: "prd", path: "docs/prd.md", hash: HASH, blob: BLOB, size: 5, problems: [] },
    "docs/prd.md drafted (0123456789, 5 bytes)",
  ),
  row(
    "ArtifactRecorded",
    { stepId: STEP, stage: "prd", path: "docs/prd.md", hash: HASH, blob: BLOB, size: 5, problems: ["no title", "no goals"] },
    "docs/prd.md drafted (0123456789, 5 bytes) — 2 problem(s)",
  ),
  row(
    "ArtifactEdited",
    { baseHash: null, stage: "prd", path: "docs/prd.md", hash: HASH, blob: BLOB, size: 5, problems: [] },
    "docs/prd.md edited by a person (new → 0123456789)",
  ),
  row(
    "ArtifactEdited",
    { baseHash: OTHER_HASH, stage: "prd", path: "docs/prd.md", hash: HASH, blob: BLOB, size: 5, problems: [] },
    "docs/prd.md edited by a person (fedcba9876 → 0123456789)",
  ),
  row(
    "ArtifactWriteRefused",
    { stage: "prd", by: "agent", paths: ["src/a.js", "src/b.js"], reason: "outside the stage's globs" },
    "Write refused (agent): src/a.js, src/b.js — outside the stage's globs",
  ),
  row(
    "ArtifactDraftHeld",
    { stepId: STEP, stage: "prd", path: "docs/prd.md", hash: HASH, blob: BLOB, conflicts: 2 },
    "docs/prd.md: the agent's redraft conflicts with a person's edit in 2 place(s); the person's text was kept",
  ),
  row("GatePassed", { stage: "design" }, "A person passed the design draft"),
  row(
    "FeedbackGiven",
    { stage: "prd", iteration: 1, source: "person", severity: "normal", text: "Shorter, please." },
    "Feedback on prd: Shorter, please.",
  ),
  row(
    "FeedbackGiven",
    { stage: null, iteration: 2, source: "guidance", severity: "critical", text: "Use the other API." },
    "Guidance on the session: Use the other API.",
  ),
  row(
    "CritiqueRecorded",
    { stepId: STEP, stage: "prd", round: 1, decision: "pass", modelDecision: "pass", summary: "s", findings: [], loop: LOOP },
    "Critique of prd (round 1): pass",
  ),
  row(
    "CritiqueRecorded",
    {
      stepId: STEP,
      stage: "prd",
      round: 2,
      decision: "revise",
      modelDecision: "revise",
      summary: "s",
      findings: [
        { id: "F1", severity: "blocking", message: "m", source: "critic" },
        { id: "F2", severity: "major", message: "m", source: "critic" },
        { id: "F3", severity: "blocking", message: "m", source: "rule" },
      ],
      loop: { ...LOOP, warning: "same findings as round 1" },
    },
    "Critique of prd (round 2): revise — 2 blocking — warning: same findings as round 1",
  ),
  // Findings, none blocking; the escalation wins over the warning.
  row(
    "CritiqueRecorded",
    {
      stepId: STEP,
      stage: "prd",
      round: 3,
      decision: "escalate",
      modelDecision: "revise",
      summary: "s",
      findings: [{ id: "F4", severity: "minor", message: "m", source: "critic" }],
      loop: { ...LOOP, stalled: true, warning: "w", escalate: "no progress in 3 rounds" },
    },
    "Critique of prd (round 3): escalate — 0 blocking — no progress in 3 rounds",
  ),
  row(
    "CheckRouted",
    { stepId: STEP, goto: "design", reason: "the API is wrong" },
    "The failed check goes back to design: the API is wrong",
  ),
  row(
    "PersonNeeded",
    { stage: null, cause: "agent_failed", message: "the coder failed 4 times", errorClass: "timeout", resume: "coding" },
    "A person is needed (agent_failed): the coder failed 4 times",
  ),
  row(
    "PersonNeeded",
    { stage: "plan", cause: "cap", message: "iteration cap", errorClass: null, resume: null },
    "A person is needed (cap, plan): iteration cap",
  ),
  row("PersonChose", { choice: "retry" }, "A person chose retry"),
  row(
    "ProgressRecorded",
    {
      stepId: STEP,
      tasks: [],
      features: [
        { id: "F1", status: "done", tasks: 2, done: 2 },
        { id: "F2", status: "in_progress", tasks: 3, done: 1 },
      ],
    },
    "Progress: F1 done (2/2), F2 in_progress (1/3)",
  ),
  // 61.6 s rounds to 62.
  row(
    "BudgetExhausted",
    { limit: "tokens", used: { calls: 3, tokens: 12000, wallMs: 61_600 }, budget: { maxTokens: 10000 } },
    "Budget exhausted (tokens): 3 calls, 12000 tokens, 62 s",
  ),
  row("ForgeWarning", { stage: null, message: "could not read x" }, "Warning: could not read x"),
  row("ForgeWarning", { stage: "coding", message: "could not read x" }, "Warning (coding): could not read x"),

  // ---- Conversations -----------------------------------------------------------------------
  row(
    "ConversationStarted",
    {
      mode: "free",
      config: {},
      agents: [
        { id: "ada", name: "Ada", skills: [] },
        { id: "bob", name: "Bob", skills: ["tests"] },
      ],
      stallAfter: 5,
    },
    "Conversation started in free with @ada, @bob",
  ),
  row(
    "ConversationSetup",
    {
      project: { id: "p-1", name: "P", repoPath: "/repo", baseCommit: COMMIT },
      runtimes: { ada: { role: "coder", config: { id: "claude" } }, bob: { role: "reviewer", config: {} } },
      limits: { stepTimeoutMs: 1000, maxAttempts: 2 },
    },
    "Agents of p-1 at 0123456789ab: ada, bob",
  ),
  row("MessagePosted", { by: "user:1", text: "Hello @ada", mentions: ["ada"] }, "user:1: Hello @ada"),
  row("AgentCallScheduled", { callId: CALL, agent: "ada", prompt: "p", caller: "person", chain: ["ada"] }, "@ada called by a person"),
  row("AgentCallScheduled", { callId: CALL, agent: "ada", prompt: "p", caller: "bob", chain: ["bob", "ada"] }, "@ada called by @bob"),
  row("AgentReplied", { callId: CALL, agent: "ada", text: "Done.", mentions: [] }, "@ada: Done."),
  row(
    "AgentCallFailed",
    { callId: CALL, agent: "ada", errorClass: "timeout", message: "no answer in 60 s" },
    "@ada could not answer (timeout): no answer in 60 s",
  ),
  row(
    "ReplyDiscarded",
    { callId: "c-9", agent: null, errorClass: "unknown_call", reason: "no such call" },
    "Reply discarded (unknown_call): no such call",
  ),
  row(
    "ReplyDiscarded",
    { callId: CALL, agent: "ada", errorClass: "late", reason: "the conversation ended" },
    "Reply of @ada discarded (late): the conversation ended",
  ),
  row("ModeNoted", { note: { kind: "mention_unknown", names: ["eve", "mallory"] } }, "Unknown agents mentioned: @eve, @mallory"),
  row(
    "ModeNoted",
    {
      note: {
        kind: "routed",
        candidates: [{ agent: "ada", score: 2, matched: ["tests"] }],
        chosen: ["ada", "bob"],
        reason: "skills matched",
      },
    },
    "Routed to ada, bob: skills matched",
  ),
  row("ModeNoted", { note: { kind: "routed", candidates: [], chosen: [], reason: "no skill matched" } }, "Not routed: no skill matched"),
  row(
    "ModeNoted",
    { note: { kind: "ballot_rejected", agent: "bob", errors: ["no choice", "weight out of range"] } },
    "Ballot of bob rejected: no choice; weight out of range",
  ),
  row(
    "ModeNoted",
    {
      note: {
        kind: "tallied",
        round: 2,
        outcome: "winner",
        winner: "A",
        totals: [{ choice: "A", weight: 2, ballots: 2, confidence: 0.9, testsPassed: null }],
        absent: [],
        reason: "majority",
      },
    },
    "Vote 2: A wins (majority)",
  ),
  row(
    "ModeNoted",
    { note: { kind: "tallied", round: 3, outcome: "no_quorum", winner: null, totals: [], absent: ["bob"], reason: "too few ballots" } },
    "Vote 3: no winner (too few ballots)",
  ),
  row(
    "ModeNoted",
    { note: { kind: "step", step: "review", agent: "bob", visit: 2, attempt: 1 } },
    "SOP step review → bob (visit 2, attempt 1)",
  ),
  row("ModeNoted", { note: { kind: "sop_completed", steps: ["draft", "review", "ship"] } }, "SOP completed: draft → review → ship"),
  row("ModeNoted", { note: { kind: "needs_person", reason: "agents disagree" } }, "A person is needed: agents disagree"),
  // 90.5 s rounds to 91.
  row("ModeDeadlineSet", { token: "vote-1", afterMs: 90_500 }, "Deadline of vote-1 in 91 s"),
  row("ModeTimedOut", { token: "vote-1" }, "Deadline of vote-1 passed"),
  row("ProgressNoted", { kind: "artifact", detail: "wrote count.js" }, "Progress (artifact): wrote count.js"),
  row(
    "ProgressNoted",
    { kind: "test_result", detail: "node --test", choice: "A", passed: true },
    "Progress (test_result): node --test — A: tests passed",
  ),
  row(
    "ProgressNoted",
    { kind: "test_result", detail: "node --test", choice: "B", passed: false },
    "Progress (test_result): node --test — B: tests failed",
  ),
  // A choice without a result says nothing of its tests.
  row("ProgressNoted", { kind: "decision", detail: "picked", choice: "C" }, "Progress (decision): picked — C"),
  row("ModeSwitched", { from: "free", to: "vote", config: {}, by: "user:1" }, "Mode free → vote by user:1"),
  row("SystemMessage", { text: "Voting opened." }, "Voting opened."),
  row(
    "ConversationStalled",
    { reason: "ada and bob call each other", turns: 6, cycle: ["ada", "bob"] },
    "Stalled: ada and bob call each other — nobody is called until a person writes",
  ),
  row("ConversationTerminated", { reason: "done", by: "user:1", cancelled: [] }, "Terminated by user:1: done"),
  row(
    "TaskStartedFromConversation",
    { by: "user:1", text: "/task split slugify()", sessionId: "s-0123456789ab" },
    "user:1 started task s-0123456789ab: /task split slugify()",
  ),

  // ---- Bake-offs -------------------------------------------------------------------------
  row(
    "BakeOffForked",
    {
      contenders: [
        { id: "c1", sessionId: "s-1-c1-aaaa", coder: "claude-coder", label: "claude-coder" },
        { id: "c2", sessionId: "s-1-c2-bbbb", coder: "codex-coder", model: "o3", label: "codex-coder:o3" },
      ],
    },
    "Bake-off: c1 claude-coder (s-1-c1-aaaa), c2 codex-coder:o3 (s-1-c2-bbbb)",
  ),
  row(
    "BakeOffContender",
    { parentSessionId: "s-1", contenderId: "c2", coder: "codex-coder", model: "o3", label: "codex-coder:o3", agent: { kind: "codex" } },
    "Contender c2 of the bake-off s-1: codex-coder:o3",
  ),
  row("BakeOffJudgeRequested", { stepId: STEP, agentId: "reviewer-gpt", attempt: 2 }, "The judge reviewer-gpt was asked (try 2)"),
  row(
    "BakeOffJudged",
    { stepId: STEP, agent: "reviewer-gpt", recommendation: { winner: "c2", ranking: ["c2", "c1"], reasons: ["smaller"] } },
    "The judge reviewer-gpt recommends c2 (ranking c2 > c1)",
  ),
  row(
    "BakeOffJudgeFailed",
    { stepId: STEP, errorClass: "schema_invalid", message: "winner: Required", retried: true },
    "The judge failed (schema_invalid): winner: Required — asked again",
  ),
  row(
    "BakeOffJudgeFailed",
    { stepId: STEP, errorClass: "timeout", message: "no answer", retried: false },
    "The judge failed (timeout): no answer",
  ),
  row(
    "BakeOffWinnerChosen",
    { contenderId: "c2", sessionId: "s-1-c2-bbbb", reason: "tests pass" },
    "Winner chosen: c2 (s-1-c2-bbbb): tests pass",
  ),
  row("BakeOffWinnerChosen", { contenderId: "c1", sessionId: "s-1-c1-aaaa", reason: null }, "Winner chosen: c1 (s-1-c1-aaaa)"),
  row("BakeOffDismissed", { reason: null }, "Bake-off dismissed: no winner"),
  row("BakeOffDismissed", { reason: "none good" }, "Bake-off dismissed: no winner (none good)"),
  row(
    "BakeOffNotChosen",
    { parentSessionId: "s-1", contenderId: "c1", winner: "c2", endedAs: "approved" },
    "Not chosen (c2 won; it had ended approved)",
  ),
  row("BakeOffNotChosen", { parentSessionId: "s-1", contenderId: "c1", winner: null, endedAs: null }, "Not chosen (no winner; stopped)"),

  // ---- Deliveries ------------------------------------------------------------------------
  row("DeliveryApproved", {}, "Delivery approved"),
  row("DeliveryApproved", { note: "ship it" }, "Delivery approved: ship it"),
  row(
    "DeliveryRequested",
    { stepId: STEP, method: "merge", branch: "catcafe/s-1", commit: COMMIT, target: "main", remote: null, pullRequest: null },
    "Delivery asked: merge catcafe/s-1 (0123456789ab) into main",
  ),
  row(
    "DeliveryRequested",
    { stepId: STEP, method: "push", branch: "catcafe/s-1", commit: COMMIT, target: "main", remote: "origin", pullRequest: null },
    "Delivery asked: push catcafe/s-1 (0123456789ab) to origin",
  ),
  row(
    "DeliveryRequested",
    { stepId: STEP, method: "push", branch: "catcafe/s-1", commit: COMMIT, target: "main", remote: null, pullRequest: null },
    "Delivery asked: push catcafe/s-1 (0123456789ab)",
  ),
  row(
    "DeliveryRequested",
    {
      stepId: STEP,
      method: "pull_request",
      branch: "catcafe/s-1",
      commit: COMMIT,
      target: "main",
      remote: "origin",
      pullRequest: { provider: "github", repository: "o/r" },
      approvedBy: ["user:1"],
    },
    "Delivery asked: push catcafe/s-1 (0123456789ab) to origin, pull request into main",
  ),
  row(
    "DeliveryCompleted",
    {
      stepId: STEP,
      method: "pull_request",
      branch: "catcafe/s-1",
      commit: COMMIT,
      pushed: { remote: "origin" },
      merged: null,
      pullRequest: { provider: "github", number: 12, url: "https://github.com/o/r/pull/12", updated: false },
    },
    "Delivered: pull request #12 opened (https://github.com/o/r/pull/12)",
  ),
  row(
    "DeliveryCompleted",
    {
      stepId: STEP,
      method: "pull_request",
      branch: "catcafe/s-1",
      commit: COMMIT,
      pushed: { remote: "origin" },
      merged: null,
      pullRequest: { provider: "gitlab", number: 12, url: "https://gitlab.com/o/r/-/merge_requests/12", updated: true },
    },
    "Delivered: pull request #12 updated (https://gitlab.com/o/r/-/merge_requests/12)",
  ),
  row(
    "DeliveryCompleted",
    {
      stepId: STEP,
      method: "merge",
      branch: "catcafe/s-1",
      commit: COMMIT,
      pushed: null,
      merged: { target: "main", commit: COMMIT, how: "fast_forward" },
      pullRequest: null,
    },
    "Delivered: catcafe/s-1 merged into main (fast forward)",
  ),
  row(
    "DeliveryCompleted",
    { stepId: STEP, method: "push", branch: "catcafe/s-1", commit: COMMIT, pushed: { remote: "origin" }, merged: null, pullRequest: null },
    "Delivered: catcafe/s-1 pushed to origin",
  ),
  // Valid data that neither pushed nor merged: no remote is named.
  row(
    "DeliveryCompleted",
    { stepId: STEP, method: "push", branch: "catcafe/s-1", commit: COMMIT, pushed: null, merged: null, pullRequest: null },
    "Delivered: catcafe/s-1",
  ),
  row(
    "DeliveryFailed",
    { stepId: STEP, method: "push", errorClass: "push_rejected", message: "non-fast-forward", files: [] },
    "Delivery failed (push_rejected): non-fast-forward",
  ),
  row(
    "SessionBranchPushFailed",
    {
      stepId: STEP,
      attempt: 1,
      branch: "catcafe/s-1",
      commit: COMMIT,
      remote: "origin",
      errorClass: "remote_unreachable",
      message: "the remote could not be reached",
    },
    "Could not push catcafe/s-1 (0123456789ab) to origin (remote_unreachable): the remote could not be reached",
  ),
  row(
    "PullRequestFeedbackReceived",
    {
      provider: "github",
      repository: "acme/app",
      number: 12,
      deliveryId: "d-1",
      event: "pull_request_review",
      author: "jane",
      text: "jane requested changes",
      followUp: { sessionId: "s-2", how: "modify" },
    },
    "Review on pull request #12 by jane: follow-up session s-2",
  ),
  row(
    "PullRequestFeedbackReceived",
    {
      provider: "gitlab",
      repository: "acme/app",
      number: 3,
      deliveryId: "d-2",
      event: "Note Hook",
      author: "jane",
      text: "say it",
      followUp: { sessionId: "s-2", how: "follow_up" },
    },
    "Review on merge request #3 by jane: sent to s-2",
  ),

  // ---- Intake from the issue tracker (docs/intake.md) ------------------------------------------
  row(
    "TaskStartedFromIssue",
    {
      provider: "github",
      repository: "acme/app",
      issueNumber: 7,
      issueUrl: "https://github.com/acme/app/issues/7",
      title: "Fix slugify",
      trigger: "label",
      deliveryId: "d-1",
      sender: "jane",
    },
    "Started from github issue acme/app#7 (label by jane)",
  ),
  row("IntakeAutoConfirm", { trigger: "label" }, "Confirmed automatically when the proposal is ready (the label rule's autoConfirm)"),
  row("IntakeSecretSet", { projectId: "p-1", rotated: false }, "Webhook secret of project p-1 set"),
  row("IntakeSecretSet", { projectId: "p-1", rotated: true }, "Webhook secret of project p-1 rotated"),
  row(
    "IntakeHeld",
    {
      provider: "gitlab",
      repository: "acme/app",
      issueNumber: 9,
      issueUrl: "https://gitlab.com/acme/app/-/issues/9",
      title: "Add a flag",
      trigger: "comment",
      deliveryId: "d-2",
      sender: "rita",
      projectId: "p-1",
      reason: "no_permission",
      detail: "rita has no write access",
      prompt: "Add a flag",
      workflow: "review_loop",
      autoConfirm: false,
    },
    "Issue acme/app#9 held (no_permission): rita has no write access",
  ),
  row(
    "IntakeResolved",
    { deliveryId: "d-2", provider: "gitlab", resolution: "started", sessionId: "s-3" },
    "Held issue delivery d-2 started as s-3",
  ),
  row("IntakeResolved", { deliveryId: "d-3", provider: "github", resolution: "dismissed" }, "Held issue delivery d-3 dismissed"),

  // ---- Cleaning up failed sessions (req F14, docs/operations.md) -----------------------------
  row("WorkspacePruneRequested", { stepId: STEP, reason: "session", olderThanDays: null, refs: [] }, "Workspace clean-up asked"),
  row(
    "WorkspacePruneRequested",
    { stepId: STEP, reason: "older_than", olderThanDays: 30, refs: ["refs/heads/catcafe/s-1"] },
    "Workspace clean-up asked (ended more than 30 days ago)",
  ),
  row(
    "WorkspacePruneRequested",
    { stepId: STEP, reason: "automatic", olderThanDays: 7, refs: [] },
    "Workspace clean-up asked (ended more than 7 days ago, automatic)",
  ),
  row(
    "SessionPruned",
    { stepId: STEP, requestedBy: "user:1", worktree: "/w/s-1", refsDeleted: ["refs/heads/catcafe/s-1", `refs/catcafe/pins/${COMMIT}`] },
    "Workspace cleaned up: worktree removed, 2 git refs deleted",
  ),
  row(
    "SessionPruned",
    { stepId: STEP, requestedBy: "system", worktree: null, refsDeleted: ["refs/heads/catcafe/s-1"] },
    "Workspace cleaned up: no worktree left, 1 git ref deleted",
  ),
  row("WorkspacePruneFailed", { stepId: STEP, message: "not a session workspace" }, "Workspace clean-up failed: not a session workspace"),
  // Where each worktree lives, and each host's removal of its own (docs/operations.md, "Worktrees on every host").
  row("WorktreePlaced", { stepId: STEP, host: "host-a", path: "/w/s-1" }, "Worktree created on host-a at /w/s-1"),
  row(
    "WorktreeRemoved",
    { host: "host-a", path: "/w/s-1", removed: true, reason: "not_last_host", refsDeleted: [] },
    "Worktree removed from host-a (/w/s-1): a later step ran on another host",
  ),
  row(
    "WorktreeRemoved",
    { host: "host-b", path: "/w/s-1", removed: false, reason: "finished", refsDeleted: [`refs/catcafe/pins/${COMMIT}`] },
    "No worktree left on host-b: kept long enough after the session ended; 1 git ref deleted",
  ),
  row(
    "WorktreeRemoved",
    {
      host: "host-b",
      path: "/w/s-1",
      removed: true,
      reason: "pruned",
      refsDeleted: ["refs/heads/catcafe/s-1", `refs/catcafe/pins/${COMMIT}`],
    },
    "Worktree removed from host-b (/w/s-1): the session was cleaned up; 2 git refs deleted",
  ),

  // ---- The team (docs/auth.md, "Audit") ---------------------------------------------------
  row(
    "InvitationCreated",
    { invitationId: INVITE, role: "operator", email: "ada@cats.test", expiresAt: "2026-12-05T10:00:00.000Z" },
    "Invitation 44444444 created: operator for ada@cats.test, until 2026-12-05T10:00:00.000Z",
  ),
  row(
    "InvitationCreated",
    { invitationId: INVITE, role: "viewer", email: null, expiresAt: "2026-12-05T10:00:00.000Z" },
    "Invitation 44444444 created: viewer, until 2026-12-05T10:00:00.000Z",
  ),
  row("InvitationRevoked", { invitationId: INVITE }, "Invitation 44444444 revoked"),
  row(
    "InvitationAccepted",
    { invitationId: INVITE, userId: USER, email: "ada@cats.test", name: "Ada", role: "operator" },
    "Invitation 44444444 accepted by Ada <ada@cats.test> as operator",
  ),
  row(
    "UserCreated",
    { userId: USER, email: "cleo@cats.test", name: "Cleo", role: "operator" },
    "User Cleo <cleo@cats.test> created as operator",
  ),
  row("UserRoleChanged", { userId: USER, from: "viewer", to: "admin" }, "Role of user 55555555: viewer → admin"),
  row("UserRoleChanged", { userId: USER, from: null, to: "viewer" }, "Role of user 55555555: none → viewer"),
  row("UserDisabled", { userId: USER }, "User 55555555 disabled"),
  row("UserEnabled", { userId: USER }, "User 55555555 enabled"),
  row(
    "ApiTokenCreated",
    { tokenId: TOKEN, ownerId: USER, name: "ci", expiresAt: "2027-01-01T00:00:00.000Z" },
    'API token "ci" (66666666) created, until 2027-01-01T00:00:00.000Z',
  ),
  row("ApiTokenCreated", { tokenId: TOKEN, ownerId: USER, name: "ci", expiresAt: null }, 'API token "ci" (66666666) created'),
  row("ApiTokenRevoked", { tokenId: TOKEN, ownerId: USER }, "API token 66666666 revoked"),
];

// Texts longer than the line: summarize cuts every line at 200 characters (197 and an ellipsis).
const LONG = `${"x".repeat(200)}${"y".repeat(150)}`;
const LONG_ROWS: Row[] = [
  [
    "ChangeRequested",
    {
      text: LONG,
      baseSessionId: "s-1",
      baseCommit: COMMIT,
      fingerprint: { files: 0, digest: "d", changedSinceBase: [], addedSinceBase: [], removedSinceBase: [] },
      basePlan: {},
    },
    `Change requested on s-1: ${"x".repeat(172)}...`,
  ],
  ["MessagePosted", { by: "ada", text: LONG, mentions: [] }, `ada: ${"x".repeat(192)}...`],
  ["AgentReplied", { callId: CALL, agent: "ada", text: LONG, mentions: [] }, `@ada: ${"x".repeat(191)}...`],
  [
    "AgentCallFailed",
    { callId: CALL, agent: "ada", errorClass: "timeout", message: LONG },
    `@ada could not answer (timeout): ${"x".repeat(164)}...`,
  ],
  ["SystemMessage", { text: LONG }, `${"x".repeat(197)}...`],
  [
    "DeliveryFailed",
    { stepId: STEP, method: "push", errorClass: "push_rejected", message: LONG, files: ["a.js", "b.js"] },
    `Delivery failed (push_rejected): ${"x".repeat(164)}...`,
  ],
];

describe("event summaries", () => {
  it.each(ROWS)("%s (row %#)", (type, data, expected) => {
    expect(timelineLine(type, data), type).toBe(expected);
  });

  it.each(LONG_ROWS)("%s with a long text is cut to one line (row %#)", (type, data, expected) => {
    expect(timelineLine(type, data), type).toBe(expected);
  });

  it("the table has a row for every event type the registry knows, and for no other", () => {
    const known = Object.keys(appRegistry.catalog);
    const composed = [conversationCatalog, deliveryCatalog, pruningCatalog, stepCatalog, configCatalog, forgeCatalog, teamCatalog].flatMap(
      (c) => Object.keys(c),
    );
    for (const type of composed) expect(known).toContain(type);
    expect([...new Set(ROWS.map(([type]) => type))].sort()).toEqual(known.sort());
  });
});

describe("summarize", () => {
  it("cuts a line longer than 200 characters to its first 197 and an ellipsis", () => {
    expect(appRegistry.summarize("SystemReplied", { text: `${"a".repeat(196)}bcdef` })).toBe(`${"a".repeat(196)}b...`);
  });

  it("keeps a line of exactly 200 characters whole", () => {
    expect(appRegistry.summarize("SystemReplied", { text: `${"a".repeat(196)}bcde` })).toBe(`${"a".repeat(196)}bcde`);
  });

  it("shows the type itself for a type without a summary, or one it does not know", () => {
    const registry = new EventRegistry({ Bare: defineEvent({ version: 1, schema: z.object({}) }) });
    expect(registry.summarize("Bare", {})).toBe("Bare");
    expect(appRegistry.summarize("NoSuchEvent", {})).toBe("NoSuchEvent");
  });
});

describe("actorLabel", () => {
  it("is kind:id for a person, an agent or a runner, and the kind alone for the system", () => {
    expect(actorLabel({ kind: "user", id: "42" })).toBe("user:42");
    expect(actorLabel({ kind: "agent", id: "coder-sim" })).toBe("agent:coder-sim");
    expect(actorLabel({ kind: "runner", id: "r-1" })).toBe("runner:r-1");
    expect(actorLabel({ kind: "system", id: "engine" })).toBe("system");
  });
});
