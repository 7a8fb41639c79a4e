// Cleaning up failed sessions (req F14; docs/operations.md, "Cleaning up failed sessions"),
// through the real runner on a real database and git: a failed session that ended long enough
// ago loses its worktree, its commits' pins and its branch, and keeps every event; its replay is
// unchanged; a fork of it after a commit rebuilds the workspace from the recorded bundle (the
// commit gone from the repository). A newer failed session, a running one and an approved one
// are never cleaned up; asking again does nothing more; the automatic setting does it alone.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { pruneOnSchedule, pruneSession, pruneSessions, pruneStatusOf } from "../../server/pruning/service";
import { replayAt } from "../../server/sessions/replay";
import { startTask } from "../../server/tasks/commands";
import { forkSession, modifySession } from "../../server/tasks/fork";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, testPlan, type Harness, type TaskView } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 4 });
});

const DAY_MS = 24 * 60 * 60 * 1000;
const deps = () => ({ store: db.store, pool: db.pool });
const finished = (s: TaskView) => s.status === "finished";

/** A session whose coder commits `sum` (unique per project, so no other session shares the commit) and whose reviewer keeps failing. */
async function failedSession(projectId: string, sum: string, extra = {}) {
  await h.project(
    projectId,
    {
      coder: [{ reply: "Changed sum.", files: { "src/sum.js": sum } }],
      reviewer: [{ fault: "auth" }],
      tester: [{ reply: testPlan() }],
    },
    extra,
  );
  const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
  const done = await h.waitFor(sessionId, "failed", finished, 60_000);
  expect(done.outcome).toBe("failed");
  const events = await db.store.readStream(sessionId);
  const commit = ofType<{ commit: string; empty: boolean }>(events, "WorkspaceCommitted").find((c) => !c.empty)!.commit;
  const endedAt = Date.parse(events.findLast((e) => e.type === "SessionFinalized")!.recordedAt);
  return { sessionId, commit, endedAt, dir: path.join(h.workspacesRoot, sessionId) };
}

