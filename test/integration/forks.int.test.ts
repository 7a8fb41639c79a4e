// Forks at any event (req E5, F7), revert and resume of review-loop tasks, through the real
// runner on a real database and git: every fork's state is the replay state at its position,
// every fork continued ends with its own worktree, and the parent never changes.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../server/events/types";
import { rebuildProjections, snapshotProjections } from "../../server/events/rebuild";
import { releaseOrphanedLease } from "../../server/runner/liveness";
import { replayAt } from "../../server/sessions/replay";
import { cancelTask, confirmTask, startTask } from "../../server/tasks/commands";
import { forkSession, modifySession, revertSession } from "../../server/tasks/fork";
import { resumeSession } from "../../server/tasks/resume";
import { foldTask, type StartedTask } from "../../server/task-engine";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, reviewChanges, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 6 });
});

const deps = () => ({ store: db.store, pool: db.pool });
const resumeDeps = () => ({ ...deps(), lease: (stepId: string) => releaseOrphanedLease(db.pool, stepId) });
const finished = (s: { status: string }) => s.status === "finished";
const coderFix = { reply: "Changed sum to add.", files: { "src/sum.js": FIXED_SUM } };
const coderWrong = {
  reply: "Tried something.",
  files: { "src/sum.js": "function sum(a, b) {\n  return a * b;\n}\nmodule.exports = { sum };\n" },
};

/** What a fork inherits of the state at its position (its own step, version and budget clock aside). */
function inheritedPart(s: StartedTask) {
  return {
    fsm: s.fsm,
    iteration: s.iteration,
    head: s.head,
    lastCommit: s.lastCommit,
    lastVerdict: s.lastVerdict,
    lastTestPlan: s.lastTestPlan,
    openIssues: s.openIssues,
    thread: s.thread,
    invocations: s.invocations,
    config: s.config,
  };
}

/** The parent as a snapshot: its own events, and its worktree's files and commit. */
async function snapshot(sessionId: string) {
  const events = await db.store.readStream(sessionId);
  const dir = path.join(h.workspacesRoot, sessionId);
  return {
    events: events.map((e) => [e.version, e.type, JSON.stringify(e.data)]),
    head: gitIn(dir, "rev-parse", "HEAD"),
    sum: fs.readFileSync(path.join(dir, "src/sum.js"), "utf8"),
    status: gitIn(dir, "status", "--porcelain"),
  };
}

async function finishedParent(id: string): Promise<{ sessionId: string; events: RecordedEvent[] }> {
  const projectId = await h.project(id, {
    coder: [{ reply: "Proposal: make sum add." }, coderWrong, coderFix],
    reviewer: [{ reply: "Fine." }, { reply: reviewChanges("sum multiplies") }, { reply: reviewApprove }],
    tester: [{ reply: "One test is enough." }, { reply: testPlan() }],
  });
  const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum() so the test passes", mode: "proposal" }, testActor);
  await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
  await confirmTask(deps(), { sessionId, via: "api" }, testActor);
  const done = await h.waitFor(sessionId, "approved", finished);
  expect(done.outcome).toBe("approved");
  return { sessionId, events: await db.store.readStream(sessionId) };
}

