// Workflows of the project's own (req M9) and the settings a project's tasks run with
// (docs/workflows.md): the example of docs/workflows.md, committed as `.catcafe/runtimes.json`,
// runs to its end through the real runner from the snapshot taken at the start (an edit
// mid-run changes nothing); an invalid one is refused before anything is recorded; a
// project's step timeout and retry policy govern its steps while another project keeps
// its own.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../server/errors";
import type { RecordedEvent } from "../../server/events/types";
import { cancelTask, startTask } from "../../server/tasks/commands";
import { rerunTask } from "../../server/tasks/fork";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, reviewApprove, tempDir, testPlan, type Harness, ofType } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
const DOC = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/workflows.md"), "utf8");
const EXAMPLE = DOC.match(/<!-- tested: \.catcafe\/runtimes\.json -->\s*```json\n([\s\S]*?)```/)![1]!;

const SPEC = "Spec: sum(a, b) returns a + b; only src/sum.js changes.";

beforeAll(async () => {
  // settings.json of this file's own data directory: what every project gets unless it overrides.
  const dataDir = tempDir("catcafe-user-workflows-data-");
  process.env.CATCAFE_DATA_DIR = dataDir;
  fs.writeFileSync(
    path.join(dataDir, "settings.json"),
    JSON.stringify({ retry: { maxAttempts: 3, backoffMs: [300] }, timeouts: { commandMs: 20_000 } }),
  );
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
});

const deps = () => ({ store: db.store, pool: db.pool });
const git = (...args: string[]) => gitIn(h.repo, ...args);

function commitRuntimes(content: unknown): string {
  const dir = path.join(h.repo, ".catcafe");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "runtimes.json"), typeof content === "string" ? content : JSON.stringify(content, null, 2));
  git("add", "-A", ".catcafe");
  git("commit", "-q", "-m", "runtimes");
  return git("rev-parse", "HEAD");
}

const scheduledStates = (events: RecordedEvent[]) =>
  ofType<{ input: { state: string } }>(events, "StepScheduled").map((s) => s.input.state);

async function streamCount(): Promise<number> {
  return Number((await db.pool.query("SELECT count(*) AS n FROM streams")).rows[0].n);
}