async function waitPruned(sessionId: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = pruneStatusOf(sessionId, await db.store.readStream(sessionId));
    if (status.status === "pruned" || status.status === "failed") return status;
    if (Date.now() > deadline) throw new Error(`the clean-up of ${sessionId} did not finish: ${status.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const worktrees = () => gitIn(h.repo, "worktree", "list", "--porcelain");
const refs = () => gitIn(h.repo, "for-each-ref", "--format=%(refname)");
const hasCommit = (commit: string) =>
  spawnSync("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: h.repo, stdio: "ignore" }).status === 0;

describe("sessions prune", () => {
  it("cleans up an old failed session only: worktree, pins and branch gone, every event kept, replay unchanged, a fork and a modify rebuilt from its bundle", async () => {
    const old = await failedSession("prune-old", FIXED_SUM.replace("a + b", "b + a"));
    const newer = await failedSession("prune-newer", FIXED_SUM.replace("a + b", "(a + b)"));
    // A running one (waits for a person) and an approved one.
    await h.project("prune-live", { coder: [{ reply: "Proposal." }], reviewer: [{ reply: "Fine." }], tester: [{ reply: "Ok." }] });
    const running = (await startTask(deps(), { projectId: "prune-live", prompt: "Fix sum()", mode: "proposal" }, testActor)).sessionId;
    await h.waitFor(running, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    await h.project("prune-approved", {
      coder: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }],
      reviewer: [{ reply: reviewApprove }],
      tester: [{ reply: testPlan() }],
    });
    const approved = (await startTask(deps(), { projectId: "prune-approved", prompt: "Fix sum()", mode: "implementation" }, testActor))
      .sessionId;
    expect((await h.waitFor(approved, "approved", finished, 60_000)).outcome).toBe("approved");

    // Each commit moves the session's branch (its delivery's) and pins the commit.
    expect(gitIn(h.repo, "rev-parse", `refs/heads/catcafe/${old.sessionId}`)).toBe(old.commit);
    expect(fs.existsSync(old.dir)).toBe(true);
    expect(refs()).toContain(`refs/catcafe/pins/${old.commit}`);
    const before = await db.store.readStream(old.sessionId);
    const replays = await Promise.all(before.map((e) => replayAt(deps(), { sessionId: old.sessionId, version: e.version })));

    // "Now" is one day after a point between the two endings: only the old one ended more than a day ago.
    const now = new Date((old.endedAt + newer.endedAt) / 2 + DAY_MS);
    const dry = await pruneSessions(deps(), { olderThanDays: 1, outcomes: ["failed"], dryRun: true }, testActor, { now });
    expect(dry.sessions.map((s) => s.sessionId)).toEqual([old.sessionId]);
    expect((await db.store.readStream(old.sessionId)).length).toBe(before.length);

    const asked = await pruneSessions(deps(), { olderThanDays: 1 }, testActor, { now });
    expect(asked.sessions.map((s) => s.sessionId)).toEqual([old.sessionId]);
    expect(await waitPruned(old.sessionId)).toMatchObject({ status: "pruned", askedBy: "user:tester" });

    expect(fs.existsSync(old.dir)).toBe(false);
    expect(worktrees()).not.toContain(old.dir);
    expect(refs()).not.toContain(`refs/catcafe/pins/${old.commit}`);
    expect(refs()).not.toContain(`refs/heads/catcafe/${old.sessionId}`);
    const after = await db.store.readStream(old.sessionId);
    expect(after.slice(0, before.length).map((e) => e.eventId)).toEqual(before.map((e) => e.eventId));
    const added = after.slice(before.length).map((e) => e.type);
    expect(added[0]).toBe("WorkspacePruneRequested");
    expect(added.at(-1)).toBe("SessionPruned");
    expect(added.filter((t) => !["WorkspacePruneRequested", "SessionPruned"].includes(t)).every((t) => t.startsWith("Step"))).toBe(true);
    const pruned = ofType<{ worktree: string; refsDeleted: string[]; requestedBy: string }>(after, "SessionPruned")[0]!;
    expect(pruned).toMatchObject({ worktree: old.dir, requestedBy: "user:tester" });
    expect(pruned.refsDeleted.sort()).toEqual([`refs/catcafe/pins/${old.commit}`, `refs/heads/catcafe/${old.sessionId}`].sort());
    // Replay reads events and blobs only: every position shows what it showed before.
    for (const [i, e] of before.entries()) {
      expect((await replayAt(deps(), { sessionId: old.sessionId, version: e.version })).state).toEqual(replays[i]!.state);
    }

    // The others are untouched.
    expect(fs.existsSync(newer.dir)).toBe(true);
    expect(refs()).toContain(`refs/catcafe/pins/${newer.commit}`);
    for (const id of [newer.sessionId, running, approved]) {
      expect(pruneStatusOf(id, await db.store.readStream(id)).status).toBe("none");
    }
    expect(fs.existsSync(path.join(h.workspacesRoot, approved))).toBe(true);
    // Never, whatever the threshold: a running session, an approved one.
    const far = new Date(Date.now() + 3650 * DAY_MS);
    const all = await pruneSessions(deps(), { olderThanDays: 1, outcomes: ["failed", "cancelled"], dryRun: true }, testActor, { now: far });
    expect(all.sessions.map((s) => s.sessionId)).toEqual([newer.sessionId]);
    expect((await rejection(pruneSession(deps(), { sessionId: running }, testActor))).code).toBe("PRECONDITION_FAILED");
    const refused = await rejection(pruneSession(deps(), { sessionId: approved }, testActor));
    expect(refused.code).toBe("PRECONDITION_FAILED");
    expect(refused.message).toContain("ended approved");
    await expect(pruneSessions(deps(), { olderThanDays: 1, outcomes: ["approved"] }, testActor)).rejects.toThrow(/never cleaned up/);

    // Again: nothing more, and the one session's request answers as the first time.
    const count = after.length;
    expect((await pruneSessions(deps(), { olderThanDays: 1 }, testActor, { now })).sessions).toEqual([]);
    const again = await pruneSession(deps(), { sessionId: old.sessionId }, testActor);
    expect(again).toMatchObject({ sessionId: old.sessionId, stepId: asked.sessions[0]!.stepId, askedBy: "user:tester" });
    expect(await pruneSession(deps(), { sessionId: old.sessionId }, testActor)).toEqual(again);
    expect((await db.store.readStream(old.sessionId)).length).toBe(count);

    // The commit leaves the repository altogether; a fork after it gets it back from the bundle.
    gitIn(h.repo, "reflog", "expire", "--expire=now", "--all");
    gitIn(h.repo, "gc", "--prune=now", "--quiet");
    expect(hasCommit(old.commit)).toBe(false);
    const committed = before.find((e) => e.type === "WorkspaceCommitted" && (e.data as { commit: string }).commit === old.commit)!;
    // Just after the commit: the build is done, the review is next.
    const reviewing = before.find((e) => e.version > committed.version && e.type === "SessionStateChanged")!;
    const fork = await forkSession(deps(), { sessionId: old.sessionId, atVersion: reviewing.version }, testActor);
    await h.waitFor(fork.sessionId, "the fork ends", finished, 60_000);
    const forkEvents = await db.store.readStream(fork.sessionId);
    // Its review ran in a workspace at the old session's commit (fetched from its bundle): no build of its own.
    expect(forkEvents.filter((e) => e.streamId === fork.sessionId && e.type === "WorkspaceCommitted")).toEqual([]);
    expect(forkEvents.some((e) => e.streamId === fork.sessionId && e.type === "StepStarted")).toBe(true);
    const forkDir = path.join(h.workspacesRoot, fork.sessionId);
    expect(gitIn(forkDir, "rev-parse", "HEAD")).toBe(old.commit);
    expect(fs.readFileSync(path.join(forkDir, "src/sum.js"), "utf8")).toBe(FIXED_SUM.replace("a + b", "b + a"));
    // A modify of it builds on its last commit, which the repository has again (fetched above) — and from the bundle when not.
    gitIn(h.repo, "update-ref", "-d", `refs/catcafe/pins/${old.commit}`);
    gitIn(h.repo, "worktree", "remove", "--force", forkDir);
    spawnSync("git", ["branch", "-D", `catcafe/${fork.sessionId}`], { cwd: h.repo, stdio: "ignore" });
    gitIn(h.repo, "reflog", "expire", "--expire=now", "--all");
    gitIn(h.repo, "gc", "--prune=now", "--quiet");
    expect(hasCommit(old.commit)).toBe(false);
    const modified = await modifySession(deps(), { sessionId: old.sessionId, change: "also handle strings" }, testActor);
    expect(modified.sessionId).toMatch(/^s-/);
    expect(hasCommit(old.commit)).toBe(true);
    // The fork has a workspace of its own: it does not inherit its parent's clean-up.
    expect(pruneStatusOf(fork.sessionId, await db.store.readStream(fork.sessionId)).status).toBe("none");
  }, 240_000);

  it("the setting sessions.pruneFailedAfterDays cleans up on its own, one process at a time", async () => {
    const auto = await failedSession("prune-auto", FIXED_SUM.replace("a + b", "a + b + 0"), {
      settings: { sessions: { pruneFailedAfterDays: 2 } },
    });
    const off = await failedSession("prune-off", FIXED_SUM.replace("a + b", "0 + a + b"));
    const later = new Date(Math.max(auto.endedAt, off.endedAt) + 3 * DAY_MS);
    // Not yet two days: nothing.
    expect((await pruneOnSchedule(deps(), { now: new Date(auto.endedAt + DAY_MS) })).sessions).toEqual([]);

    // Another process holds the pass: this one does nothing.
    const other = await db.pool.connect();
    try {
      await other.query("SELECT pg_advisory_lock(hashtextextended('catcafe-auto-prune', 7))");
      expect(await pruneOnSchedule(deps(), { now: later })).toEqual({ locked: true, sessions: [], skipped: [] });
      await other.query("SELECT pg_advisory_unlock(hashtextextended('catcafe-auto-prune', 7))");
    } finally {
      other.release();
    }

    const pass = await pruneOnSchedule(deps(), { now: later });
    expect(pass.locked).toBe(false);
    expect(pass.sessions).toContain(auto.sessionId);
    expect(pass.sessions).not.toContain(off.sessionId);
    expect(await waitPruned(auto.sessionId)).toMatchObject({ status: "pruned", askedBy: "system" });
    const requested = ofType<{ reason: string; olderThanDays: number }>(
      await db.store.readStream(auto.sessionId),
      "WorkspacePruneRequested",
    );
    expect(requested).toEqual([expect.objectContaining({ reason: "automatic", olderThanDays: 2 })]);
    expect(fs.existsSync(auto.dir)).toBe(false);
    expect(fs.existsSync(off.dir)).toBe(true);
    // The next pass asks for nothing more.
    expect((await pruneOnSchedule(deps(), { now: later })).sessions).toEqual([]);
  }, 180_000);
});
