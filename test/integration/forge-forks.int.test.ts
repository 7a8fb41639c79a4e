// Modify and revert of a Forge session (req F5, F7) through the real runner, git and database:
// the demo pipeline delivered (with a person's edit of the PRD), then a change that touches the
// plan and the code — the untouched plan tasks kept and counted, the person's edit carried
// over, a report whose patch is the diff — and a revert to Design that keeps the PRD.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../server/events/types";
import { ARTIFACT_PATHS as A, type Patch } from "../../server/forge/artifacts";
import { FORGE_DEMO_CHANGE, FORGE_DEMO_IDEA, FORGE_PRD_MD } from "../../server/demo/forge-content";
import { feedbackHistory } from "../../server/sessions/feedback";
import { editArtifact, forgeStatus, newForge, passGate } from "../../server/tasks/forge";
import { compareSessions } from "../../server/tasks/compare";
import { releaseOrphanedLease } from "../../server/runner/liveness";
import { modifySession, revertSession } from "../../server/tasks/fork";
import { resumeSession } from "../../server/tasks/resume";
import { foldTask, type StartedTask } from "../../server/task-engine";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { forgeAgents, quickForgeScripts, type ForgeScripts } from "../helpers/forge";
import { createHarness, gitIn, ofType, type Harness, type TaskView } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
const deps = () => ({ store: db.store, pool: db.pool });
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
});

async function forgeProject(id: string, change: (s: ForgeScripts) => ForgeScripts = (s) => s): Promise<string> {
  return h.project(id, forgeAgents(change(quickForgeScripts())));
}

const finished = (s: TaskView) => s.status === "finished";
const transitions = (log: RecordedEvent[]) =>
  ofType<{ from: string; to: string }>(log, "SessionStateChanged").map((d) => `${d.from}→${d.to}`);
const PERSON_LINE = "A person's note: the counts follow `wc`.";

/** The demo pipeline delivered, with a person's edit of prd.md at the PRD gate. */
async function delivered(projectId: string): Promise<{ sessionId: string; log: RecordedEvent[] }> {
  const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
  await h.waitFor(sessionId, "the PRD gate", (s) => s.fsm === "prd_review");
  await passGate(deps(), { sessionId }, testActor);
  const again = await h.waitFor(sessionId, "the PRD gate again", (s) => s.fsm === "prd_review" && (s as StartedTask).iteration === 2);
  const prd = (again as StartedTask).pipeline.artifacts[A.prd]!;
  await editArtifact(deps(), { sessionId, path: A.prd, content: `${FORGE_PRD_MD}\n${PERSON_LINE}\n`, baseHash: prd.hash }, testActor);
  await passGate(deps(), { sessionId }, testActor);
  expect((await h.waitFor(sessionId, "delivered", finished, 60_000)).outcome).toBe("completed");
  return { sessionId, log: await db.store.readStream(sessionId) };
}