describe("fork at every event of a finished review-loop session", () => {
  it("each fork's state is the replay state at its position; each continued fork ends with its own worktree; the parent is unchanged", async () => {
    const parent = await finishedParent("fork-every");
    const before = await snapshot(parent.sessionId);
    const startedAt = parent.events.find((e) => e.type === "TaskStarted")!.version;
    const forks: Array<{ at: number; id: string }> = [];
    for (const event of parent.events) {
      const at = event.version;
      if (at < startedAt) {
        const refused = await rejection(forkSession(deps(), { sessionId: parent.sessionId, atVersion: at }, testActor));
        expect(refused.code).toBe("INVALID_INPUT");
        expect(refused.message).toContain(`before its task started (event ${startedAt})`);
        continue;
      }
      const fork = await forkSession(deps(), { sessionId: parent.sessionId, atVersion: at, note: `at ${at}` }, testActor);
      expect(fork).toMatchObject({ parentId: parent.sessionId, atVersion: at });
      const replayed = await replayAt(deps(), { sessionId: parent.sessionId, version: at });
      const childHistory = await db.store.readStream(fork.sessionId);
      // The child reads the parent's events 1..at (not copied), then its SessionForked.
      expect(childHistory.slice(0, at).map((e) => e.eventId)).toEqual(parent.events.slice(0, at).map((e) => e.eventId));
      expect(childHistory[at]).toMatchObject({
        type: "SessionForked",
        data: { parentId: parent.sessionId, atVersion: at, note: `at ${at}` },
      });
      const atFork = foldTask(childHistory.slice(0, at + 1)) as StartedTask;
      const there = foldTask(parent.events.slice(0, at)) as StartedTask;
      expect(inheritedPart(atFork)).toEqual(inheritedPart(there));
      expect(replayed.state.fsm).toBe(there.fsm);
      forks.push({ at, id: fork.sessionId });
    }
    expect(forks.length).toBeGreaterThan(40);
    // The fork at the last event is a finished copy, listed as such.
    const last = forks.at(-1)!;
    expect(last.at).toBe(parent.events.at(-1)!.version);
    const copy = await db.pool.query("SELECT state, outcome FROM sessions WHERE id = $1", [last.id]);
    expect(copy.rows[0]).toEqual({ state: "approved", outcome: "approved" });

    // Continue every fork: a person confirms where one waits for it; the rest runs on its own.
    // Over 40 sessions on one runner of 6 slots: 25 s here, 115 s on a third of a core, so
    // each wait may take most of the test's time.
    const ends = await Promise.all(
      forks.map(async ({ at, id }) => {
        const waiting = await h.waitFor(id, "a fork settles", (s) => finished(s) || s.fsm === "awaiting_operator_confirm", 240_000);
        if (!finished(waiting)) await confirmTask(deps(), { sessionId: id, via: "api" }, testActor);
        const end = await h.waitFor(id, "a fork ends", finished, 240_000);
        return { at, id, outcome: end.outcome, head: end.status === "finished" ? end.head : null };
      }),
    );
    for (const end of ends) {
      expect(end.outcome, `fork at ${end.at}`).toBe("approved");
      // Its own worktree (unless it inherited a finished position: nothing ran, nothing to build in).
      const ranAfterFork = (await db.store.readStream(end.id)).slice(end.at).some((e) => e.type === "StepScheduled");
      if (ranAfterFork) {
        const dir = path.join(h.workspacesRoot, end.id);
        expect(fs.existsSync(dir), `worktree of the fork at ${end.at}`).toBe(true);
        expect(gitIn(dir, "rev-parse", "HEAD")).toBe(end.head);
        expect(fs.readFileSync(path.join(dir, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
      }
    }
    expect(await snapshot(parent.sessionId)).toEqual(before);
    // Lineage both ways: every fork names the parent, and the parent's row lists them.
    const children = await db.pool.query("SELECT count(*)::int AS n FROM sessions WHERE parent_id = $1", [parent.sessionId]);
    expect(children.rows[0].n).toBe(forks.length);
  }, 300_000);

  it("a fork of a fork inherits through both; bad positions and unknown sessions are refused, nothing created", async () => {
    const parent = await finishedParent("fork-of-fork");
    const confirmAt = parent.events.find((e) => e.type === "OperatorConfirmed")!.version;
    const first = await forkSession(deps(), { sessionId: parent.sessionId, atVersion: confirmAt - 1 }, testActor);
    expect((await h.state(first.sessionId)).fsm).toBe("awaiting_operator_confirm");
    const second = await forkSession(deps(), { sessionId: first.sessionId, atVersion: confirmAt, reason: "revert" }, testActor);
    const history = await db.store.readStream(second.sessionId);
    expect(history.slice(0, confirmAt - 1).map((e) => e.eventId)).toEqual(parent.events.slice(0, confirmAt - 1).map((e) => e.eventId));
    expect(history[confirmAt - 1]!.type).toBe("SessionForked");
    await confirmTask(deps(), { sessionId: second.sessionId, via: "api" }, testActor);
    expect((await h.waitFor(second.sessionId, "the fork of a fork ends", finished, 60_000)).outcome).toBe("approved");

    const count = async () => (await db.pool.query("SELECT count(*)::int AS n FROM sessions")).rows[0].n as number;
    const n = await count();
    const beyond = await rejection(forkSession(deps(), { sessionId: parent.sessionId, atVersion: parent.events.length + 1 }, testActor));
    expect(beyond.code).toBe("INVALID_INPUT");
    expect(beyond.message).toMatch(/has events 1\.\.\d+: there is no event/);
    expect((await rejection(forkSession(deps(), { sessionId: "s-nosuch", atVersion: 3 }, testActor))).code).toBe("NOT_FOUND");
    const never = await rejection(revertSession(deps(), { sessionId: parent.sessionId, to: "proposal_coder", iteration: 7 }, testActor));
    expect(never.message).toContain("not in 7");
    const unknown = await rejection(revertSession(deps(), { sessionId: parent.sessionId, to: "design" }, testActor));
    expect(unknown.message).toMatch(/has no state "design" \(states: start, /);
    expect(await count()).toBe(n);
  }, 120_000);

  it("a fork inside a step still running is refused; before it, it is not", async () => {
    const projectId = await h.project("fork-running", {
      coder: [{ reply: "a slow proposal ".repeat(40), chunkDelayMs: 200 }],
      reviewer: [{ reply: "ok" }],
      tester: [{ reply: "ok" }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "proposal" }, testActor);
    await h.waitFor(sessionId, "the proposal streams", () => true);
    let events: RecordedEvent[] = [];
    for (let i = 0; i < 200 && !events.some((e) => e.type === "StepStarted"); i++) {
      await new Promise((r) => setTimeout(r, 25));
      events = await db.store.readStream(sessionId);
    }
    const scheduled = events.find((e) => e.type === "StepScheduled")!.version;
    const inside = await rejection(forkSession(deps(), { sessionId, atVersion: events.at(-1)!.version }, testActor));
    expect(inside.code).toBe("CONFLICT");
    expect(inside.message).toContain(`still running: fork before event ${scheduled}`);
    const before = await forkSession(deps(), { sessionId, atVersion: scheduled - 1 }, testActor);
    // Its own step, scheduled again (a runner may have started it already: not necessarily the last event).
    const forkHistory = await db.store.readStream(before.sessionId);
    const opened = forkHistory.findIndex((e) => e.type === "SessionForked");
    const again = forkHistory.slice(opened + 1).find((e) => e.type === "StepScheduled");
    const original = events.find((e) => e.type === "StepScheduled")!;
    expect((again?.data as { kind: string } | undefined)?.kind).toBe((original.data as { kind: string }).kind);
    await cancelTask(deps(), { sessionId }, testActor);
    await cancelTask(deps(), { sessionId: before.sessionId }, testActor);
  }, 60_000);
});

describe("revert, modify and resume of a task", () => {
  it("revert --to building (iteration 2) keeps the first iteration and builds again; revert to the roundtable asks for a confirm again", async () => {
    const parent = await finishedParent("revert-task");
    const before = await snapshot(parent.sessionId);
    const second = await revertSession(deps(), { sessionId: parent.sessionId, to: "building", iteration: 2, note: "try again" }, testActor);
    const history = await db.store.readStream(second.sessionId);
    const forked = history.find((e) => e.type === "SessionForked")!;
    expect(forked.data).toMatchObject({ reason: "revert", note: "try again" });
    // Everything before the second build is kept: the first build's verdict is inherited.
    expect(ofType<{ decision: string }>(history.slice(0, forked.version), "ReviewVerdictRecorded").map((v) => v.decision)).toEqual([
      "changes_requested",
    ]);
    const entered = history.slice(forked.version);
    expect(ofType<{ from: string; to: string }>(entered, "SessionStateChanged")[0]).toMatchObject({ from: "reviewing", to: "building" });
    expect(ofType<{ iteration: number }>(entered, "IterationStarted")).toEqual([{ iteration: 2, reason: "reverted to building" }]);
    expect((await h.waitFor(second.sessionId, "the revert ends", finished, 60_000)).outcome).toBe("approved");

    const roundtable = await revertSession(deps(), { sessionId: parent.sessionId, to: "proposal_reviewer" }, testActor);
    const waits = await h.waitFor(roundtable.sessionId, "back at the confirm", (s) => s.fsm === "awaiting_operator_confirm", 60_000);
    expect((waits as StartedTask).thread.filter((m) => m.from === "coder")).toHaveLength(1); // the coder's proposal kept, not asked again
    expect(await snapshot(parent.sessionId)).toEqual(before);
  }, 120_000);

  it("modify: the change is built on the base's last commit, reviewed and tested; the project's fingerprint is recorded", async () => {
    const parent = await finishedParent("modify-task");
    fs.writeFileSync(path.join(h.repo, "NOTES.md"), "a note written in the project since\n");
    const parentHead = (foldTask(parent.events) as StartedTask).head;
    const fork = await modifySession(deps(), { sessionId: parent.sessionId, change: "Also export a product function" }, testActor);
    const history = await db.store.readStream(fork.sessionId);
    const change = ofType<{ baseCommit: string; fingerprint: { addedSinceBase: string[]; files: number } }>(history, "ChangeRequested")[0]!;
    expect(change.baseCommit).toBe(parentHead);
    expect(change.fingerprint.addedSinceBase).toEqual(["NOTES.md"]);
    expect(change.fingerprint.files).toBe(3);
    fs.rmSync(path.join(h.repo, "NOTES.md"));
    const end = await h.waitFor(fork.sessionId, "the modify ends", finished, 60_000);
    expect(end.outcome).toBe("approved");
    const built = ofType<{ iteration: number; reason: string }>(history, "IterationStarted").at(-1);
    expect(built).toEqual({ iteration: 1, reason: "change requested" });
    // The steps scheduled from the change on (a runner may have started the first one before `history` was read).
    const fromChange = (await db.store.readStream(fork.sessionId)).slice(history.findIndex((e) => e.type === "ChangeRequested"));
    const prompts = ofType<{ input: { prompt: string; workspace: { head: string } } }>(fromChange, "StepScheduled");
    expect(prompts[0]!.input.prompt).toContain("Change requested: Also export a product function");
    expect(prompts[0]!.input.workspace.head).toBe(parentHead);

    const running = await startTask(deps(), { projectId: "modify-task", prompt: "x", mode: "proposal" }, testActor);
    const refused = await rejection(modifySession(deps(), { sessionId: running.sessionId, change: "y" }, testActor));
    expect(refused.code).toBe("PRECONDITION_FAILED");
    await cancelTask(deps(), { sessionId: running.sessionId }, testActor);
  }, 120_000);

  it("modify of a session whose last commit is gone is refused; nothing is created", async () => {
    const parent = await finishedParent("modify-gone");
    const state = foldTask(parent.events) as StartedTask;
    // The commit disappears from the repository, and the session's bundle with it.
    gitIn(h.repo, "worktree", "remove", "--force", path.join(h.workspacesRoot, parent.sessionId));
    await db.pool.query("DELETE FROM blobs WHERE hash = $1", [state.bundle!.blob]);
    gitIn(h.repo, "update-ref", "-d", `refs/catcafe/pins/${state.head}`);
    gitIn(h.repo, "update-ref", "-d", `refs/heads/catcafe/${parent.sessionId}`);
    gitIn(h.repo, "reflog", "expire", "--expire=now", "--all");
    gitIn(h.repo, "gc", "--prune=now", "--quiet");
    const n = (await db.pool.query("SELECT count(*)::int AS n FROM sessions")).rows[0].n;
    const refused = await rejection(modifySession(deps(), { sessionId: parent.sessionId, change: "anything" }, testActor));
    expect(refused.code).toBe("PRECONDITION_FAILED");
    expect(refused.message).toContain(`last commit ${state.head} is gone`);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM sessions")).rows[0].n).toBe(n);
  }, 120_000);

  it("resume of a cancelled build: the build runs again, nothing completed before runs twice; an approved session cannot be resumed", async () => {
    const projectId = await h.project("resume-task", {
      coder: [{ reply: "slow fix ".repeat(30), chunkDelayMs: 100, files: { "src/sum.js": FIXED_SUM } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
    await h.waitFor(sessionId, "building", (s) => s.fsm === "building" && s.step !== null);
    await cancelTask(deps(), { sessionId, reason: "stop for now" }, testActor);
    expect((await h.waitFor(sessionId, "cancelled", finished)).outcome).toBe("cancelled");
    const resumed = await resumeSession(resumeDeps(), { sessionId }, testActor);
    expect(resumed).toMatchObject({ status: "resumed" });
    expect(resumed.message).toContain("building runs again");
    const row = await db.pool.query("SELECT state, outcome FROM sessions WHERE id = $1", [sessionId]);
    expect(row.rows[0]).toEqual({ state: "building", outcome: null });
    expect((await h.waitFor(sessionId, "approved after resume", finished, 60_000)).outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    const completed = ofType<{ stepId: string }>(events, "StepCompleted").map((d) => d.stepId);
    expect(new Set(completed).size).toBe(completed.length);
    const states = ofType<{ input: { state: string } }>(events, "StepScheduled").map((d) => d.input.state);
    expect(states).toEqual(["building", "building", "reviewing", "testing", "running_tests"]);
    const again = await rejection(resumeSession(resumeDeps(), { sessionId }, testActor));
    expect(again.message).toContain("finished approved, it was not interrupted");
  }, 60_000);
});

describe("projections after forks, reverts, modifies and resumes", () => {
  it("rebuilt from the log equal the live ones (every test above has run on this database)", async () => {
    // The other files' tests run in their own databases; this file's forks, finished copies,
    // reverts, modifies and resumed sessions are all here.
    const live = await snapshotProjections(db.pool, db.store);
    expect(live.sessions!.length).toBeGreaterThan(50);
    await rebuildProjections(db.store, 500);
    expect(await snapshotProjections(db.pool, db.store)).toEqual(live);
  }, 120_000);
});
