// A session's state as one document (req M10, docs/session-view.md "The state document"):
// `sessions.state` for a session in the middle of its review (the step running, its attempt),
// a Forge session at a stage's gate (the stage named, the ones completed), an ended session
// and a fork of it (outcome, lineage); each the very object the export's summary.json
// carries as `runtime`, and the one GET /api/sessions/:id/state returns.
import { beforeAll, describe, expect, it } from "vitest";
import type { CurrentUser } from "../../server/auth/request";
import { createSessionStateHandler } from "../../server/api/rest";
import { exportSession } from "../../server/export";
import { fileSettings } from "../../server/projects/config-edits";
import { ZSessionStateDocument, type SessionStateDocument } from "../../server/sessions/state-document";
import { foldTask, type StartedTask } from "../../server/task-engine";
import { cancelTask, startTask } from "../../server/tasks/commands";
import { newForge } from "../../server/tasks/forge";
import { rerunTask } from "../../server/tasks/fork";
import { FORGE_DEMO_IDEA } from "../../server/demo/forge-content";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { forgeAgents, quickForgeScripts } from "../helpers/forge";
import { createHarness, FIXED_SUM, ofType, reviewApprove, testPlan, type Harness, type TaskView } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let api: ApiFixture;
let viewer: CurrentUser;
const deps = () => ({ store: db.store, pool: db.pool });
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  api = createApiFixture(db);
  viewer = await api.user("viewer");
  await h.startRunner();
});

const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } };
const finished = (s: TaskView) => s.status === "finished";

/**
 * The document as a viewer reads it, checked against its schema and against summary.json's
 * `runtime` read at the same version (a running session may record an event between the reads).
 */
async function stateOf(sessionId: string): Promise<SessionStateDocument> {
  for (let attempt = 1; ; attempt++) {
    const document = await api.caller(viewer).sessions.state({ sessionId });
    expect(ZSessionStateDocument.parse(document)).toEqual(document);
    const files = await exportSession(db.store, db.pool, sessionId, { audience: "viewer", pricing: fileSettings().pricing });
    const summary = JSON.parse(files.get("summary.json")!.toString("utf8")) as {
      runtime: SessionStateDocument;
      state: string;
      sessionId: string;
    };
    if (summary.runtime.version !== document.version && attempt < 5) continue;
    expect(summary.runtime).toEqual(document);
    // summary.json's own fields stay as its readers know them.
    expect(summary).toMatchObject({ sessionId, state: document.state });
    return document;
  }
}

