// Promises a reader relies on, each through the real runner, git and database, each with the
// negative side: Deliver refuses every ending that is not an approval (docs/delivery.md); a
// revert starts from the commit before the reverted stage, in the worktree itself (req F7,
// docs/forks.md); resume with no id takes the latest interrupted session (req F6); a person's
// edit is kept by every later redraft, not only the next one (req F4, docs/forge.md).
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { deliverSession } from "../../server/delivery/service";
import { getBlob } from "../../server/events/blobs";
import type { RecordedEvent } from "../../server/events/types";
import { ARTIFACT_PATHS as A } from "../../server/forge/artifacts";
import {
  FORGE_CODE_FILES,
  FORGE_CRITIQUES,
  FORGE_DEMO_IDEA,
  FORGE_DEMO_SCRIPTS,
  FORGE_FEATURES,
  FORGE_PRD_MD,
  FORGE_REQUIREMENTS,
} from "../../server/demo/forge-content";
import { HTTP_STATUS } from "../../server/errors";
import { releaseOrphanedLease } from "../../server/runner/liveness";
import { foldTask, type StartedTask } from "../../server/task-engine";
import { cancelTask, startTask } from "../../server/tasks/commands";
import { artifactText, editArtifact, forgeStatus, newForge, passGate } from "../../server/tasks/forge";
import { revertSession } from "../../server/tasks/fork";
import { resumeSession } from "../../server/tasks/resume";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { forgeAgents, quickForgeScripts } from "../helpers/forge";
import {
  createHarness,
  FIXED_SUM,
  gitIn,
  ofType,
  reviewApprove,
  reviewChanges,
  testPlan,
  type Harness,
  type TaskView,
} from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
const deps = () => ({ store: db.store, pool: db.pool });
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 4 });
});

const finished = (s: TaskView) => s.status === "finished";
const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } };
const stepsOfKind = (log: RecordedEvent[], kind: string) => ofType<{ kind: string }>(log, "StepScheduled").filter((s) => s.kind === kind);

describe("Deliver refuses every ending that is not an approval", () => {
  /** A session that committed work (its head is not its base) and ended `outcome`. */
  async function endedWithWork(outcome: string): Promise<string> {
    const projectId = `deliver-${outcome.replace(/_/g, "-")}`;
    if (outcome === "max_iterations_reached") {
      await h.project(
        projectId,
        { coder: [coderFix], reviewer: [{ reply: reviewChanges() }], tester: [{ reply: testPlan() }] },
        { maxIterations: 1 },
      );
    } else if (outcome === "failed") {
      // The first build commits; the second call of the coder fails for good.
      await h.project(projectId, {
        coder: [coderFix, { fault: "auth" }],
        reviewer: [{ reply: reviewChanges() }],
        tester: [{ reply: testPlan() }],
      });
    } else {
      // The review streams slowly: cancelled while it runs, after the build's commit.
      await h.project(projectId, {
        coder: [coderFix],
        reviewer: [{ reply: reviewApprove, chunkDelayMs: 3_000 }],
        tester: [{ reply: testPlan() }],
      });
    }
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    if (outcome === "cancelled") {
      await h.waitFor(sessionId, "the review running", (s) => s.fsm === "reviewing" && s.status === "active" && !!s.step);
      await cancelTask(deps(), { sessionId, reason: "wrong task" }, testActor);
    }
    const done = await h.waitFor(sessionId, outcome, finished);
    expect(done.outcome).toBe(outcome);
    expect(done.status === "finished" && done.head).not.toBe(done.status === "finished" && done.config.project.baseCommit);
    return sessionId;
  }

  for (const outcome of ["max_iterations_reached", "cancelled", "failed"]) {
    it(`a session that ended ${outcome} is refused with 412 and nothing is recorded`, async () => {
      const sessionId = await endedWithWork(outcome);
      const before = await db.store.readStream(sessionId);
      const refused = await rejection(deliverSession(deps(), { sessionId }, testActor));
      expect(refused).toMatchObject({
        code: "PRECONDITION_FAILED",
        message: `only an approved session can be delivered: it ended ${outcome}`,
      });
      expect(HTTP_STATUS[refused.code]).toBe(412);
      const after = await db.store.readStream(sessionId);
      expect(after.length).toBe(before.length);
      expect(ofType(after, "DeliveryRequested")).toEqual([]);
      expect(stepsOfKind(after, "deliver")).toEqual([]);
    });
  }
});

