// The team dashboard's read side on a real database: the sessions projection's task facts
// (and a rebuild giving the same rows), replay at any position, the fork tree, and the
// read-only settings with their roles. The session list has its own file
// (sessions-list.int.test.ts).
import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { rebuildProjections, snapshotProjections } from "../../server/events/rebuild";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { rerunTask } from "../../server/tasks/fork";
import { createApiFixture, outcomeOf, type ApiFixture } from "../helpers/api";
import { startBrainStub, stubAccess } from "../helpers/brains-stub";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, reviewApprove, reviewChanges, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let api: ApiFixture;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  api = createApiFixture(db);
  await h.startRunner();
});

const deps = () => ({ store: db.store, pool: db.pool });
const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } };

/** A proposal task confirmed, sent back once by the reviewer, then approved: two iterations. */
async function finishedTask(projectId: string): Promise<string> {
  await h.project(projectId, {
    coder: [{ reply: "Proposal: make sum add." }, coderFix, coderFix],
    reviewer: [{ reply: "Fine." }, { reply: reviewChanges() }, { reply: reviewApprove }],
    tester: [{ reply: "One test is enough." }, { reply: testPlan() }],
  });
  const { sessionId } = await startTask(deps(), { projectId, prompt: `Fix sum() in ${projectId}`, mode: "proposal" }, testActor);
  await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
  await confirmTask(deps(), { sessionId }, testActor);
  await h.waitFor(sessionId, "finished", (s) => s.status === "finished");
  return sessionId;
}

describe("sessions projection: task facts", () => {
  it("records project, mode, prompt, iteration and outcome; a rerun inherits them from iteration 1; a rebuild gives the same rows", async () => {
    const projectId = `facts-${crypto.randomBytes(3).toString("hex")}`;
    const parent = await finishedTask(projectId);
    const { sessionId: child } = await rerunTask(deps(), { sessionId: parent }, testActor);
    const rows = await db.pool.query(
      "SELECT id, project_id, mode, prompt, iteration, outcome, state, parent_id FROM sessions WHERE id = ANY($1) ORDER BY parent_id NULLS FIRST",
      [[parent, child]],
    );
    expect(rows.rows).toEqual([
      {
        id: parent,
        project_id: projectId,
        mode: "proposal",
        prompt: `Fix sum() in ${projectId}`,
        iteration: 2,
        outcome: "approved",
        state: "approved",
        parent_id: null,
      },
      expect.objectContaining({
        id: child,
        project_id: projectId,
        mode: "proposal",
        prompt: `Fix sum() in ${projectId}`,
        iteration: 1,
        outcome: null,
        parent_id: parent,
      }),
    ]);
    await h.waitFor(child, "the rerun's roundtable", (s) => s.fsm === "awaiting_operator_confirm");
    const live = await snapshotProjections(db.pool, db.store);
    await rebuildProjections(db.store, 5);
    expect(await snapshotProjections(db.pool, db.store)).toEqual(live);
  });
});