describe("sessions.state", () => {
  it("a session in the middle of its review: the state, the iteration, the reviewer's step running (attempt 1), what the budget counted", async () => {
    const projectId = await h.project(
      "state-review",
      { coder: [coderFix], reviewer: [{ reply: reviewApprove, chunkDelayMs: 2_000 }], tester: [{ reply: testPlan() }] },
      { maxIterations: 4 },
    );
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "the review running", (s) => s.fsm === "reviewing" && !!s.step);
    // Running: its attempt started on a runner.
    const running = async () => {
      const log = await db.store.readStream(sessionId);
      const step = (foldTask(log) as StartedTask).step;
      return ofType<{ stepId: string }>(log, "StepStarted").some((s) => s.stepId === step?.id);
    };
    for (let i = 0; i < 250 && !(await running()); i++) await new Promise((r) => setTimeout(r, 20));
    const log = await db.store.readStream(sessionId);
    const task = foldTask(log) as StartedTask;
    const stepId = task.step!.id;
    const document = await stateOf(sessionId);
    expect(document).toMatchObject({
      format: { name: "catcafe-session-state", version: 1 },
      sessionId,
      title: expect.any(String),
      workflow: { id: "review_loop", version: expect.any(Number) },
      mode: "implementation",
      status: "active",
      state: "reviewing",
      iteration: 1,
      stage: null,
      roles: {
        coder: { agentId: "coder-sim", kind: "scripted" },
        reviewer: { agentId: "reviewer-sim", kind: "scripted" },
        tester: { agentId: "tester-sim", kind: "scripted" },
      },
      head: task.head,
      step: { id: stepId, kind: "agent", state: "reviewing", role: "reviewer", attempt: 1, status: "running" },
      needed: null,
      budget: { iterations: { max: 4, used: 1 }, calls: { max: null, used: task.usage.calls }, tokens: { max: null }, cost: { used: 0 } },
      outcome: null,
      fork: null,
      version: log.at(-1)!.version,
      updatedAt: log.at(-1)!.recordedAt,
    });
    expect(task.usage.calls).toBe(2);
    expect(document.head).not.toBe(task.config.project.baseCommit);
    await cancelTask(deps(), { sessionId }, testActor);
    await h.waitFor(sessionId, "cancelled", finished);
    expect(await stateOf(sessionId)).toMatchObject({
      status: "finished",
      step: null,
      outcome: { outcome: "cancelled", errorClass: "cancelled" },
    });
  });

  it("a Forge session at the PRD gate names its stage, the stage's iteration and the stages completed; its budget is the one it started with", async () => {
    const projectId = await h.project("state-forge", forgeAgents(quickForgeScripts()));
    const budget = { maxCalls: 40, maxTokens: 500_000 };
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"], budget }, testActor);
    await h.waitFor(sessionId, "the PRD gate", (s) => s.fsm === "prd_review");
    const task = foldTask(await db.store.readStream(sessionId)) as StartedTask;
    expect(await stateOf(sessionId)).toMatchObject({
      workflow: { id: "forge" },
      status: "active",
      state: "prd_review",
      stage: { name: "prd", iteration: 1, completed: ["idea"] },
      roles: { planner: { agentId: "planner-sim" }, coder: { agentId: "coder-sim" }, reviewer: { agentId: "reviewer-sim" } },
      step: null,
      budget: { calls: { max: 40, used: task.usage.calls }, tokens: { max: 500_000, used: task.usage.tokens } },
      outcome: null,
    });
    expect(task.usage.calls).toBeGreaterThan(0);
  });

  it("an ended session: its outcome and when; a rerun of it: the fork it is, with its own outcome", async () => {
    const projectId = await h.project("state-ended", {
      coder: [coderFix],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    expect((await h.waitFor(sessionId, "approved", finished)).outcome).toBe("approved");
    const finalized = (await db.store.readStream(sessionId)).find((e) => e.type === "SessionFinalized")!;
    expect(await stateOf(sessionId)).toMatchObject({
      status: "finished",
      state: "approved",
      step: null,
      outcome: { outcome: "approved", errorClass: null, at: finalized.recordedAt },
      fork: null,
    });

    const rerun = await rerunTask(deps(), { sessionId }, testActor);
    // Read once it has ended: a running session's events move between the two reads.
    await h.waitFor(rerun.sessionId, "the rerun approved", finished);
    const forked = (await db.store.readStream(rerun.sessionId)).find((e) => e.type === "SessionForked" && e.streamId === rerun.sessionId)!;
    expect(await stateOf(rerun.sessionId)).toMatchObject({
      sessionId: rerun.sessionId,
      status: "finished",
      iteration: 1,
      fork: { parentId: sessionId, atVersion: (forked.data as { atVersion: number }).atVersion, reason: "rerun", note: null },
      outcome: { outcome: "approved" },
    });
  });

  it("GET /api/sessions/:id/state answers the same document for a viewer's token; 401 anonymous, 404 for no such session", async () => {
    const projectId = await h.project("state-rest", {
      coder: [coderFix],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "approved", finished);
    const handler = createSessionStateHandler(api.source);
    const token = (await api.caller(viewer).tokens.create({ name: "state" })).token;
    const get = (id: string, headers: Record<string, string>) =>
      handler(new Request(`http://cats.test/api/sessions/${id}/state`, { headers }), { params: Promise.resolve({ id }) });
    const res = await get(sessionId, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(await stateOf(sessionId));
    expect((await get(sessionId, {})).status).toBe(401);
    const missing = await get("s-000000000000", { authorization: `Bearer ${token}` });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: "NOT_FOUND", message: expect.stringContaining("s-000000000000") } });
  });
});