describe("resume with no id", () => {
  it("takes the latest interrupted session, not an older one, and not a newer one that completed", async () => {
    const projectId = await h.project("resume-latest", {
      coder: [coderFix],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    /** A proposal cancelled while it waits for a person (no step running: nothing is recorded after its end). */
    const interrupted = async () => {
      const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "proposal" }, testActor);
      await h.waitFor(sessionId, "the confirmation", (s) => s.fsm === "awaiting_operator_confirm");
      await cancelTask(deps(), { sessionId }, testActor);
      expect((await h.waitFor(sessionId, "cancelled", finished)).outcome).toBe("cancelled");
      return sessionId;
    };
    const older = await interrupted();
    const latest = await interrupted();
    const { sessionId: completed } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    expect((await h.waitFor(completed, "approved", finished)).outcome).toBe("approved");

    const resumed = await resumeSession({ ...deps(), lease: (stepId) => releaseOrphanedLease(db.pool, stepId) }, {}, testActor);
    expect(resumed).toMatchObject({ sessionId: latest, status: "resumed" });
    expect(ofType(await db.store.readStream(latest), "SessionResumed")).toHaveLength(1);
    expect(ofType(await db.store.readStream(older), "SessionResumed")).toEqual([]);
    expect(ofType(await db.store.readStream(completed), "SessionResumed")).toEqual([]);
  });
});

describe("revert to a middle stage of a Forge session", () => {
  it(
    "the new session's first step runs in a worktree at the commit before the stage, with that commit's files",
    { timeout: 120_000 },
    async () => {
      const projectId = await h.project("revert-worktree", forgeAgents(quickForgeScripts()));
      const { sessionId: parentId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["plan"] }, testActor);
      await h.waitFor(parentId, "the plan gate", (s) => s.fsm === "plan_review");
      await passGate(deps(), { sessionId: parentId }, testActor);
      const parent = await h.waitFor(parentId, "delivered", finished, 60_000);
      expect(parent.outcome).toBe("completed");
      const parentLog = await db.store.readStream(parentId);

      const fork = await revertSession(deps(), { sessionId: parentId, to: "plan" }, testActor);
      // The commit the plan stage started from in the parent (Design's last), not the parent's last.
      const before = (foldTask(parentLog.slice(0, fork.atVersion)) as StartedTask).head;
      const latest = (foldTask(parentLog) as StartedTask).head;
      expect(before).not.toBe(latest);
      expect(gitIn(h.repo, "cat-file", "-t", before)).toBe("commit");

      // The plan gate stops the fork after its first draft: its worktree is as the step left it.
      await h.waitFor(fork.sessionId, "the fork's plan gate", (s) => s.fsm === "plan_review");
      const own = (await db.store.readStream(fork.sessionId)).slice(fork.atVersion);
      const first = ofType<{ input: { state: string; workspace: { head: string } } }>(own, "StepScheduled")[0]!;
      expect(first.input).toMatchObject({ state: "plan_draft", workspace: { head: before } });
      const worktree = path.join(h.workspacesRoot, fork.sessionId);
      // Since `before`, the fork changed only what the plan stage writes.
      expect(gitIn(worktree, "merge-base", "--is-ancestor", before, "HEAD")).toBe("");
      expect(gitIn(worktree, "diff", "--name-only", before, "HEAD").split("\n").filter(Boolean)).toEqual([A.plan]);
      // The files are the commit's: Design's artifacts are there, Coding's and Delivery's are not.
      expect(fs.existsSync(path.join(worktree, A.design))).toBe(true);
      for (const file of [...Object.keys(FORGE_CODE_FILES), A.deliveryReport]) {
        expect({ file, present: fs.existsSync(path.join(worktree, file)) }).toEqual({ file, present: false });
      }
      expect(gitIn(worktree, "status", "--porcelain", "--untracked-files=no")).toBe("");
    },
  );
});

