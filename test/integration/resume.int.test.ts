// Resume (req F6) after a kill -9: a runner process dies in the middle of a Forge stage and of
// a task's build; its leases are long (a minute), so without resume nothing would move for
// that long. Resume sees the runner gone and releases them; the next runner continues both.
// Nothing that completed runs again: each session's steps are exactly those of an undisturbed
// run of the same scripts, and every step completed once.
import type { ChildProcess } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { FORGE_DEMO_IDEA } from "../../server/demo/forge-content";
import type { RecordedEvent } from "../../server/events/types";
import { releaseOrphanedLease } from "../../server/runner/liveness";
import { startTask } from "../../server/tasks/commands";
import { newForge } from "../../server/tasks/forge";
import { resumeSession } from "../../server/tasks/resume";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { forgeAgents, quickForgeScripts } from "../helpers/forge";
import { spawnRunnerProcess } from "../helpers/runner-process";
import { createHarness, FIXED_SUM, ofType, reviewApprove, testPlan, type Harness } from "../helpers/tasks";

process.env.CATCAFE_SANDBOX = "off";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
});
const deps = () => ({ store: db.store, pool: db.pool, lease: (stepId: string) => releaseOrphanedLease(db.pool, stepId) });
const finished = (s: { status: string }) => s.status === "finished";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The demo's Forge agents, quick, except a slow coder: the kill lands while it writes. */
function slowCodingAgents(slowCoding: boolean) {
  const scripts = quickForgeScripts();
  if (slowCoding)
    scripts.coder.coding = scripts.coder.coding!.map((e) => ({ ...e, reply: `${String(e.reply)} `.repeat(80), chunkDelayMs: 100 }));
  return forgeAgents(scripts);
}

const taskAgents = (slow: boolean) => ({
  coder: [{ reply: slow ? "fixing sum, slowly ".repeat(40) : "fixed", chunkDelayMs: slow ? 100 : 0, files: { "src/sum.js": FIXED_SUM } }],
  reviewer: [{ reply: reviewApprove }],
  tester: [{ reply: testPlan() }],
});

const scheduledStates = (log: RecordedEvent[]) => ofType<{ input: { state: string } }>(log, "StepScheduled").map((d) => d.input.state);

async function startedStep(sessionId: string, state: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const log = await db.store.readStream(sessionId);
    const step = ofType<{ stepId: string; input: { state: string } }>(log, "StepScheduled").find((d) => d.input.state === state);
    if (step && ofType<{ stepId: string }>(log, "StepStarted").some((d) => d.stepId === step.stepId)) return;
    await sleep(50);
  }
  throw new Error(`${state} never started in ${sessionId}`);
}

describe("resume after a runner is killed with -9", () => {
  it("in the middle of a Forge stage and of a task build: released at once, finished by the next runner, nothing completed runs twice", async () => {
    await h.project("resume-forge", slowCodingAgents(true));
    await h.project("resume-forge-ref", slowCodingAgents(false));
    await h.project("resume-task", taskAgents(true));
    await h.project("resume-task-ref", taskAgents(false));
    const doomed: ChildProcess = spawnRunnerProcess({
      databaseUrl: db.url,
      id: "doomed",
      stateDir: h.stateDir,
      workspacesRoot: h.workspacesRoot,
      leaseMs: 60_000,
      env: { CATCAFE_SANDBOX: "off" },
    });
    const forge = (await newForge(deps(), { projectId: "resume-forge", idea: FORGE_DEMO_IDEA, gates: [] }, testActor)).sessionId;
    await startedStep(forge, "coding_draft");
    const task = (await startTask(deps(), { projectId: "resume-task", prompt: "Fix sum()", mode: "implementation" }, testActor)).sessionId;
    await startedStep(task, "building");
    doomed.kill("SIGKILL");
    await new Promise((r) => doomed.once("exit", r));

    // While the dead runner still counts as live (its last heartbeat is recent) nothing is taken from it.
    const early = await resumeSession(deps(), { sessionId: forge }, testActor);
    expect(["running", "released"]).toContain(early.status);
    // Once it is no longer live, resume hands its steps over; the lease alone would hold them for a minute.
    let forgeResume = early;
    for (let i = 0; i < 40 && forgeResume.status !== "released"; i++) {
      await sleep(500);
      forgeResume = await resumeSession(deps(), { sessionId: forge }, testActor);
    }
    expect(forgeResume).toMatchObject({ status: "released" });
    expect(forgeResume.message).toContain("No runner is live");
    const taskResume = await resumeSession(deps(), { sessionId: task }, testActor);
    expect(taskResume).toMatchObject({ status: "released" });

    await h.startRunner();
    const forgeEnd = await h.waitFor(forge, "the Forge session delivered", finished, 60_000);
    const taskEnd = await h.waitFor(task, "the task approved", finished, 60_000);
    expect(forgeEnd.outcome).toBe("completed");
    expect(taskEnd.outcome).toBe("approved");
    expect((await resumeSession(deps(), { sessionId: task }, testActor).catch((e: Error) => e)).message).toContain("was not interrupted");

    // The same scripts, undisturbed, for the steps a run takes.
    const refForge = (await newForge(deps(), { projectId: "resume-forge-ref", idea: FORGE_DEMO_IDEA, gates: [] }, testActor)).sessionId;
    const refTask = (await startTask(deps(), { projectId: "resume-task-ref", prompt: "Fix sum()", mode: "implementation" }, testActor))
      .sessionId;
    await h.waitFor(refForge, "the reference Forge run", finished, 60_000);
    await h.waitFor(refTask, "the reference task", finished, 60_000);
    for (const [resumed, reference, killedIn] of [
      [forge, refForge, "coding_draft"],
      [task, refTask, "building"],
    ] as const) {
      const log = await db.store.readStream(resumed);
      expect(scheduledStates(log)).toEqual(scheduledStates(await db.store.readStream(reference)));
      const completed = ofType<{ stepId: string }>(log, "StepCompleted").map((d) => d.stepId);
      expect(new Set(completed).size).toBe(completed.length);
      // The killed step: started twice (the second attempt took it over), completed once.
      const killed = ofType<{ stepId: string; input: { state: string } }>(log, "StepScheduled").find((d) => d.input.state === killedIn)!;
      const starts = ofType<{ stepId: string; attempt: number; reclaimed?: boolean }>(log, "StepStarted").filter(
        (d) => d.stepId === killed.stepId,
      );
      expect(starts.map((d) => d.attempt)).toEqual([1, 2]);
      expect(completed.filter((id) => id === killed.stepId)).toHaveLength(1);
    }
  }, 120_000);
});