describe("modify and revert of a delivered Forge session", () => {
  it("modify: triage → plan (T1–T5 kept, T6 added) → code patched → check → a report whose patch is the diff; the person's edit carried over; the base unchanged", async () => {
    const base = await delivered(await forgeProject("forge-modify"));
    const before = base.log.map((e) => [e.version, e.type, JSON.stringify(e.data)]);
    const baseState = foldTask(base.log) as StartedTask;
    const fork = await modifySession(deps(), { sessionId: base.sessionId, change: FORGE_DEMO_CHANGE, note: "users asked" }, testActor);
    const end = (await h.waitFor(fork.sessionId, "the modify delivered", finished, 60_000)) as StartedTask & { outcome: string };
    expect(end.outcome).toBe("completed");
    const log = await db.store.readStream(fork.sessionId);
    const own = log.slice(fork.atVersion);
    expect(own[0]).toMatchObject({ type: "SessionForked", data: { reason: "modify", note: "users asked", parentId: base.sessionId } });
    expect(own[1]).toMatchObject({ type: "ChangeRequested", data: { text: FORGE_DEMO_CHANGE, baseCommit: baseState.head } });
    expect(transitions(own)).toEqual([
      "completed→modify_triage",
      "modify_triage→plan_draft",
      "plan_draft→plan_critic",
      "plan_critic→coding_draft",
      "coding_draft→coding_critic",
      "coding_critic→check_run",
      "check_run→change_report",
      "change_report→completed",
    ]);
    // The triage's change request, valid, routed by its layers.
    expect(end.pipeline.artifacts[A.changeRequest]).toMatchObject({ problems: [], json: { layers: ["plan", "code"], risk: "low" } });
    // Untouched plan tasks kept (and counted), the code patched, the check run for real.
    const patch = end.pipeline.artifacts[A.patch]!.json as Patch;
    expect(patch.tasks).toEqual({ kept: 5, changed: 0, added: 1, removed: 0 });
    expect(patch.baseCommit).toBe(baseState.head);
    const dir = path.join(h.workspacesRoot, fork.sessionId);
    const independent = gitIn(dir, "diff", "--numstat", patch.baseCommit, patch.headCommit, "--", ".", ":(exclude).forge")
      .split("\n")
      .map((l) => l.split("\t"))
      .map(([added, removed, file]) => ({ path: file, added: Number(added), removed: Number(removed) }));
    expect(patch.files.map(({ path: p, added, removed }) => ({ path: p, added, removed }))).toEqual(independent);
    expect(patch.files.map((f) => [f.path, f.status])).toEqual([["bin/wc.js", "modified"]]);
    const report = fs.readFileSync(path.join(dir, A.changeReport), "utf8");
    for (const section of ["## Summary", "## Change details", "## Scope analysis", "## Testing", "## Patch"])
      expect(report).toContain(section);
    expect(report).toContain("| `bin/wc.js` | modified |");
    expect(report).toContain("Plan tasks: 5 kept, 0 changed, 1 added, 0 removed.");
    expect(ofType<{ passed: boolean }>(own, "TestCommandRecorded")).toEqual([expect.objectContaining({ passed: true })]);
    fs.writeFileSync(path.join(dir, "three.txt"), "a\nb\nc\n");
    expect(execFileSync("node", ["bin/wc.js", "--lines", "three.txt"], { cwd: dir, encoding: "utf8" }).trim()).toBe("3 three.txt");
    // The person's edit of the PRD is carried over, not regenerated: the PRD never ran again.
    expect(end.pipeline.artifacts[A.prd]).toMatchObject({ by: "person", hash: baseState.pipeline.artifacts[A.prd]!.hash });
    expect(fs.readFileSync(path.join(dir, A.prd), "utf8")).toContain(PERSON_LINE);
    expect(ofType(own, "StageStarted").map((d) => (d as { stage: string }).stage)).toEqual(["change", "plan", "coding", "check", "report"]);
    // The change request is feedback like any other, in the session's feedback history.
    expect(feedbackHistory(log).filter((f) => f.source === "change")).toEqual([
      expect.objectContaining({ text: FORGE_DEMO_CHANGE, by: `user:${testActor.id}`, version: fork.atVersion + 2 }),
    ]);
    const status = forgeStatus(fork.sessionId, log);
    expect(status).toMatchObject({ status: "Completed", parent: { sessionId: base.sessionId, changeType: "modify" } });
    expect(status.stages.map((s) => s.name)).toContain("report");
    // Side by side: the base's whole history shared, the plan and the code apart.
    const compared = await compareSessions(deps(), { a: base.sessionId, b: fork.sessionId });
    expect(compared.divergence).toMatchObject({ shared: fork.atVersion, streamId: base.sessionId, type: "SessionFinalized" });
    expect(compared.b.fork).toMatchObject({ parentId: base.sessionId, reason: "modify", by: `user:${testActor.id}` });
    expect(compared.code.files.map((f) => f.path)).toEqual(["bin/wc.js"]);
    expect(compared.code.diff).toContain('+const linesOnly = process.argv[2] === "--lines";');
    const pairs = Object.fromEntries(compared.artifacts.map((a) => [a.path, a]));
    expect(pairs[A.plan]).toMatchObject({ same: false, a: { by: "agent" }, b: { by: "agent" } });
    expect(pairs[A.plan]!.b!.text).toContain('"T6"');
    expect(pairs[A.prd]).toMatchObject({ same: true, a: { text: null } });
    expect(pairs[A.changeReport]).toMatchObject({ a: null, same: false });
    expect(compared.b.tests).toEqual([expect.objectContaining({ argv: ["node", "--test", "test/count.test.js"], passed: true })]);
    await expect(compareSessions(deps(), { a: base.sessionId, b: base.sessionId })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(compareSessions(deps(), { a: base.sessionId, b: "s-nosuch" })).rejects.toMatchObject({ code: "NOT_FOUND" });

    // The base: not one event added, its worktree still at its own last commit.
    expect((await db.store.readStream(base.sessionId)).map((e) => [e.version, e.type, JSON.stringify(e.data)])).toEqual(before);
    expect(gitIn(path.join(h.workspacesRoot, base.sessionId), "rev-parse", "HEAD")).toBe(baseState.head);
    expect(forgeStatus(base.sessionId, base.log).stages.map((s) => s.name)).not.toContain("report");
  }, 120_000);

  it("a triage that writes no valid change request stops for a person; guidance runs it again", async () => {
    const projectId = await forgeProject("forge-modify-bad", (s) => ({
      ...s,
      planner: {
        ...s.planner,
        change: [{ reply: "x", files: { [A.changeRequest]: '{"summary": "vague"}' } }, ...s.planner!.change!],
      },
    }));
    const base = await delivered(projectId);
    const fork = await modifySession(deps(), { sessionId: base.sessionId, change: FORGE_DEMO_CHANGE }, testActor);
    const stopped = await h.waitFor(fork.sessionId, "the change stop", (s) => s.fsm === "change_stopped", 30_000);
    expect((stopped as StartedTask).pipeline.artifacts[A.changeRequest]!.problems.join("\n")).toMatch(/layers|acceptanceCriteria/);
    const { giveFeedback } = await import("../../server/tasks/forge");
    await giveFeedback(deps(), { sessionId: fork.sessionId, text: "Name the layers and how it will be accepted." }, testActor);
    expect((await h.waitFor(fork.sessionId, "delivered after guidance", finished, 60_000)).outcome).toBe("completed");
  }, 120_000);

  it("revert --to design keeps the idea and the PRD (the person's edit too) and runs Design, Plan, Coding, Check and Delivery again; a stage that never ran is refused", async () => {
    const base = await delivered(await forgeProject("forge-revert"));
    const before = base.log.length;
    const fork = await revertSession(deps(), { sessionId: base.sessionId, to: "design", note: "simpler design" }, testActor);
    const log = await db.store.readStream(fork.sessionId);
    const own = log.slice(fork.atVersion);
    expect(own[0]).toMatchObject({ type: "SessionForked", data: { reason: "revert", state: "prd_critic" } });
    expect(ofType(log.slice(0, fork.atVersion), "StageStarted").map((d) => (d as { stage: string }).stage)).toEqual(["idea", "prd"]);
    expect(transitions(own)[0]).toBe("prd_critic→design_draft");
    const end = (await h.waitFor(fork.sessionId, "the revert delivered", finished, 60_000)) as StartedTask & { outcome: string };
    expect(end.outcome).toBe("completed");
    const after = await db.store.readStream(fork.sessionId);
    expect(ofType(after.slice(fork.atVersion), "StageStarted").map((d) => (d as { stage: string }).stage)).toEqual([
      "design",
      "plan",
      "coding",
      "check",
      "delivery",
    ]);
    expect(end.pipeline.artifacts[A.prd]).toMatchObject({ by: "person" });
    expect((await db.store.readStream(base.sessionId)).length).toBe(before);

    const { sessionId: early } = await newForge(deps(), { projectId: "forge-revert", idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(early, "the PRD gate", (s) => s.fsm === "prd_review");
    await expect(revertSession(deps(), { sessionId: early, to: "plan" }, testActor)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: "stage plan never ran in this session (it ran: idea, prd)",
    });
    await expect(revertSession(deps(), { sessionId: early, to: "nowhere" }, testActor)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('workflow forge has no stage or state "nowhere" (stages: change, idea, prd,'),
    });
  }, 120_000);

  it("resume of a pipeline that ran out of budget: refused until the budget is larger, then it goes on from the stage it could not pay for; no stage runs twice", async () => {
    const projectId = await forgeProject("forge-budget-resume");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [], budget: { maxCalls: 4 } }, testActor);
    expect((await h.waitFor(sessionId, "out of budget", finished, 60_000)).outcome).toBe("budget_exhausted");
    const before = await db.store.readStream(sessionId);
    const unpaid = ofType<{ state?: string }>(before, "BudgetExhausted")[0]!.state;
    expect(unpaid).toBeDefined();
    const resumeDeps = { ...deps(), lease: (stepId: string) => releaseOrphanedLease(db.pool, stepId) };
    await expect(resumeSession(resumeDeps, { sessionId }, testActor)).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("resume with a larger budget"),
    });
    expect(await resumeSession(resumeDeps, { sessionId, budget: { maxCalls: 100 } }, testActor)).toMatchObject({
      status: "resumed",
      message: `resumed: ${unpaid} runs again (it had ended budget_exhausted)`,
    });
    expect((await h.waitFor(sessionId, "delivered after the resume", finished, 60_000)).outcome).toBe("completed");
    const log = await db.store.readStream(sessionId);
    const started = ofType<{ stage: string }>(log, "StageStarted").map((d) => d.stage);
    expect(started).toEqual(["idea", "prd", "design", "plan", "coding", "check", "delivery"]);
    // The states that completed before the budget ran out were not scheduled again.
    const scheduled = ofType<{ input: { state: string } }>(log, "StepScheduled").map((d) => d.input.state);
    const beforeStates = ofType<{ input: { state: string } }>(before, "StepScheduled").map((d) => d.input.state);
    expect(scheduled.slice(0, beforeStates.length)).toEqual(beforeStates);
    expect(scheduled.slice(beforeStates.length)[0]).toBe(unpaid);
  }, 120_000);
});