describe("a person's edit through two redrafts", () => {
  const TITLE = "# PRD: wc, a word counter (a person's title: keep GNU wc's output format)";
  const V3 = `${FORGE_PRD_MD}\nOut of scope: monitoring of any kind.\n`;

  it(
    "the critic asks twice to revise: after both redrafts the edit is in the PRD and in Design's prompt",
    { timeout: 120_000 },
    async () => {
      const scripts = quickForgeScripts();
      const [v1, v2] = scripts.planner.prd as [Record<string, unknown>, Record<string, unknown>];
      scripts.planner.prd = [v1, v2, { ...v2, files: { [A.prd]: V3, [A.requirements]: FORGE_REQUIREMENTS, [A.features]: FORGE_FEATURES } }];
      const secondRevise = JSON.stringify({
        decision: "revise",
        summary: "Say what is out of scope.",
        findings: [{ id: "prd-scope", severity: "blocking", message: "Name what is left out." }],
      });
      scripts.reviewer.prd = [{ reply: FORGE_CRITIQUES.prdRevise }, { reply: secondRevise }, { reply: FORGE_CRITIQUES.prdPass }];
      expect(FORGE_DEMO_SCRIPTS.reviewer.prd).toHaveLength(2);
      const projectId = await h.project("two-redrafts", forgeAgents(scripts));
      const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
      const atGate = (iteration: number) => (s: TaskView) =>
        s.fsm === "prd_review" && s.status === "active" && (s as StartedTask).iteration === iteration;
      await h.waitFor(sessionId, "the PRD gate", atGate(1));
      const log = () => db.store.readStream(sessionId);
      const prdNow = async () => {
        const events = await log();
        const prd = forgeStatus(sessionId, events).artifacts.find((a) => a.path === A.prd)!;
        return { prd, text: (await artifactText(deps(), events, prd.hash)).text };
      };
      const drafted = await prdNow();
      await editArtifact(
        deps(),
        { sessionId, path: A.prd, content: drafted.text.replace(/^.*\n/, `${TITLE}\n`), baseHash: drafted.prd.hash },
        testActor,
      );
      await passGate(deps(), { sessionId }, testActor);
      await h.waitFor(sessionId, "the first redraft", atGate(2));
      expect((await prdNow()).text).toBe(FORGE_PRD_MD.replace(/^.*\n/, `${TITLE}\n`));
      await passGate(deps(), { sessionId }, testActor);
      await h.waitFor(sessionId, "the second redraft", atGate(3));
      const second = await prdNow();
      expect(second.text).toBe(V3.replace(/^.*\n/, `${TITLE}\n`));
      expect(second.prd.held).toBeNull();
      const drafts = ofType<{ input: { state: string; prompt: string } }>(await log(), "StepScheduled").filter(
        (s) => s.input.state === "prd_draft",
      );
      expect(drafts.slice(1).map((d) => d.input.prompt.includes(`A person edited ${A.prd}`))).toEqual([true, true]);

      await passGate(deps(), { sessionId }, testActor);
      await h.waitFor(sessionId, "Design", (s) => s.fsm === "design_critic" || finished(s), 60_000);
      // What Design's actor is shown of the PRD (its prompt's attachments) holds the person's title.
      const design = ofType<{ input: { state: string; forge: { attach: Array<{ path: string; blob: { blob: string } }> } } }>(
        await log(),
        "StepScheduled",
      ).find((s) => s.input.state === "design_draft")!;
      const attached = design.input.forge.attach.find((a) => a.path === A.prd)!;
      expect((await getBlob(db.pool, attached.blob.blob)).content.toString("utf8")).toBe(second.text);
    },
  );
});