describe("a workflow of the project's own", () => {
  it("runs docs/workflows.md's example to its end from the snapshot taken at the start, whatever the file says meanwhile", async () => {
    const project = await h.project("own-flow", {
      // The spec is slow enough that the file is edited while the session runs.
      coder: [
        { reply: SPEC, chunkDelayMs: 150 },
        { reply: "Changed sum().", files: { "src/sum.js": FIXED_SUM } },
      ],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    commitRuntimes(EXAMPLE);
    const { sessionId } = await startTask(deps(), { projectId: project, prompt: "Make sum() add", workflow: "secure_change" }, testActor);

    await h.waitFor(sessionId, "the spec step", (s) => s.fsm === "spec");
    // Mid-run, the workflow loses its security review, both committed and in the working tree.
    const edited = JSON.parse(EXAMPLE) as { workflows: { secure_change: { states: Record<string, { on?: Record<string, unknown> }> } } };
    const states = edited.workflows.secure_change.states;
    states.building!.on = { done: [{ target: "test_plan" }] };
    delete states.security_review;
    delete states.review_schema_invalid;
    commitRuntimes(edited);

    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    const [started] = ofType<{ workflow: string; mode: string; definition: { id: string; states: Record<string, unknown> } }>(
      events,
      "TaskStarted",
    );
    expect(started).toMatchObject({ workflow: "secure_change", mode: "implementation" });
    expect(Object.keys(started!.definition.states)).toContain("security_review");
    // Every state of the example, in order, the security review included.
    expect(scheduledStates(events)).toEqual(["spec", "building", "security_review", "test_plan", "running_tests"]);
    expect(ofType<{ decision: string }>(events, "ReviewVerdictRecorded").map((v) => v.decision)).toEqual(["approve"]);
    expect(ofType<{ passed: boolean }>(events, "TestCommandRecorded").map((t) => t.passed)).toEqual([true]);
    expect(fs.readFileSync(path.join(h.workspacesRoot, sessionId, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
    // The spec was recorded as discussion, and the coder's build step was told the spec.
    const outputs = ofType<{ phase: string; preview: string }>(events, "AgentOutputRecorded");
    expect(outputs[0]).toMatchObject({ phase: "discussion", preview: SPEC });
    const buildInput = ofType<{ input: { state: string; context: Array<{ text: string }> } }>(events, "StepScheduled").find(
      (s) => s.input.state === "building",
    )!.input;
    expect(buildInput.context.map((m) => m.text)).toContain(SPEC);

    // A new task reads the new commit: no security review any more.
    const second = await startTask(deps(), { projectId: project, prompt: "Again", workflow: "secure_change" }, testActor);
    const secondStart = ofType<{ definition: { states: Record<string, unknown> } }>(
      await db.store.readStream(second.sessionId),
      "TaskStarted",
    );
    expect(Object.keys(secondStart[0]!.definition.states)).not.toContain("security_review");
    await h.waitFor(second.sessionId, "finished", (s) => s.status === "finished");

    // A rerun of the first session runs its own snapshot again, from the spec.
    const rerun = await rerunTask(deps(), { sessionId }, testActor);
    const rerunEvents = await db.store.readStream(rerun.sessionId);
    expect(scheduledStates(rerunEvents)).toEqual(["spec"]);
    await cancelTask(deps(), { sessionId: rerun.sessionId }, testActor);
  });

  it("is refused before the start with the exact problem when it is invalid, and nothing is recorded", async () => {
    const project = await h.project("bad-flow", {
      coder: [{ reply: "x" }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    interface StepState {
      step: { output: string };
      on: Record<string, unknown>;
    }
    const example = JSON.parse(EXAMPLE) as { workflows: { secure_change: { states: Record<string, unknown> } } };
    const flow = example.workflows.secure_change;
    const spec = flow.states.spec as StepState;
    const plan = flow.states.test_plan as StepState;
    spec.step.output = "essay"; // an unknown output kind
    flow.states.orphan = { type: "terminal", outcome: "never" }; // unreachable
    plan.on.plan_valid = [{ target: "running_tests", guard: "when_green" }]; // no such guard
    const commit = commitRuntimes(example);
    const before = await streamCount();
    const err = await startTask(deps(), { projectId: project, prompt: "Make sum() add", workflow: "secure_change" }, testActor).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAppError(err, "PRECONDITION_FAILED")).toBe(true);
    const lines = (err as { details: { configErrors: string[] } }).details.configErrors;
    expect(lines).toEqual([
      expect.stringMatching(
        /^\.catcafe\/runtimes\.json: workflows\.secure_change\.states\.spec\.step\.output: Invalid option: expected one of "text"\|/,
      ),
      expect.stringMatching(
        /^\.catcafe\/runtimes\.json: workflows\.secure_change\.states\.test_plan\.on\.plan_valid\[0\]\.guard: Invalid option: expected one of "under_cap"\|/,
      ),
    ]);
    expect((err as Error).message).toContain(`at commit ${commit.slice(0, 12)}`);
    expect(await streamCount()).toBe(before);

    // With the schema errors mended, the unreachable state is what is left.
    spec.step.output = "text";
    plan.on.plan_valid = [{ target: "running_tests" }];
    commitRuntimes(example);
    const unreachable = await startTask(
      deps(),
      { projectId: project, prompt: "Make sum() add", workflow: "secure_change" },
      testActor,
    ).catch((e: { details: { configErrors: string[] } }) => e.details.configErrors);
    expect(unreachable).toEqual([".catcafe/runtimes.json: workflows.secure_change.states.orphan: unreachable from the initial state"]);
    expect(await streamCount()).toBe(before);
    // An unknown workflow names the ones there are, the repository's own included.
    delete flow.states.orphan;
    commitRuntimes(example);
    await expect(startTask(deps(), { projectId: project, prompt: "x", workflow: "secure_chnage" }, testActor)).rejects.toThrow(
      /^unknown workflow "secure_chnage" \(known: [a-z_, ]*secure_change\)$/,
    );
  });
});

describe("the settings a project's tasks run with", () => {
  it("a 2 s step timeout and one retry fail a slow agent after two attempts, while another project keeps settings.json's values", async () => {
    commitRuntimes({ workflows: {} });
    const slowCoder = [{ reply: "thinking very slowly", chunkDelayMs: 1_500 }];
    const strict = await h.project(
      "strict-limits",
      { coder: slowCoder, reviewer: [{ reply: reviewApprove }], tester: [{ reply: testPlan() }] },
      { settings: { timeouts: { stepMs: 2_000 }, retry: { maxAttempts: 2, backoffMs: [250] } } },
    );
    const relaxed = await h.project("relaxed-limits", {
      coder: [{ reply: "Changed sum().", files: { "src/sum.js": FIXED_SUM } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const slow = await startTask(deps(), { projectId: strict, prompt: "Make sum() add", mode: "implementation" }, testActor);
    const other = await startTask(deps(), { projectId: relaxed, prompt: "Make sum() add", mode: "implementation" }, testActor);

    const failed = await h.waitFor(slow.sessionId, "failed", (s) => s.status === "finished", 30_000);
    expect(failed.outcome).toBe("failed");
    const events = await db.store.readStream(slow.sessionId);
    const [started] = ofType<{ limits: unknown }>(events, "TaskStarted");
    expect(started!.limits).toEqual({ stepTimeoutMs: 2_000, maxAttempts: 2, backoffMs: [250], commandTimeoutMs: 20_000 });
    const [scheduled] = ofType<{ timeoutMs: number; maxAttempts: number; backoffMs: number[] }>(events, "StepScheduled");
    expect(scheduled).toMatchObject({ timeoutMs: 2_000, maxAttempts: 2, backoffMs: [250] });
    // Two attempts, each cut at 2 s; the first retried after the project's 250 ms backoff, the second not at all.
    const attempts = events.filter((e) => e.type === "StepStarted" || e.type === "StepFailed");
    expect(attempts.map((e) => [e.type, (e.data as { attempt: number }).attempt])).toEqual([
      ["StepStarted", 1],
      ["StepFailed", 1],
      ["StepStarted", 2],
      ["StepFailed", 2],
    ]);
    const fails = ofType<{ errorClass: string; message: string; retryAt: string | null }>(events, "StepFailed");
    expect(fails.map((f) => [f.errorClass, f.message])).toEqual([
      ["timeout", "step timed out after 2000 ms"],
      ["timeout", "step timed out after 2000 ms"],
    ]);
    const at = (i: number) => Date.parse(attempts[i]!.recordedAt);
    expect(at(1) - at(0)).toBeGreaterThanOrEqual(2_000);
    expect(Date.parse(fails[0]!.retryAt!) - at(1)).toBe(250);
    expect(fails[1]!.retryAt).toBeNull();

    // The other project: settings.json's values (3 attempts, 300 ms), the built-in timeout.
    const approved = await h.waitFor(other.sessionId, "approved", (s) => s.status === "finished");
    expect(approved.outcome).toBe("approved");
    const otherEvents = await db.store.readStream(other.sessionId);
    expect(ofType<{ limits: unknown }>(otherEvents, "TaskStarted")[0]!.limits).toEqual({
      stepTimeoutMs: 600_000,
      maxAttempts: 3,
      backoffMs: [300],
      commandTimeoutMs: 20_000,
    });
    const agentSteps = ofType<{ kind: string; timeoutMs: number; maxAttempts: number }>(otherEvents, "StepScheduled").filter(
      (s) => s.kind === "agent",
    );
    expect(agentSteps.map((s) => [s.timeoutMs, s.maxAttempts])).toEqual(agentSteps.map(() => [600_000, 3]));
    // Test commands get the command timeout; they are never retried.
    const commands = ofType<{ kind: string; maxAttempts: number; input: { commandTimeoutMs?: number } }>(
      otherEvents,
      "StepScheduled",
    ).filter((s) => s.kind === "commands");
    expect(commands.map((s) => [s.input.commandTimeoutMs, s.maxAttempts])).toEqual([[20_000, 1]]);
  });

  it("the rate limit in force spaces a project-record agent that sets none; one it sets is kept", async () => {
    const reviewer = (rateLimit?: { minIntervalMs: number }) => ({
      kind: "openai",
      id: "gpt-reviewer",
      model: "gpt-5",
      baseUrl: "http://127.0.0.1:9/v1",
      ...(rateLimit ? { rateLimit } : {}),
    });
    const spaced = await h.project(
      "spaced",
      { coder: [{ reply: "x" }], reviewer: reviewer(), tester: [{ reply: testPlan() }] },
      { settings: { rateLimit: { minIntervalMs: 1_500 } } },
    );
    const own = await h.project("own-limit", {
      coder: [{ reply: "x" }],
      reviewer: reviewer({ minIntervalMs: 100 }),
      tester: [{ reply: testPlan() }],
    });
    const reviewerLimit = async (projectId: string) => {
      const { sessionId } = await startTask(deps(), { projectId, prompt: "x", mode: "proposal" }, testActor);
      await cancelTask(deps(), { sessionId }, testActor);
      const [started] = ofType<{ agents: { reviewer: { rateLimit?: { minIntervalMs: number } } } }>(
        await db.store.readStream(sessionId),
        "TaskStarted",
      );
      return started!.agents.reviewer.rateLimit;
    };
    expect(await reviewerLimit(spaced)).toEqual({ minIntervalMs: 1_500 });
    expect(await reviewerLimit(own)).toEqual({ minIntervalMs: 100 });
  });

  it("an override outside its range is refused with the field's path", async () => {
    await expect(h.project("bad-limits", { coder: [{ reply: "x" }] }, { settings: { timeouts: { stepMs: 0 } } } as never)).rejects.toThrow(
      /timeouts\.stepMs|stepMs/,
    );
  });
});
