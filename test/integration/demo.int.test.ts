// The demo (req N1) on a real database with an in-process runner: seeding creates the demo
// repository (whose test really fails), the project with simulated agents and one proposal
// task; the roundtable ends waiting for confirm; seeding again creates nothing; after the
// confirm the coder really fixes the file in the session's worktree, the reviewer approves
// and `node --test` really runs and passes, while the demo repository stays as it was; a
// newcomer's own tasks on the demo project, in either mode, run to their end as well.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { DEMO_BUGGY_SOURCE, DEMO_FIXED_SOURCE, DEMO_REPO_DIR, DEMO_TEST_COUNT } from "../../server/demo/content";
import { ensureDemoRepo } from "../../server/demo/repo";
import { seedDemo, type DemoSeedResult } from "../../server/demo/seed";
import { getProject } from "../../server/projects/projects";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { passGate } from "../../server/tasks/forge";
import { FORGE_TEST_ARGV } from "../../server/demo/forge-content";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness, ofType } from "../helpers/tasks";
import { expectDecidedExactly, waitForConversation } from "../helpers/conversations";
import { getMode } from "../../server/conversations/service";
import type { RecordedEvent } from "../../server/events/types";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
});

/** A data directory for one test, removed when the test ends. */
function dataDirForTest(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const deps = () => ({ store: db.store, pool: db.pool });
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

async function demoTaskCount(workflow: "forge" | "tasks" = "tasks"): Promise<number> {
  const r = await db.pool.query(
    `SELECT count(*)::int AS n FROM events WHERE type = 'TaskStarted' AND data->'project'->>'id' = 'demo' AND (data->>'workflow' = 'forge') = $1`,
    [workflow === "forge"],
  );
  return r.rows[0].n as number;
}

function seeded(result: DemoSeedResult): Extract<DemoSeedResult, { status: "seeded" }> {
  if (result.status !== "seeded") throw new Error(`the demo was not seeded: ${result.message}`);
  return result;
}

describe("the demo", () => {
  it("is off with CATCAFE_DEMO=0: nothing is created", async () => {
    const dataDir = dataDirForTest("catcafe-demo-off-");
    const result = await seedDemo(deps(), { dataDir, env: { CATCAFE_DEMO: "0" } });
    expect(result.status).toBe("disabled");
    expect(fs.existsSync(path.join(dataDir, DEMO_REPO_DIR))).toBe(false);
    expect((await db.pool.query("SELECT 1 FROM projects WHERE id = 'demo'")).rowCount).toBe(0);
    await expect(seedDemo(deps(), { dataDir, env: { CATCAFE_DEMO: "maybe" } })).rejects.toThrow(/CATCAFE_DEMO: must be one of/);
  });

  it("refuses to take over a directory that is not its repository", async () => {
    const dataDir = dataDirForTest("catcafe-demo-taken-");
    fs.mkdirSync(path.join(dataDir, DEMO_REPO_DIR));
    fs.writeFileSync(path.join(dataDir, DEMO_REPO_DIR, "notes.txt"), "mine");
    await expect(ensureDemoRepo(dataDir)).rejects.toThrow(/exists but is not the demo's git repository/);
    expect(fs.readFileSync(path.join(dataDir, DEMO_REPO_DIR, "notes.txt"), "utf8")).toBe("mine");
  });

  it("two starts seeding at once (one data directory, one database) create one repository, one task and one Forge pipeline", async () => {
    const other = await createTestDatabase();
    const dataDir = dataDirForTest("catcafe-demo-race-");
    const results = (await Promise.all([1, 2, 3].map(() => seedDemo({ store: other.store, pool: other.pool }, { dataDir, env: {} })))).map(
      seeded,
    );
    expect(new Set(results.map((r) => r.sessionId)).size).toBe(1);
    expect(new Set(results.map((r) => r.forgeSessionId)).size).toBe(1);
    expect(results.filter((r) => r.created.task)).toHaveLength(1);
    expect(results.filter((r) => r.created.repo).length).toBeGreaterThanOrEqual(1);
    expect(fs.readdirSync(dataDir)).toEqual([DEMO_REPO_DIR]); // no staging directory left behind
    const tasks = await other.pool.query("SELECT stream_id FROM events WHERE type = 'TaskStarted' ORDER BY stream_id");
    expect(tasks.rows).toEqual([results[0]!.sessionId, results[0]!.forgeSessionId].sort().map((id) => ({ stream_id: id })));
    const conversations = await other.pool.query("SELECT count(*)::int AS n FROM events WHERE type = 'ConversationStarted'");
    expect(conversations.rows[0].n).toBe(4);
    expect(new Set(results.map((r) => r.conversationIds.join()))).toEqual(new Set([results[0]!.conversationIds.join()]));
  });

  it("seeds a project with simulated agents and a proposal task; the roundtable waits for confirm; confirm → approved with the file fixed and node --test really passing", async () => {
    const dataDir = dataDirForTest("catcafe-demo-");
    const first = seeded(await seedDemo(deps(), { dataDir, env: {} }));
    const { sessionId, repoPath } = first;
    expect(first).toMatchObject({ projectId: "demo", created: { repo: true, project: true, task: true } });
    expect(first.message).toBe(
      `demo: created project "demo" and a proposal task waiting for your confirm: ${sessionId}; a Forge pipeline (it waits at its PRD gate): ${first.forgeSessionId}; a conversation per collaboration mode: /conversations`,
    );

    // A tiny git repository whose test really fails.
    expect(repoPath).toBe(path.join(dataDir, DEMO_REPO_DIR));
    expect(fs.readFileSync(path.join(repoPath, "src/slugify.js"), "utf8")).toBe(DEMO_BUGGY_SOURCE);
    expect(git(repoPath, "status", "--porcelain")).toBe("");
    const baseCommit = git(repoPath, "rev-parse", "HEAD");
    const before = spawnSync("node", ["--test", "test/"], { cwd: repoPath, encoding: "utf8" });
    expect(before.status).toBe(1);
    expect(before.stdout).toMatch(new RegExp(`# fail ${DEMO_TEST_COUNT - 1}\\b`));

    // The project and its agents say they are simulated.
    const project = await getProject(db.pool, "demo");
    expect(project.name).toBe("Demo project (simulated agents)");
    expect(project.allowlist).toEqual([["node", "--test", "**"]]);
    const agents = project.agents as Record<string, { kind: string; id: string; name: string }>;
    expect(Object.fromEntries(Object.entries(agents).map(([role, a]) => [role, [a.kind, a.id, a.name]]))).toEqual({
      coder: ["scripted", "coder-sim", "Coder (simulated)"],
      reviewer: ["scripted", "reviewer-sim", "Reviewer (simulated)"],
      tester: ["scripted", "tester-sim", "Tester (simulated)"],
      planner: ["scripted", "planner-sim", "Planner (simulated)"],
    });

    // One proposal task, started by the demo, ending in the roundtable's wait.
    let events = await db.store.readStream(sessionId);
    const started = events.find((e) => e.type === "TaskStarted")!;
    expect(started.data).toMatchObject({ mode: "proposal", project: { id: "demo", repoPath, baseCommit } });
    expect(started.metadata.actor).toEqual({ kind: "system", id: "demo" });
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    events = await db.store.readStream(sessionId);
    const discussion = ofType<{ role: string; agentId: string; phase: string; simulated: boolean; preview: string }>(
      events,
      "AgentOutputRecorded",
    );
    expect(discussion.map((d) => [d.role, d.agentId, d.phase, d.simulated])).toEqual([
      ["coder", "coder-sim", "discussion", true],
      ["reviewer", "reviewer-sim", "discussion", true],
      ["tester", "tester-sim", "discussion", true],
    ]);
    expect(discussion.map((d) => d.preview.split("\n")[0])).toEqual([
      "Proposal (simulated coder)",
      "Critique (simulated reviewer)",
      "Testability and risks (simulated tester)",
    ]);
    expect(ofType(events, "WorkspaceCommitted")).toEqual([]);
    expect(ofType(events, "ReviewVerdictRecorded")).toEqual([]);

    // Seeding again (the next start) creates nothing new.
    const again = seeded(await seedDemo(deps(), { dataDir, env: {} }));
    expect(again).toMatchObject({ sessionId, repoPath, created: { repo: false, project: false, task: false } });
    expect(again.message).toMatch(/started on an earlier run/);
    expect(await demoTaskCount()).toBe(1);
    expect(git(repoPath, "rev-parse", "HEAD")).toBe(baseCommit);

    await confirmTask(deps(), { sessionId, via: "button" }, testActor);
    const done = await h.waitFor(sessionId, "the end of the session", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");
    events = await db.store.readStream(sessionId);
    expect(ofType<{ changedFiles: unknown }>(events, "WorkspaceCommitted").map((c) => c.changedFiles)).toEqual([
      [{ path: "src/slugify.js", status: "modified" }],
    ]);
    expect(ofType<{ decision: string; override: string | null }>(events, "ReviewVerdictRecorded")).toMatchObject([
      { decision: "approve", override: null },
    ]);
    const tests = ofType<{ argv: string[]; passed: boolean; exitCode: number; stdoutTail: string }>(events, "TestCommandRecorded");
    expect(tests).toHaveLength(1);
    expect(tests[0]).toMatchObject({ argv: ["node", "--test", "test/"], passed: true, exitCode: 0 });
    expect(tests[0]!.stdoutTail).toMatch(new RegExp(`# pass ${DEMO_TEST_COUNT}\\b`));
    expect(tests[0]!.stdoutTail).toMatch(/# fail 0\b/);

    // The fix is in the session's worktree; the demo repository is as it was.
    expect(fs.readFileSync(path.join(h.workspacesRoot, sessionId, "src/slugify.js"), "utf8")).toBe(DEMO_FIXED_SOURCE);
    expect(fs.readFileSync(path.join(repoPath, "src/slugify.js"), "utf8")).toBe(DEMO_BUGGY_SOURCE);
    expect(git(repoPath, "rev-parse", "HEAD")).toBe(baseCommit);
    expect(git(repoPath, "status", "--porcelain")).toBe("");
    expect((await db.pool.query("SELECT state FROM sessions WHERE id = $1", [sessionId])).rows[0].state).toBe("approved");

    // A later start still finds the finished task and starts no other.
    expect(seeded(await seedDemo(deps(), { dataDir, env: {} })).sessionId).toBe(sessionId);
    expect(await demoTaskCount()).toBe(1);
    expect(await demoTaskCount("forge")).toBe(1);

    // The Forge demo waits at its PRD gate; two passes (the critic rejects the first draft)
    // take the word counter to Delivery in the demo repository, its own test really passing.
    const forgeId = first.forgeSessionId;
    for (const round of [1, 2]) {
      await h.waitFor(
        forgeId,
        `the PRD gate, round ${round}`,
        (s) => s.fsm === "prd_review" && (s as { iteration: number }).iteration === round,
      );
      await passGate(deps(), { sessionId: forgeId }, testActor);
    }
    expect((await h.waitFor(forgeId, "delivery", (s) => s.status === "finished", 60_000)).outcome).toBe("completed");
    const forgeEvents = await db.store.readStream(forgeId);
    expect(ofType<{ argv: string[]; passed: boolean }>(forgeEvents, "TestCommandRecorded")).toEqual([
      expect.objectContaining({ argv: FORGE_TEST_ARGV, passed: true }),
    ]);
    expect(ofType<{ simulated: boolean }>(forgeEvents, "AgentOutputRecorded").every((o) => o.simulated)).toBe(true);

    // A newcomer's own first task, in implementation mode with any prompt, runs to its end too:
    // the simulated agents answer what each step asks for (a build, a JSON verdict, a plan).
    const own = await startTask(deps(), { projectId: "demo", prompt: "Add a CHANGELOG entry for 1.0", mode: "implementation" }, testActor);
    const ownDone = await h.waitFor(own.sessionId, "the end of the newcomer's task", (s) => s.status === "finished");
    expect(ownDone.outcome).toBe("approved");
    const ownEvents = await db.store.readStream(own.sessionId);
    expect(
      ofType<{ role: string; phase: string; simulated: boolean }>(ownEvents, "AgentOutputRecorded").map((o) => [
        o.role,
        o.phase,
        o.simulated,
      ]),
    ).toEqual([
      ["coder", "build", true],
      ["reviewer", "verdict", true],
      ["tester", "test", true],
    ]);
    // And a proposal of its own holds its roundtable as discussion, as the demo task did.
    const proposal = await startTask(deps(), { projectId: "demo", prompt: "Rename slugify()", mode: "proposal" }, testActor);
    await h.waitFor(proposal.sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    await confirmTask(deps(), { sessionId: proposal.sessionId, via: "api" }, testActor);
    expect((await h.waitFor(proposal.sessionId, "approved", (s) => s.status === "finished")).outcome).toBe("approved");
    // The demo repository's own workflow (spec → build → security review → tests) runs too.
    const secure = await startTask(deps(), { projectId: "demo", prompt: "Fix slugify()", workflow: "secure_change" }, testActor);
    expect((await h.waitFor(secure.sessionId, "approved", (s) => s.status === "finished")).outcome).toBe("approved");
    const states = ofType<{ input: { state: string } }>(await db.store.readStream(secure.sessionId), "StepScheduled").map(
      (e) => e.input.state,
    );
    expect(states).toEqual(["spec", "building", "security_review", "test_plan", "running_tests"]);
  });

  it("seeds one conversation per collaboration mode, and each works with the simulated agents", async () => {
    const dataDir = dataDirForTest("catcafe-demo-chat-");
    const { conversationIds } = seeded(await seedDemo(deps(), { dataDir, env: {} }));
    expect(conversationIds).toHaveLength(4);
    const byMode = new Map<string, string>();
    for (const id of conversationIds) byMode.set((await getMode(deps(), id)).mode, id);
    expect([...byMode.keys()].sort()).toEqual(["expert_routing", "free_discussion", "sop", "voting"]);
    const notes = (events: RecordedEvent[]) => ofType<{ note: Record<string, unknown> }>(events, "ModeNoted").map((n) => n.note);

    // Free discussion: coder → reviewer → tester, whose mention of the coder closes a circle.
    const free = await waitForConversation(db.store, byMode.get("free_discussion")!, "the stall", (c) => c.state.stalled);
    expect(ofType<{ agent: string }>(free.events, "AgentReplied").map((r) => r.agent)).toEqual(["coder-sim", "reviewer-sim", "tester-sim"]);
    expect(ofType(free.events, "ConversationStalled")).toEqual([
      expect.objectContaining({ cycle: ["coder-sim", "reviewer-sim", "tester-sim", "coder-sim"] }),
    ]);
    // Expert routing: the question names tests and edge cases, the tester's skills.
    const routed = await waitForConversation(
      db.store,
      byMode.get("expert_routing")!,
      "the answer",
      (_c, ev) => ofType(ev, "AgentReplied").length === 1,
    );
    expect(notes(routed.events)[0]).toMatchObject({ kind: "routed", chosen: ["tester-sim"] });
    // Voting: node:test has the coder's weight 2 and the tester's 1 against vitest's 2.
    const vote = await waitForConversation(db.store, byMode.get("voting")!, "the tally", (_c, ev) =>
      notes(ev).some((n) => n.kind === "tallied"),
    );
    expect(notes(vote.events).find((n) => n.kind === "tallied")).toMatchObject({ outcome: "winner", winner: "node:test" });
    // SOP: plan, implement, review asks for changes, implement again, review approves.
    const sop = await waitForConversation(db.store, byMode.get("sop")!, "the end", (_c, ev) =>
      notes(ev).some((n) => n.kind === "sop_completed"),
    );
    expect(notes(sop.events).find((n) => n.kind === "sop_completed")).toEqual({
      kind: "sop_completed",
      steps: ["plan", "implement", "review", "implement", "review"],
    });
    for (const c of [free, routed, vote, sop]) expectDecidedExactly(c.events);
  }, 60_000);
});
