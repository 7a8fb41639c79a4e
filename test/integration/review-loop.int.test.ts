import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../server/errors";
import type { RecordedEvent } from "../../server/events/types";
import { cancelTask, confirmTask, followUpTask, startTask } from "../../server/tasks/commands";
import { rerunTask } from "../../server/tasks/fork";
import { allowAgents } from "../helpers/access";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, reviewApprove, reviewChanges, testPlan, type Harness, ofType } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  // The key variable its agents are given, allowed as an admin would (settings access.agentEnv).
  await allowAgents(db, { agentEnv: ["CATCAFE_TEST_FAKE_CODEX_API_KEY"] });
  h = createHarness(db);
  await h.startRunner();
});

const deps = () => ({ store: db.store, pool: db.pool });
const finished = (s: { status: string }) => s.status === "finished";
const types = (events: RecordedEvent[]) => events.map((e) => e.type);
const transitions = (events: RecordedEvent[]) =>
  ofType<{ from: string; to: string }>(events, "SessionStateChanged").map((d) => `${d.from}→${d.to}`);

const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } };

describe("review loop through the runner", () => {
  it("proposal → roundtable of three discussion entries → awaiting_operator_confirm; a follow-up without a signal builds nothing; confirm → approved with the file really fixed and the test really run", async () => {
    const projectId = await h.project("happy", {
      coder: [{ reply: "Proposal: sum subtracts; make it add." }, coderFix],
      reviewer: [{ reply: "The proposal is fine; watch negative numbers." }, { reply: reviewApprove }],
      tester: [{ reply: "Risk: only one test; node --test covers it." }, { reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum() so the test passes", mode: "proposal" }, testActor);
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    let events = await db.store.readStream(sessionId);
    const discussion = ofType<{ role: string; phase: string; simulated: boolean }>(events, "AgentOutputRecorded");
    expect(discussion.map((d) => [d.role, d.phase, d.simulated])).toEqual([
      ["coder", "discussion", true],
      ["reviewer", "discussion", true],
      ["tester", "discussion", true],
    ]);
    expect(ofType(events, "ReviewVerdictRecorded")).toEqual([]);

    await followUpTask(deps(), { sessionId, text: "What about overflow?" }, testActor);
    await new Promise((r) => setTimeout(r, 300));
    events = await db.store.readStream(sessionId);
    expect(types(events).slice(-2)).toEqual(["OperatorMessagePosted", "SystemReplied"]);
    expect(String(ofType<{ text: string }>(events, "SystemReplied")[0]!.text)).toMatch(/^Pending confirmation/);
    expect((await h.state(sessionId)).fsm).toBe("awaiting_operator_confirm");

    await confirmTask(deps(), { sessionId, via: "button" }, testActor);
    const done = await h.waitFor(sessionId, "approved", finished);
    expect(done.outcome).toBe("approved");
    events = await db.store.readStream(sessionId);
    expect(transitions(events)).toEqual([
      "start→proposal_coder",
      "proposal_coder→proposal_reviewer",
      "proposal_reviewer→proposal_tester",
      "proposal_tester→awaiting_operator_confirm",
      "awaiting_operator_confirm→building",
      "building→reviewing",
      "reviewing→testing",
      "testing→running_tests",
      "running_tests→approved",
    ]);
    const commit = ofType<{ changedFiles: Array<{ path: string; status: string }> }>(events, "WorkspaceCommitted")[0]!;
    expect(commit.changedFiles).toEqual([{ path: "src/sum.js", status: "modified" }]);
    const test = ofType<{ passed: boolean; exitCode: number; stdoutTail: string }>(events, "TestCommandRecorded")[0]!;
    expect(test).toMatchObject({ passed: true, exitCode: 0 });
    expect(test.stdoutTail).toMatch(/# pass 1/);
    expect(fs.readFileSync(path.join(h.workspacesRoot, sessionId, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
    expect(fs.readFileSync(path.join(h.repo, "src/sum.js"), "utf8")).not.toBe(FIXED_SUM); // the project itself is untouched
    const row = await db.pool.query("SELECT state FROM sessions WHERE id = $1", [sessionId]);
    expect(row.rows[0].state).toBe("approved");
  });

  it("two confirms at once: exactly one wins, the other is told the session moved on", async () => {
    const projectId = await h.project("confirm-race", {
      coder: [{ reply: "p" }, coderFix],
      reviewer: [{ reply: "r" }, { reply: reviewApprove }],
      tester: [{ reply: "t" }, { reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "race", mode: "proposal" }, testActor);
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    const results = await Promise.allSettled([
      confirmTask(deps(), { sessionId }, { kind: "user", id: "alice" }),
      confirmTask(deps(), { sessionId }, { kind: "user", id: "bob" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r): r is PromiseRejectedResult => r.status === "rejected")!;
    expect(isAppError(lost.reason, "CONFLICT")).toBe(true);
    expect(lost.reason.message).toMatch(/moved on/);
    await expect(confirmTask(deps(), { sessionId }, testActor)).rejects.toThrow(/already moved on/);
    const confirmations = (await db.store.readStream(sessionId)).filter((e) => e.type === "OperatorConfirmed");
    expect(confirmations).toHaveLength(1);
    await h.waitFor(sessionId, "finish", finished);
  });

  it("changes requested → iterate → approved; the findings reach the coder's next prompt", async () => {
    const projectId = await h.project("iterate", {
      coder: [
        { reply: "first try", files: { "src/sum.js": "function sum(a, b) { return a * b; }\nmodule.exports = { sum };\n" } },
        coderFix,
      ],
      reviewer: [{ reply: reviewChanges("sum multiplies") }, { reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const s = await h.waitFor(sessionId, "finish", finished);
    expect(s.outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    expect(ofType<{ iteration: number; reason: string }>(events, "IterationStarted")).toEqual([
      { iteration: 2, reason: "changes_requested" },
    ]);
    const builds = events.filter((e) => e.type === "StepScheduled" && (e.data as { input: { state: string } }).input.state === "building");
    expect(builds).toHaveLength(2);
    expect((builds[1]!.data as { input: { prompt: string } }).input.prompt).toContain("[blocking] src/sum.js:2: sum multiplies");
  });

  it("reviewer output that is not JSON finalizes review_schema_invalid, keeping the raw output and the errors", async () => {
    const projectId = await h.project("bad-review", {
      coder: [coderFix],
      reviewer: [{ fault: "invalid_json" }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const s = await h.waitFor(sessionId, "finish", finished);
    expect(s.outcome).toBe("review_schema_invalid");
    const events = await db.store.readStream(sessionId);
    const review = ofType<{ role: string; validationErrors: string[]; raw: { blob: string }; parsed: unknown }>(
      events,
      "AgentOutputRecorded",
    ).find((o) => o.role === "reviewer")!;
    expect(review.validationErrors[0]).toMatch(/^not valid JSON/);
    expect(review.parsed).toBeNull();
    const raw = await db.pool.query("SELECT convert_from(content, 'UTF8') AS text FROM blobs WHERE hash = $1", [review.raw.blob]);
    expect(raw.rows[0].text).toMatch(/"decision"/);
  });

  it("tester_schema_invalid → iterate; test_failed → iterate → pass", async () => {
    const projectId = await h.project(
      "tester-loop",
      {
        coder: [{ reply: "no change yet" }, { reply: "still nothing" }, coderFix],
        reviewer: [{ reply: reviewApprove }],
        tester: [{ reply: '{"summary": "x"}' }, { reply: testPlan() }, { reply: testPlan() }],
      },
      { maxIterations: 5 },
    );
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const s = await h.waitFor(sessionId, "finish", finished);
    expect(s.outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    expect(ofType<{ reason: string }>(events, "IterationStarted").map((i) => i.reason)).toEqual(["tester_schema_invalid", "test_failed"]);
    const tests = ofType<{ passed: boolean; exitCode: number }>(events, "TestCommandRecorded");
    expect(tests.map((t) => [t.passed, t.exitCode])).toEqual([
      [false, 1],
      [true, 0],
    ]);
  });

  it("reaching the iteration cap finalizes max_iterations_reached with the unresolved items", async () => {
    const projectId = await h.project("capped", {
      coder: [{ reply: "I tried." }],
      reviewer: [{ reply: reviewChanges("still subtracts") }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "finish", finished);
    const final = ofType<{ outcome: string; iterations: number; unresolved: string[] }>(
      await db.store.readStream(sessionId),
      "SessionFinalized",
    )[0]!;
    expect(final).toMatchObject({
      outcome: "max_iterations_reached",
      iterations: 3,
      unresolved: ["[blocking] src/sum.js:2: still subtracts"],
    });
  });

  it("a provider disconnect is classified provider_network_error and retried with backoff, never schema_invalid", async () => {
    const projectId = await h.project("flaky", {
      coder: [{ fault: "disconnect", afterChars: 10 }, coderFix],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const s = await h.waitFor(sessionId, "finish", finished);
    expect(s.outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    const failures = ofType<{ errorClass: string; retryAt: string | null }>(events, "StepFailed");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ errorClass: "provider_network_error", retryAt: expect.any(String) });
    expect(events.some((e) => JSON.stringify(e.data).includes("schema_invalid"))).toBe(false);
  });

  it("an agent that keeps failing ends the session failed, with the error class and a diagnosis", async () => {
    const projectId = await h.project("auth", {
      coder: [{ fault: "auth" }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const s = await h.waitFor(sessionId, "finish", finished);
    expect(s.outcome).toBe("failed");
    const final = ofType<{ errorClass: string; diagnosis: string }>(await db.store.readStream(sessionId), "SessionFinalized")[0]!;
    expect(final.errorClass).toBe("provider_auth_error");
    expect(final.diagnosis.length).toBeGreaterThan(5);
  });

  it("a test command outside the allowlist is refused, recorded with its reason, and counts as a failure", async () => {
    const projectId = await h.project(
      "refused",
      {
        coder: [coderFix],
        reviewer: [{ reply: reviewApprove }],
        tester: [{ reply: testPlan(["npm", "start"]) }],
      },
      { maxIterations: 1 },
    );
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const s = await h.waitFor(sessionId, "finish", finished);
    expect(s.outcome).toBe("max_iterations_reached");
    const refused = ofType<{ status: string; errorClass: string; reason: string; passed: boolean }>(
      await db.store.readStream(sessionId),
      "TestCommandRecorded",
    )[0]!;
    expect(refused).toMatchObject({ status: "refused", errorClass: "command_refused", passed: false });
    expect(refused.reason).toMatch(/long-running|server|not on the allowlist/i);
  });

  it("cancel mid-step reaches the running agent process and kills its tree within a second; the session ends cancelled", async () => {
    // The agent runs in the sandbox (its own PID namespace: its pids mean nothing here), so
    // its tree shows it is alive by writing: it and a grandchild each append a tick every 20 ms.
    const root = path.dirname(h.repo);
    const script = path.join(root, "slow-agent.cjs");
    const tick = (who: string) => `setInterval(() => require("node:fs").appendFileSync(".ticks-${who}", "."), 20)`;
    fs.writeFileSync(
      script,
      `const { spawn } = require("node:child_process");
      spawn(process.execPath, ["-e", ${JSON.stringify(tick("grandchild"))}], { stdio: "ignore" });
      ${tick("child")};`,
    );
    const projectId = await h.project("cancel", {
      coder: { kind: "command", id: "slow", argv: [process.execPath, script] },
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Take forever", mode: "implementation" }, testActor);
    const ticks = ["child", "grandchild"].map((who) => path.join(h.workspacesRoot, sessionId, `.ticks-${who}`));
    const deadline = Date.now() + 15_000;
    while (!ticks.every((f) => fs.existsSync(f)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const cancelledAt = Date.now();
    await cancelTask(deps(), { sessionId, reason: "wrong task" }, testActor);
    // Ended: no tick for 200 ms (ten ticks' time). When the ticking stopped is the time to kill.
    const sizes = () => ticks.map((f) => fs.statSync(f).size).join();
    let last = sizes();
    let lastChange = Date.now();
    while (Date.now() - lastChange < 200 && Date.now() - cancelledAt < 5_000) {
      await new Promise((r) => setTimeout(r, 10));
      const now = sizes();
      if (now !== last) [last, lastChange] = [now, Date.now()];
    }
    expect(Date.now() - lastChange).toBeGreaterThanOrEqual(200);
    expect(lastChange - cancelledAt).toBeLessThan(1_000);
    const s = await h.state(sessionId);
    expect(s.outcome).toBe("cancelled");
    const final = ofType<{ errorClass: string }>(await db.store.readStream(sessionId), "SessionFinalized")[0]!;
    expect(final.errorClass).toBe("cancelled");
    const step = await db.pool.query("SELECT state FROM steps WHERE session_id = $1 ORDER BY scheduled_at DESC LIMIT 1", [sessionId]);
    expect(step.rows[0].state).toBe("cancelled");
  });

  it("a build whose every tool call failed and that changed nothing is a tool_error, not a completed build", async () => {
    // A Codex-like CLI whose sandbox refuses every command: it says it tried,
    // reports each command as failed, and ends its turn normally with nothing changed.
    const script = path.join(path.dirname(h.repo), "codex-without-sandbox.cjs");
    const line = (event: unknown) => JSON.stringify(event);
    const failed = (id: string, command: string) =>
      line({
        type: "item.completed",
        item: {
          id,
          type: "command_execution",
          command,
          exit_code: 1,
          status: "failed",
          aggregated_output: "bwrap: execvp codex-linux-sandbox: No such file or directory",
        },
      });
    fs.writeFileSync(
      script,
      `#!/usr/bin/env node
process.stdin.resume();
process.stdin.on("end", () => {
  for (const l of ${JSON.stringify([
    line({ type: "thread.started", thread_id: "t" }),
    line({ type: "turn.started" }),
    failed("1", "sed -i s/-/+/ src/sum.js"),
    failed("2", "cat src/sum.js"),
    line({ type: "item.completed", item: { id: "3", type: "agent_message", text: "No files changed: every command failed." } }),
    line({ type: "turn.completed", usage: { input_tokens: 5, output_tokens: 5 } }),
  ])}) console.log(l);
});`,
      { mode: 0o755 },
    );
    process.env.CATCAFE_TEST_FAKE_CODEX_API_KEY = "fake-codex-key";
    const projectId = await h.project("tools-failed", {
      coder: { kind: "codex", id: "fake-codex", command: script, apiKeyEnv: "CATCAFE_TEST_FAKE_CODEX_API_KEY" },
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    const s = await h.waitFor(sessionId, "finish", finished);
    expect(s.outcome).toBe("failed");
    const events = await db.store.readStream(sessionId);
    const stepFailed = ofType<{ errorClass: string; message: string }>(events, "StepFailed");
    expect(stepFailed.at(-1)).toMatchObject({ errorClass: "tool_error" });
    expect(stepFailed.at(-1)!.message).toMatch(
      /all 2 tool calls of fake-codex failed and nothing changed; the last: cat src\/sum\.js: bwrap: execvp/,
    );
    expect(ofType(events, "WorkspaceCommitted")).toEqual([]);
    expect(ofType<{ errorClass: string }>(events, "SessionFinalized")[0]).toMatchObject({ errorClass: "tool_error" });
  });

  it("rerun forks the session with the same prompt and config; lineage recorded, the original untouched", async () => {
    const projectId = await h.project("rerun", {
      coder: [coderFix],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum() again", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "finish", finished);
    const before = await db.store.readStream(sessionId);
    const child = await rerunTask(deps(), { sessionId }, testActor);
    const s = await h.waitFor(child.sessionId, "rerun finish", finished);
    expect(s.outcome).toBe("approved");
    expect(await db.store.readStream(sessionId)).toEqual(before);
    const childEvents = await db.store.readStream(child.sessionId);
    expect(childEvents.slice(0, 2).map((e) => [e.streamId, e.type])).toEqual([
      [sessionId, "SessionCreated"],
      [sessionId, "TaskStarted"],
    ]);
    expect(childEvents[2]).toMatchObject({
      streamId: child.sessionId,
      type: "SessionForked",
      data: { parentId: sessionId, atVersion: 2, reason: "rerun" },
    });
    const lineage = await db.pool.query("SELECT parent_id, fork_version FROM sessions WHERE id = $1", [child.sessionId]);
    expect(lineage.rows[0]).toEqual({ parent_id: sessionId, fork_version: 2 });
  });

  it("streams an agent's output into the session while it arrives, in order, before its result", async () => {
    const reply = "Changed sum to add, and checked the negative numbers as the reviewer asked. ".repeat(4);
    const projectId = await h.project("streaming", {
      coder: [{ reply, files: { "src/sum.js": FIXED_SUM }, chunkDelayMs: 150 }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "finish", finished);
    const events = await db.store.readStream(sessionId);
    const streamed = events
      .filter((e) => e.type === "AgentOutputStreamed")
      .map((e) => ({ version: e.version, ...(e.data as { seq: number; text: string; role: string }) }))
      .filter((s) => s.role === "coder");
    expect(streamed.length).toBeGreaterThan(1);
    expect(streamed.map((s) => s.seq)).toEqual(streamed.map((_, i) => i));
    expect(streamed.map((s) => s.text).join("")).toBe(reply);
    const recorded = events.find((e) => e.type === "AgentOutputRecorded" && (e.data as { role: string }).role === "coder")!;
    expect(Math.max(...streamed.map((s) => s.version))).toBeLessThan(recorded.version);
  });
});