describe("replay, lineage and settings procedures", () => {
  let parent = "";
  let child = "";
  let projectId = "";
  beforeAll(async () => {
    projectId = `replay-${crypto.randomBytes(3).toString("hex")}`;
    parent = await finishedTask(projectId);
    child = (await rerunTask(deps(), { sessionId: parent }, testActor)).sessionId;
  });

  it("replay.at folds the state at any position, with the round, the timeline up to there and the landmarks", async () => {
    const viewer = api.caller(await api.user("viewer"));
    const latest = await viewer.replay.at({ sessionId: parent });
    expect(latest.version).toBe(latest.head);
    expect(latest.state).toMatchObject({
      fsm: "approved",
      status: "finished",
      outcome: "approved",
      iteration: 2,
      mode: "proposal",
      project: { id: projectId },
    });
    expect(latest.rounds.map((r) => [r.iteration, r.verdict])).toEqual([
      [1, "changes_requested"],
      [2, "approve"],
    ]);
    expect(latest.round?.entries.some((e) => e.kind === "test" && e.passed)).toBe(true);

    const confirmed = latest.marks.find((m) => m.type === "OperatorConfirmed")!;
    const before = await viewer.replay.at({ sessionId: parent, version: confirmed.version - 1, ahead: 3 });
    expect(before.state).toMatchObject({ fsm: "awaiting_operator_confirm", status: "active", outcome: null, iteration: 1 });
    expect(before.round?.entries.filter((e) => e.kind === "output").map((e) => e.kind === "output" && [e.role, e.phase])).toEqual([
      ["coder", "discussion"],
      ["reviewer", "discussion"],
      ["tester", "discussion"],
    ]);
    expect(before.timeline.at(-1)?.version).toBe(confirmed.version - 1);
    expect(before.event?.version).toBe(confirmed.version - 1);
    expect(before.upcoming.map((e) => e.version)).toEqual([confirmed.version, confirmed.version + 1, confirmed.version + 2]);
    // Beyond the end is the end; an unknown session is NOT_FOUND.
    expect((await viewer.replay.at({ sessionId: parent, version: 10_000 })).version).toBe(latest.head);
    expect(await outcomeOf(viewer.replay.at({ sessionId: "s-missing" }))).toBe("NOT_FOUND");
    expect(await outcomeOf(api.caller(null).replay.at({ sessionId: parent }))).toBe("UNAUTHORIZED");

    // A fork replays through its inherited events.
    const forked = await viewer.replay.at({ sessionId: child, version: 2 });
    expect(forked.fork).toEqual({ parentId: parent, forkVersion: expect.any(Number) });
    expect(forked.timeline.every((e) => e.streamId === parent)).toBe(true);
  });

  it("lineage.tree shows the root and every fork with where and why it forked, from any member", async () => {
    const viewer = api.caller(await api.user("viewer"));
    const grandchild = (await rerunTask(deps(), { sessionId: child }, testActor)).sessionId;
    const tree = await viewer.lineage.tree({ sessionId: grandchild });
    expect(tree.rootId).toBe(parent);
    expect(tree.focusId).toBe(grandchild);
    expect(tree.nodes.map((n) => [n.id, n.parentId, n.depth, n.forkReason])).toEqual([
      [parent, null, 0, null],
      [child, parent, 1, "rerun"],
      [grandchild, child, 2, "rerun"],
    ]);
    expect(tree.nodes[0]!.children).toEqual([child]);
    expect(tree.nodes[1]!.forkVersion).toBeGreaterThan(0);
    expect(await outcomeOf(viewer.lineage.tree({ sessionId: "s-missing" }))).toBe("NOT_FOUND");
  });

  it("settings: projects, agents and brains for operators; workflows as graphs for everyone; Check reaches the configured endpoint only", async () => {
    const stub = await startBrainStub((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "stub-model", object: "model" }] }));
    });
    try {
      const brainProject = `brains-${crypto.randomBytes(3).toString("hex")}`;
      await h.project(
        brainProject,
        {
          coder: {
            kind: "openai",
            id: "stub-brain",
            baseUrl: `${stub.url}/v1`,
            model: "stub-model",
            apiKeyEnv: "CATCAFE_TEST_STUB_API_KEY",
          },
        },
        { settings: stubAccess },
      );
      const viewer = api.caller(await api.user("viewer"));
      const operator = api.caller(await api.user("operator"));
      expect(await outcomeOf(viewer.settings.projects())).toBe("FORBIDDEN");
      expect(await outcomeOf(viewer.settings.checkBrain({ projectId: brainProject, source: "project", brainId: "stub-brain" }))).toBe(
        "FORBIDDEN",
      );

      const projects = await operator.settings.projects();
      const demo = projects.find((p) => p.id === projectId)!;
      expect(demo.allowlist).toEqual([["node", "--test", "**"]]);
      expect(demo.agents.map((a) => [a.role, a.kind, a.simulated]).sort()).toEqual([
        ["coder", "scripted", true],
        ["reviewer", "scripted", true],
        ["tester", "scripted", true],
      ]);
      expect(demo.config).toMatchObject({ found: false, unreadable: null, commit: expect.stringMatching(/^[0-9a-f]{40}$/) });

      const brains = await operator.settings.brains();
      expect(brains.find((b) => b.id === "stub-brain")).toMatchObject({
        projectId: brainProject,
        provider: "openai",
        apiKeyEnv: "CATCAFE_TEST_STUB_API_KEY",
        checkable: true,
        usedBy: ["coder"],
      });
      const check = await operator.settings.checkBrain({ projectId: brainProject, source: "project", brainId: "stub-brain" });
      expect(check).toMatchObject({ connectivity: "ok", modelExists: true, auth: "missing_key" });
      expect(stub.requests.map((r) => r.url)).toEqual(["/v1/models"]);
      expect(await outcomeOf(operator.settings.checkBrain({ projectId: brainProject, source: "project", brainId: "nope" }))).toBe(
        "NOT_FOUND",
      );
      expect(await outcomeOf(operator.settings.checkBrain({ projectId: projectId, source: "project", brainId: "coder-sim" }))).toBe(
        "PRECONDITION_FAILED",
      );

      const { workflows, fsms } = await viewer.settings.workflows();
      const loop = workflows.find((w) => w.id === "review_loop")!;
      expect(loop.problems).toEqual([]);
      expect(loop.nodes.find((n) => n.id === "reviewing")).toMatchObject({ kind: "step", role: "reviewer", output: "review_verdict" });
      expect(loop.edges).toContainEqual(
        expect.objectContaining({ from: "reviewing", to: "building", trigger: "changes_requested", guard: "under_cap", iterate: true }),
      );
      expect(loop.global).toEqual([
        { trigger: "cancel", to: "cancelled" },
        { trigger: "step_failed", to: "failed" },
      ]);
      expect(fsms.map((f) => f.id)).toContain("execution_fsm_v1");
    } finally {
      await stub.close();
    }
  });
});
