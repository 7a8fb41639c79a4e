// A bake-off (docs/bake-off.md) on a real repository through the real runner: three command
// coders of the repository's `.catcafe/` — one fixes the bug, one breaks a test, one changes
// nothing — run one confirmed task. One confirm forks three sessions in its transaction, which
// run in parallel through the same review and tests to approved / max_iterations_reached (tests
// failed) / max_iterations_reached (changes requested). The judge (a command reviewer) returns
// valid JSON, recorded; a judge that answers something else is schema_invalid, asked again,
// then failed. Picking the approved one delivers it to a bare remote and ends the others
// not_chosen; the same pick again answers the same, another pick is a conflict. The export
// holds each contender's and bake-off.json. The comparison (tRPC) shows the figures the events
// hold, bake-off.json the same ones, and after the pick the agent record counts the chosen one.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { judgeBakeOff } from "../../server/bake-off/judge";
import { dismissBakeOff, pickWinner } from "../../server/bake-off/pick";
import { getBakeOff } from "../../server/bake-off/record";
import { ZPricingSettings } from "../../server/config/schemas";
import { exportSession } from "../../server/export";
import { sessionUsage } from "../../server/usage/totals";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { allowAgents } from "../helpers/access";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createHarness, FIXED_SUM, gitIn, ofType, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let remote: string;
let api: ApiFixture;
const PROJECT = "bake";
const deps = () => ({ store: db.store, pool: db.pool });

const PROPOSAL = "Propose how you would implement";
/** A command coder: prose in the roundtable; when building, `build` (JS run in the worktree). */
const coderScript = (build: string, said: string) =>
  `const fs = require("fs"); const p = process.argv[1] || ""; if (p.includes(${JSON.stringify(PROPOSAL)})) { console.log("I would fix sum()."); } else { ${build} console.log(${JSON.stringify(said)}); }`;
const BROKEN_TEST = `const test = require("node:test");\nconst assert = require("node:assert");\nconst { sum } = require("../src/sum.js");\ntest("adds", () => assert.strictEqual(sum(2, 3), 6));\n`;
/**
 * The reviewer: approves a worktree whose sum() adds, else a blocking finding; as the judge, it
 * recommends the contender that ended approved (the others after it).
 */
const reviewerScript = `
const fs = require("fs"); const p = process.argv[1] || "";
if (p.includes("You judge a bake-off")) {
  const blocks = p.split("## Contender ").slice(1).map((b) => ({ id: b.slice(0, 2), approved: b.includes("Outcome: approved") }));
  const ranking = [...blocks.filter((b) => b.approved), ...blocks.filter((b) => !b.approved)].map((b) => b.id);
  console.log(JSON.stringify({ winner: ranking[0], ranking, reasons: ["the only one approved with its tests passing"] }));
} else if (p.includes("Critique the coder")) {
  console.log("The proposal is fine.");
} else {
  const adds = fs.readFileSync("src/sum.js", "utf8").includes("a + b");
  console.log(JSON.stringify(adds
    ? { decision: "approve", summary: "sum adds", findings: [] }
    : { decision: "changes_requested", summary: "not fixed", findings: [{ severity: "blocking", file: "src/sum.js", line: 2, message: "sum still subtracts" }] }));
}`;
const testerScript = `console.log(${JSON.stringify(testPlan())})`;

function commitConfig(): void {
  const shell = (script: string) => ({ kind: "command", command: "node", args: ["-e", script, "{prompt}"], prompt: "arg" });
  const agent = (id: string, role: string, shellId: string, priority?: number) => ({
    id,
    role,
    defaultShell: shellId,
    defaultBrain: "gpt",
    manifest: { capabilities: role === "coder" ? ["code-generation"] : role === "tester" ? ["run-commands"] : [] },
    ...(priority ? { priority } : {}),
  });
  const files: Record<string, unknown> = {
    "version.json": { configVersion: "1.0" },
    "shells.json": {
      shells: {
        fixer: shell(coderScript(`fs.writeFileSync("src/sum.js", ${JSON.stringify(FIXED_SUM)});`, "Fixed sum().")),
        breaker: shell(
          coderScript(
            `fs.writeFileSync("src/sum.js", ${JSON.stringify(FIXED_SUM)}); fs.writeFileSync("test/sum.test.js", ${JSON.stringify(BROKEN_TEST)});`,
            "Fixed sum() and its test.",
          ),
        ),
        idle: shell(coderScript("", "Nothing to change.")),
        reviewer: shell(reviewerScript),
        tester: shell(testerScript),
      },
    },
    "brains.json": { brains: { gpt: { provider: "openai", model: "gpt-5", apiKeyEnv: "CATCAFE_IT_BAKE_KEY" } } },
    "agents.json": {
      agents: [
        agent("fixer-coder", "coder", "fixer", 10),
        agent("breaker-coder", "coder", "breaker"),
        agent("idle-coder", "coder", "idle"),
        agent("cmd-reviewer", "reviewer", "reviewer"),
        agent("cmd-tester", "tester", "tester"),
      ],
    },
    "projects.json": { allowlist: [["node", "--test", "test/"]], maxIterations: 2 },
  };
  const dir = path.join(h.repo, ".catcafe");
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), `${JSON.stringify(content, null, 2)}\n`);
  gitIn(h.repo, "add", "-A", ".catcafe");
  gitIn(h.repo, "commit", "-q", "-m", "agents");
}

beforeAll(async () => {
  process.env.CATCAFE_IT_BAKE_KEY = "sk-test-not-a-real-key";
  db = await createTestDatabase();
  await allowAgents(db, { agentEnv: ["CATCAFE_IT_*"] });
  h = createHarness(db);
  api = createApiFixture(db);
  commitConfig();
  remote = path.join(h.workspacesRoot, "..", "origin.git");
  execFileSync("git", ["init", "-q", "--bare", remote]);
  await h.project(PROJECT, {}, { settings: { delivery: { method: "push", remote } } });
  await h.startRunner(undefined, { concurrency: 4 });
});

const contenders = [{ coder: "fixer-coder" }, { coder: "breaker-coder", label: "breaks a test" }, { coder: "idle-coder" }];

async function startBakeOff(prompt = "Fix sum() so the test passes"): Promise<string> {
  const { sessionId } = await startTask(deps(), { projectId: PROJECT, prompt, bakeOff: { contenders } }, testActor);
  await h.waitFor(sessionId, "the roundtable", (s) => s.fsm === "awaiting_operator_confirm");
  return sessionId;
}

async function events(sessionId: string) {
  return db.store.readStream(sessionId);
}

async function waitForEvent(sessionId: string, type: string, count = 1, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await events(sessionId)).filter((e) => e.type === type);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`no ${count} × ${type} on ${sessionId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a contender's own events say (those after its fork), to hold the comparison's figures against. */
async function fromEvents(sessionId: string) {
  const all = await events(sessionId);
  const own = all.slice(all.findIndex((e) => e.type === "BakeOffContender"));
  const finals = ofType<{ outcome: string; iterations: number }>(own, "SessionFinalized");
  const ownEnd = finals.find((f) => f.outcome !== "not_chosen") ?? null;
  const tests = ofType<{ stepId: string; passed: boolean }>(own, "TestCommandRecorded");
  const lastRun = tests.filter((t) => t.stepId === tests.at(-1)?.stepId);
  const calls = ofType<{ output: { kind?: string; usage?: { inputTokens?: number; outputTokens?: number } | null } }>(own, "StepCompleted")
    .map((c) => c.output)
    .filter((o) => o.kind === "agent");
  return {
    ownOutcome: ownEnd?.outcome ?? null,
    outcome: finals.at(-1)?.outcome ?? null,
    iterationsToApproval: ownEnd?.outcome === "approved" ? ownEnd.iterations : null,
    tests: tests.length ? { passed: lastRun.filter((t) => t.passed).length, failed: lastRun.filter((t) => !t.passed).length } : null,
    blocking: ofType<{ findings: Array<{ severity: string }> }>(own, "ReviewVerdictRecorded").map(
      (v) => v.findings.filter((f) => f.severity === "blocking").length,
    ),
    filesTouched: [
      ...new Set(
        ofType<{ changedFiles: Array<{ path: string }> }>(all, "WorkspaceCommitted").flatMap((c) => c.changedFiles.map((f) => f.path)),
      ),
    ].sort(),
    calls: calls.length,
    inputTokens: calls.reduce((n, o) => n + (o.usage?.inputTokens ?? 0), 0),
    outputTokens: calls.reduce((n, o) => n + (o.usage?.outputTokens ?? 0), 0),
  };
}

/** The comparison's figures of each contender, in the shape fromEvents gives. */
async function comparisonFigures(sessionId: string) {
  const viewer = api.caller(await api.user("viewer"));
  const comparison = await viewer.bakeOffView.comparison({ sessionId });
  return {
    comparison,
    figures: comparison.contenders.map((c) => ({
      ownOutcome: c.figures.ownOutcome,
      outcome: c.figures.outcome,
      iterationsToApproval: c.figures.iterationsToApproval,
      tests: c.figures.tests,
      blocking: c.figures.rounds.map((r) => r.blockingFindings),
      filesTouched: c.figures.filesTouched,
      calls: c.figures.usage.calls,
      inputTokens: c.figures.usage.inputTokens,
      outputTokens: c.figures.usage.outputTokens,
    })),
  };
}

describe("starting a bake-off", () => {
  it("is refused with a clear reason for an unknown coder, a reviewer as coder, twins, one contender, or implementation mode", async () => {
    const start = (bakeOff: unknown, mode?: string) =>
      rejection(startTask(deps(), { projectId: PROJECT, prompt: "x", ...(mode ? { mode } : {}), bakeOff } as never, testActor));
    expect((await start({ contenders: [{ coder: "fixer-coder" }, { coder: "nobody" }] })).message).toBe(
      "no agent nobody in this project (coders it knows: fixer-coder, breaker-coder, idle-coder)",
    );
    expect((await start({ contenders: [{ coder: "fixer-coder" }, { coder: "cmd-reviewer" }] })).message).toBe(
      "agent cmd-reviewer plays reviewer, not coder: a contender codes",
    );
    expect((await start({ contenders: [{ coder: "idle-coder" }, { coder: "idle-coder" }] })).message).toBe(
      "contenders c1 and c2 are the same (idle-coder): give each another coder or model",
    );
    expect((await start({ contenders: [{ coder: "idle-coder", model: "o3" }, { coder: "fixer-coder" }] })).message).toBe(
      "agent idle-coder (command) takes no model: only CLI shells and HTTP brains do",
    );
    expect((await start({ contenders: [{ coder: "idle-coder" }, { coder: "fixer-coder" }] }, "implementation")).code).toBe("INVALID_INPUT");
    await expect(
      startTask(deps(), { projectId: PROJECT, prompt: "x", bakeOff: { contenders: [{ coder: "idle-coder" }] } }, testActor),
    ).rejects.toThrow("a bake-off has 2 to 6 contenders");
  });
});

describe("a bake-off of three command coders", () => {
  let parent = "";
  let ids: Record<string, string> = {};

  it("one confirm forks three contenders in its transaction; they run in parallel to their own outcomes", async () => {
    parent = await startBakeOff();
    const before = await events(parent);
    const [started] = ofType<{ bakeOff: { contenders: Array<{ id: string; coder: string; label: string }> } }>(before, "TaskStarted");
    expect(started!.bakeOff.contenders.map((c) => [c.id, c.coder, c.label])).toEqual([
      ["c1", "fixer-coder", "fixer-coder"],
      ["c2", "breaker-coder", "breaks a test"],
      ["c3", "idle-coder", "idle-coder"],
    ]);
    // The roundtable ran once, on the parent.
    expect(ofType<{ phase: string }>(before, "AgentOutputRecorded").map((o) => o.phase)).toEqual([
      "discussion",
      "discussion",
      "discussion",
    ]);

    const confirmed = await confirmTask(deps(), { sessionId: parent, via: "api" }, testActor);
    const after = await events(parent);
    expect(after.slice(before.length).map((e) => e.type)).toEqual(["OperatorConfirmed", "BakeOffForked", "SessionStateChanged"]);
    expect(confirmed.version).toBe(after.at(-1)!.version);
    const [forked] = ofType<{ contenders: Array<{ id: string; sessionId: string; coder: string; label: string }> }>(after, "BakeOffForked");
    ids = Object.fromEntries(forked!.contenders.map((c) => [c.id, c.sessionId]));
    expect(Object.keys(ids)).toEqual(["c1", "c2", "c3"]);
    expect((await h.state(parent)).fsm).toBe("bake_off");

    // One transaction: the parent's BakeOffForked and every contender's first events.
    const tx = await db.pool.query<{ stream_id: string; tx_id: string; type: string }>(
      "SELECT stream_id, tx_id::text, type FROM events WHERE stream_id = ANY($1) AND type IN ('BakeOffForked', 'SessionForked', 'BakeOffContender')",
      [[parent, ...Object.values(ids)]],
    );
    expect(new Set(tx.rows.map((r) => r.tx_id)).size).toBe(1);
    expect(tx.rows).toHaveLength(7);

    for (const [cid, sessionId] of Object.entries(ids)) {
      const own = await events(sessionId);
      const start = own.findIndex((e) => e.type === "SessionForked");
      expect(own.slice(start, start + 4).map((e) => e.type)).toEqual([
        "SessionForked",
        "BakeOffContender",
        "OperatorConfirmed",
        "SessionStateChanged",
      ]);
      expect(own[start]!.data).toMatchObject({ parentId: parent, atVersion: before.length, reason: "bake_off" });
      expect((own[start]!.data as { title: string }).title).toMatch(new RegExp(`^Fix sum\\(\\) so the test passes \\(${cid}: `));
      expect(own[start + 1]!.data).toMatchObject({ parentSessionId: parent, contenderId: cid });
    }

    const done = await Promise.all(Object.values(ids).map((id) => h.waitFor(id, "its end", (s) => s.status === "finished", 60_000)));
    expect(done.map((s) => s.outcome)).toEqual(["approved", "max_iterations_reached", "max_iterations_reached"]);
    // Each built with its own coder, through the same reviewer and tester.
    const agentsOf = async (id: string) =>
      ofType<{ role: string; agentId: string; phase: string }>(
        (await events(id)).filter((e) => e.type === "AgentOutputRecorded" && (e.data as { phase: string }).phase !== "discussion"),
        "AgentOutputRecorded",
      ).map((o) => `${o.role}:${o.agentId}`);
    expect(new Set(await agentsOf(ids.c1!))).toEqual(new Set(["coder:fixer-coder", "reviewer:cmd-reviewer", "tester:cmd-tester"]));
    expect((await agentsOf(ids.c2!)).filter((a) => a.startsWith("coder:"))).toEqual(["coder:breaker-coder", "coder:breaker-coder"]);
    expect((await agentsOf(ids.c3!)).filter((a) => a.startsWith("coder:"))).toEqual(["coder:idle-coder", "coder:idle-coder"]);
    // c2: approved twice, its tests failed twice; c3: changes requested twice, never tested.
    const c2 = await events(ids.c2!);
    expect(ofType<{ passed: boolean }>(c2, "TestCommandRecorded").map((t) => t.passed)).toEqual([false, false]);
    const c3 = await events(ids.c3!);
    expect(ofType<{ decision: string }>(c3, "ReviewVerdictRecorded").map((v) => v.decision)).toEqual([
      "changes_requested",
      "changes_requested",
    ]);
    expect(ofType(c3, "TestCommandRecorded")).toEqual([]);
    // The contenders ran at the same time: each one's first step started before any of them ended.
    const firstStarts = await Promise.all(
      Object.values(ids).map(async (id) =>
        Date.parse((await events(id)).find((e) => e.type === "StepStarted" && e.version > before.length)!.recordedAt),
      ),
    );
    const ends = await Promise.all(
      Object.values(ids).map(async (id) =>
        Date.parse((await events(id)).find((e) => e.type === "SessionFinalized" && e.version > before.length)!.recordedAt),
      ),
    );
    expect(Math.max(...firstStarts)).toBeLessThan(Math.min(...ends));
    // No contender was delivered on its own (only a pick delivers).
    for (const id of Object.values(ids)) expect(ofType(await events(id), "DeliveryRequested")).toEqual([]);

    const view = await getBakeOff(deps(), parent);
    expect(view.contenders.map((c) => [c.id, c.sessionId, c.status, c.outcome])).toEqual([
      ["c1", ids.c1, "finished", "approved"],
      ["c2", ids.c2, "finished", "max_iterations_reached"],
      ["c3", ids.c3, "finished", "max_iterations_reached"],
    ]);
    expect(view).toMatchObject({ state: "bake_off", awaitsPick: true, choice: null });
  });

  it("the comparison over tRPC (bakeOffView.comparison) shows each contender's figures as its events hold them", async () => {
    const { comparison, figures } = await comparisonFigures(parent);
    expect(comparison.contenders.map((c) => [c.id, c.sessionId, c.coder])).toEqual([
      ["c1", ids.c1, "fixer-coder"],
      ["c2", ids.c2, "breaker-coder"],
      ["c3", ids.c3, "idle-coder"],
    ]);
    const expected = await Promise.all(Object.values(ids).map((id) => fromEvents(id)));
    expect(figures).toEqual(expected);
    // What the events hold, spelled out: approved in 1 / tests failed twice / changes requested twice.
    expect(figures.map((f) => [f.ownOutcome, f.iterationsToApproval, f.tests, f.blocking, f.filesTouched])).toEqual([
      ["approved", 1, { passed: 1, failed: 0 }, [0], ["src/sum.js"]],
      ["max_iterations_reached", null, { passed: 0, failed: 1 }, [0, 0], ["src/sum.js", "test/sum.test.js"]],
      ["max_iterations_reached", null, null, [1, 1], []],
    ]);
    // The lines changed, from git between the base commit and each head.
    expect(comparison.contenders.map((c) => c.figures.diff?.files)).toEqual([1, 2, 0]);
    // Tokens and cost: the usage projection (agent_usage) agrees with the events' calls.
    for (const c of comparison.contenders) {
      const usage = await sessionUsage(db.pool, c.sessionId, ZPricingSettings.parse({}));
      expect([c.figures.usage.inputTokens, c.figures.usage.outputTokens, c.figures.usage.cost]).toEqual([
        usage.total.inputTokens,
        usage.total.outputTokens,
        usage.total.cost,
      ]);
    }
    // Only the approved one may be picked; every contender ended: the judge may be asked.
    expect(comparison.contenders.map((c) => c.pickable)).toEqual([true, false, false]);
    expect(comparison.running).toBe(false);
  });

  it("the parent takes no second confirm and no cancel while it waits; a message is answered", async () => {
    expect((await rejection(confirmTask(deps(), { sessionId: parent }, testActor))).code).toBe("CONFLICT");
    const { cancelTask, followUpTask } = await import("../../server/tasks/commands");
    const cancel = await rejection(cancelTask(deps(), { sessionId: parent }, testActor));
    expect(cancel.code).toBe("CONFLICT");
    expect(cancel.message).toContain("dismiss it to stop its contenders");
    // No fork of it while it waits: the copy would claim the same contenders.
    const { forkSession } = await import("../../server/tasks/fork");
    const at = (await events(parent)).at(-1)!.version;
    const fork = await rejection(forkSession(deps(), { sessionId: parent, atVersion: at }, testActor));
    expect(fork.code).toBe("CONFLICT");
    expect(fork.message).toBe(
      `event ${at} is in the bake-off (its contenders are its forks): fork a contender, or fork before the confirm`,
    );
    await followUpTask(deps(), { sessionId: parent, text: "how is it going?" }, testActor);
    expect((await events(parent)).slice(-2).map((e) => e.type)).toEqual(["OperatorMessagePosted", "SystemReplied"]);
  });

  it("the judge's valid JSON is recorded as advice; a judge that answers something else is schema_invalid, asked again, then failed", async () => {
    const asked = await judgeBakeOff(deps(), { sessionId: parent }, testActor);
    expect(asked.agentId).toBe("cmd-reviewer");
    const [judged] = await waitForEvent(parent, "BakeOffJudged");
    expect(judged!.data).toEqual({
      stepId: asked.stepId,
      agent: "cmd-reviewer",
      recommendation: { winner: "c1", ranking: ["c1", "c2", "c3"], reasons: ["the only one approved with its tests passing"] },
    });
    // The prompt had each contender's outcome, verdicts, tests and diff.
    const [scheduled] = ofType<{ stepId: string; input: { prompt: string } }>(await events(parent), "StepScheduled").filter(
      (s) => s.stepId === asked.stepId,
    );
    expect(scheduled!.input.prompt).toContain("## Contender c2: breaks a test");
    expect(scheduled!.input.prompt).toContain("node --test test/ failed");
    expect(scheduled!.input.prompt).toContain("+  return a + b;");
    expect(scheduled!.input.prompt).toContain("Diff: (no change)");

    // The tester answers with a test plan: not a recommendation.
    await judgeBakeOff(deps(), { sessionId: parent, judge: "tester" }, testActor);
    const failures = await waitForEvent(parent, "BakeOffJudgeFailed", 2);
    expect(failures.map((f) => [(f.data as { errorClass: string }).errorClass, (f.data as { retried: boolean }).retried])).toEqual([
      ["schema_invalid", true],
      ["schema_invalid", false],
    ]);
    expect((failures[0]!.data as { message: string }).message).toContain("winner");
    expect((await getBakeOff(deps(), parent)).judge.recommendation).toMatchObject({ winner: "c1", agent: "cmd-reviewer" });
    expect((await rejection(judgeBakeOff(deps(), { sessionId: parent, judge: "nobody" }, testActor))).message).toBe(
      "no agent nobody to judge with (this bake-off's agents: cmd-reviewer, cmd-tester, fixer-coder)",
    );
  });

  it("a pick of one that was not approved is refused; the approved one is delivered, the others end not_chosen", async () => {
    const refused = await rejection(pickWinner(deps(), { sessionId: parent, contenderId: "c3" }, testActor));
    expect(refused.message).toBe("c3 ended max_iterations_reached: pick an approved contender (c1)");
    expect((await rejection(pickWinner(deps(), { sessionId: parent, contenderId: "c5" }, testActor))).code).toBe("INVALID_INPUT");

    const picked = await pickWinner(deps(), { sessionId: parent, contenderId: "c1", reason: "approved, tests pass" }, testActor);
    expect(picked).toMatchObject({ contenderId: "c1", winnerSessionId: ids.c1, deliveryProblem: null, notChosen: ["c2", "c3"] });
    expect(picked.delivery).toMatchObject({ method: "push", branch: `catcafe/${ids.c1}` });

    const chosen = (await events(parent)).find((e) => e.type === "BakeOffWinnerChosen")!;
    expect(chosen.data).toEqual({ contenderId: "c1", sessionId: ids.c1, reason: "approved, tests pass" });
    expect(chosen.metadata.actor).toEqual(testActor);
    expect(await h.state(parent)).toMatchObject({ status: "finished", outcome: "winner_chosen" });

    const [completed] = await waitForEvent(ids.c1!, "DeliveryCompleted");
    expect(completed!.data).toMatchObject({ pushed: { remote } });
    const winner = await h.state(ids.c1!);
    const head = winner.status === "none" ? "" : winner.head;
    expect(execFileSync("git", ["--git-dir", remote, "rev-parse", `refs/heads/catcafe/${ids.c1}`], { encoding: "utf8" }).trim()).toBe(head);
    expect(execFileSync("git", ["--git-dir", remote, "log", "--format=%H", `catcafe/${ids.c1}`], { encoding: "utf8" })).toContain(head);

    for (const [cid, endedAs] of [
      ["c2", "max_iterations_reached"],
      ["c3", "max_iterations_reached"],
    ] as const) {
      const state = await h.state(ids[cid]!);
      expect(state).toMatchObject({ status: "finished", outcome: "not_chosen" });
      expect(ofType(await events(ids[cid]!), "BakeOffNotChosen")).toEqual([
        { parentSessionId: parent, contenderId: cid, winner: "c1", endedAs },
      ]);
      expect(ofType(await events(ids[cid]!), "DeliveryRequested")).toEqual([]);
    }
    const view = await getBakeOff(deps(), parent);
    expect(view.contenders.map((c) => [c.id, c.outcome, c.finalOutcome])).toEqual([
      ["c1", "approved", "approved"],
      ["c2", "max_iterations_reached", "not_chosen"],
      ["c3", "max_iterations_reached", "not_chosen"],
    ]);
    expect(view.choice).toMatchObject({ contenderId: "c1", by: "user:tester", reason: "approved, tests pass" });
  });

  it("after the pick, the comparison still matches the events (the others not_chosen) and the agent record counts the chosen one", async () => {
    const { comparison, figures } = await comparisonFigures(ids.c2!);
    expect(figures).toEqual(await Promise.all(Object.values(ids).map((id) => fromEvents(id))));
    expect(figures.map((f) => [f.outcome, f.ownOutcome])).toEqual([
      ["approved", "approved"],
      ["not_chosen", "max_iterations_reached"],
      ["not_chosen", "max_iterations_reached"],
    ]);
    expect(comparison.chosen).toMatchObject({ contenderId: "c1", sessionId: ids.c1, by: "user:tester", reason: "approved, tests pass" });
    expect(comparison.contenders.map((c) => [c.chosen, c.recommended, c.rank])).toEqual([
      [true, true, 1],
      [false, false, 2],
      [false, false, 3],
    ]);
    const viewer = api.caller(await api.user("viewer"));
    const record = await viewer.agentRecord.stats({ projectId: PROJECT });
    const rowOf = (agentId: string) => record.agents.find((a) => a.agentId === agentId);
    expect(rowOf("fixer-coder")).toMatchObject({
      tasks: 1,
      finished: 1,
      approved: 1,
      bakeOffs: 1,
      chosen: 1,
      medianIterationsToApproval: 1,
    });
    expect(rowOf("breaker-coder")).toMatchObject({ tasks: 1, finished: 1, approved: 0, bakeOffs: 1, chosen: 0 });
    expect(rowOf("idle-coder")).toMatchObject({ tasks: 1, finished: 1, approved: 0, bakeOffs: 1, chosen: 0 });
    expect(record.bakeOffs).toBe(1);
  });

  it("the same pick again answers the same and records nothing; another pick or a dismissal is a conflict", async () => {
    const count = async () => Number((await db.pool.query("SELECT count(*) AS n FROM events")).rows[0].n);
    const before = await count();
    const again = await pickWinner(deps(), { sessionId: parent, contenderId: "c1", reason: "approved, tests pass" }, testActor);
    expect(again).toMatchObject({ contenderId: "c1", winnerSessionId: ids.c1, notChosen: ["c2", "c3"] });
    expect(again.delivery?.method).toBe("push");
    expect(await count()).toBe(before);
    const other = await rejection(pickWinner(deps(), { sessionId: parent, contenderId: "c2" }, testActor));
    expect(other.code).toBe("CONFLICT");
    expect(other.message).toBe("c1 was chosen already (by user:tester): a bake-off has one winner");
    expect((await rejection(dismissBakeOff(deps(), { sessionId: parent }, testActor))).code).toBe("CONFLICT");
    expect(await count()).toBe(before);
  });

  it("the export holds each contender's export and bake-off.json with figures, the judge's advice and the choice", async () => {
    const files = await exportSession(db.store, db.pool, parent);
    for (const [cid, id] of Object.entries(ids)) expect(files.has(`contenders/${cid}-${id}/summary.json`)).toBe(true);
    const doc = JSON.parse(String(files.get("bake-off.json"))) as {
      contenders: Array<{ id: string; sessionId: string; figures: Record<string, unknown> & { ownOutcome: string; outcome: string } }>;
      judge: { agent: string; recommendation: { winner: string } };
      choice: { contenderId: string; by: string; reason: string };
    };
    expect(doc.contenders.map((c) => [c.id, c.sessionId, c.figures.ownOutcome, c.figures.outcome])).toEqual([
      ["c1", ids.c1, "approved", "approved"],
      ["c2", ids.c2, "max_iterations_reached", "not_chosen"],
      ["c3", ids.c3, "max_iterations_reached", "not_chosen"],
    ]);
    // The figures are the comparison's, one computation (the wall time of an ended contender is fixed too).
    const { comparison } = await comparisonFigures(parent);
    expect(doc.contenders.map((c) => c.figures)).toEqual(JSON.parse(JSON.stringify(comparison.contenders.map((c) => c.figures))));
    expect(doc.judge).toMatchObject({ agent: "cmd-reviewer", recommendation: { winner: "c1" } });
    expect(doc.choice).toMatchObject({ contenderId: "c1", by: "user:tester", reason: "approved, tests pass" });
  });
});

describe("dismissing a bake-off", () => {
  it("stops the contenders still running (their steps cancelled) and ends them not_chosen; the parent ends dismissed", async () => {
    const parent = await startBakeOff("Fix sum() (to be dismissed)");
    await confirmTask(deps(), { sessionId: parent }, testActor);
    const { contenders: forked } = await getBakeOff(deps(), parent);
    const result = await dismissBakeOff(deps(), { sessionId: parent, reason: "changed our minds" }, testActor);
    expect(result.notChosen).toEqual(["c1", "c2", "c3"]);
    expect(await h.state(parent)).toMatchObject({ status: "finished", outcome: "bake_off_dismissed" });
    for (const c of forked) {
      expect(await h.state(c.sessionId!)).toMatchObject({ status: "finished", outcome: "not_chosen" });
      const steps = await db.pool.query<{ state: string }>("SELECT state FROM steps WHERE session_id = $1", [c.sessionId]);
      expect(steps.rows.every((s) => s.state !== "pending" && s.state !== "running")).toBe(true);
    }
    // Nothing more happens to them: a runner that finishes a cancelled step records nothing.
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of forked) expect(await h.state(c.sessionId!)).toMatchObject({ outcome: "not_chosen" });
  });
});
