// Incremental bundles (docs/scaling.md#bundles), through the real runner on a real database
// and git: each build's bundle holds only what it added (since the commit it started from),
// a clone on another host that lacks every commit rebuilds the worktree from the chain (a
// fork's chain continuing in its parent's events), and a broken chain is a clear NOT_FOUND
// naming the missing commit and the session, never git's own error.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { putBlob } from "../../server/events/blobs";
import { sessionBundles } from "../../server/events/bundle-chain";
import type { Runner } from "../../server/runner/runner";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { workflowStepKinds } from "../../server/runner/workflow-executors";
import { reactToReactionFailure, reactToStepOutcome } from "../../server/task-engine";
import { startTask } from "../../server/tasks/commands";
import { forkSession } from "../../server/tasks/fork";
import { isAppError, type AppError } from "../../server/errors";
import { bundleSession, createWorkspace, ensureCommit } from "../../server/workspaces";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { createHarness, FIXED_SUM, gitIn, ofType, reviewApprove, reviewChanges, tempDir, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let runnerA: Runner;
let base: string;
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  base = gitIn(h.repo, "rev-parse", "main");
  runnerA = await h.startRunner();
});

const deps = () => ({ store: db.store, pool: db.pool });

interface Committed {
  commit: string;
  parent: string;
  bundle?: { blob: string; size: number };
  bundleSince?: string;
}

/** ~38 KB of text that does not compress away: the change of the first build. */
const bigChange = () => crypto.randomBytes(28_500).toString("base64");

/** A session whose coder builds three times (a 38 KB change, then two small additions), approved. */
async function threeBuilds(id: string): Promise<{ sessionId: string; commits: Committed[]; versions: number[] }> {
  const projectId = await h.project(id, {
    coder: [
      { reply: "Fixed, with the data.", files: { "src/sum.js": FIXED_SUM, "data/big.txt": bigChange() } },
      { reply: "Added a note.", files: { "notes/two.txt": "the second build\n" } },
      { reply: "Added another.", files: { "notes/three.txt": "the third build\n" } },
    ],
    reviewer: [{ reply: reviewChanges("add a note") }, { reply: reviewChanges("add another") }, { reply: reviewApprove }],
    tester: [{ reply: testPlan() }],
  });
  const { sessionId } = await startTask(deps(), { projectId, prompt: "Fix sum()", mode: "implementation" }, testActor);
  const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished", 60_000);
  expect(done.outcome).toBe("approved");
  const events = (await db.store.readStream(sessionId)).filter((e) => e.type === "WorkspaceCommitted");
  return { sessionId, commits: events.map((e) => e.data as Committed), versions: events.map((e) => e.version) };
}

/** A clone as another host has it: the base commit only (--no-local, main alone: no session branch, no pin). */
function freshClone(name: string): string {
  const dir = path.join(tempDir("catcafe-host-b-"), name);
  execFileSync("git", ["clone", "-q", "--no-local", "--single-branch", "--branch", "main", h.repo, dir]);
  return dir;
}

const has = (repo: string, commit: string) => {
  try {
    execFileSync("git", ["-C", repo, "cat-file", "-e", `${commit}^{commit}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

/** Every tracked file of a checkout with its content (the worktree as a map). */
function filesOf(dir: string): Record<string, string> {
  const listed = gitIn(dir, "ls-files").split("\n").filter(Boolean);
  return Object.fromEntries(listed.map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}

async function notFound(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isAppError(err, "NOT_FOUND")) throw new Error(`expected NOT_FOUND, got ${String(err)}`);
  return err;
}

describe("incremental bundles", () => {
  it("three builds: each bundle holds only what its build added, and a clone lacking all of them rebuilds the worktree at the last commit from the chain", async () => {
    const { sessionId, commits } = await threeBuilds("bundles-three");
    expect(commits).toHaveLength(3);
    const [first, second, third] = commits as [Committed, Committed, Committed];
    // Each bundle is made since the commit its build started from: a chain back to the base.
    expect(first.bundleSince).toBe(base);
    expect(second.bundleSince).toBe(first.commit);
    expect(third.bundleSince).toBe(second.commit);
    expect(first.bundle!.size).toBeGreaterThan(28_000);
    expect(second.bundle!.size).toBeLessThan(first.bundle!.size / 4);
    expect(third.bundle!.size).toBeLessThan(first.bundle!.size / 4);

    const clone = freshClone("three");
    for (const c of commits) expect(has(clone, c.commit)).toBe(false);
    expect(await ensureCommit(clone, third.commit, sessionBundles(db.pool, sessionId))).toBe("fetched");
    // Every link was fetched (each bundle carries its own commit's pin), oldest first.
    for (const c of commits) expect(gitIn(clone, "rev-parse", `refs/catcafe/pins/${c.commit}`)).toBe(c.commit);
    const ws = await createWorkspace({
      repoPath: clone,
      workspacesRoot: path.join(path.dirname(clone), "ws"),
      sessionId,
      baseCommit: third.commit,
    });
    const built = filesOf(path.join(h.workspacesRoot, sessionId));
    expect(Object.keys(built)).toEqual(expect.arrayContaining(["data/big.txt", "notes/two.txt", "notes/three.txt", "src/sum.js"]));
    expect(filesOf(ws.path)).toEqual(built);
    // A clone that has the commit now asks for nothing.
    expect(await ensureCommit(clone, third.commit, { sessionId, bundleOf: () => Promise.reject(new Error("asked")) })).toBe("present");
  }, 120_000);

  it("a broken chain is a clear NOT_FOUND naming the missing commit and the session: a link's blob gone, a prerequisite no bundle provides; a bundle recorded before bundles were incremental is still restored", async () => {
    const { sessionId, commits } = await threeBuilds("bundles-faults");
    const [first, second, third] = commits as [Committed, Committed, Committed];

    // A prerequisite that neither the clone nor any earlier bundle has: a clone without the base commit.
    const unrelated = path.join(tempDir("catcafe-unrelated-"), "repo");
    execFileSync("git", ["init", "-q", "-b", "main", unrelated]);
    const noBase = await notFound(ensureCommit(unrelated, third.commit, sessionBundles(db.pool, sessionId)));
    expect(noBase.message).toContain(`session ${sessionId}`);
    expect(noBase.message).toContain(`needs commit ${base}`);
    expect(noBase.details).toMatchObject({ missingCommit: base, sessionId });
    expect(noBase.message).not.toContain("lacks these prerequisite commits");

    // The middle link's blob is gone: nothing is fetched, the error names its commit.
    await db.pool.query("DELETE FROM blobs WHERE hash = $1", [second.bundle!.blob]);
    const clone = freshClone("faults");
    const gone = await notFound(ensureCommit(clone, third.commit, sessionBundles(db.pool, sessionId)));
    expect(gone.message).toContain(`commit ${second.commit}`);
    expect(gone.message).toContain(`session ${sessionId}`);
    expect(gone.details).toMatchObject({ missingCommit: second.commit, sessionId });
    for (const c of commits) expect(has(clone, c.commit)).toBe(false);
    // The first link needs only the base: the clone restores it alone.
    expect(await ensureCommit(clone, first.commit, sessionBundles(db.pool, sessionId))).toBe("fetched");

    // A session recorded before bundles were incremental: a bundle without bundleSince holds
    // every commit since the base; a clone that has the base restores from it alone.
    const old = uniqueId();
    const whole = (await bundleSession(path.join(h.workspacesRoot, sessionId), base, third.commit))!;
    const blob = await putBlob(db.pool, whole, "application/x-git-bundle");
    const diff = await putBlob(db.pool, "", "text/x-diff; charset=utf-8");
    await db.store.append(old, "no_stream", [{ type: "SessionCreated", data: { title: "old", workflow: "test", state: "open" } }], {
      actor: testActor,
    });
    await db.store.append(
      old,
      "any",
      [
        {
          type: "WorkspaceCommitted",
          data: {
            stepId: crypto.randomUUID(),
            commit: third.commit,
            parent: second.commit,
            empty: false,
            changedFiles: [],
            diff,
            bundle: blob,
          },
        },
      ],
      { actor: testActor },
    );
    const oldClone = freshClone("old");
    expect(await ensureCommit(oldClone, third.commit, sessionBundles(db.pool, old))).toBe("fetched");
    expect(has(oldClone, second.commit)).toBe(true);
    // Its prerequisite (the base) missing: the same clear error, read from the bundle itself.
    const oldNoBase = await notFound(ensureCommit(unrelated, third.commit, sessionBundles(db.pool, old)));
    expect(oldNoBase.message).toContain(`needs commit ${base}`);
    expect(oldNoBase.message).toContain(`session ${old}`);
  }, 120_000);

  it("a fork at the parent's 2nd build runs on a host whose clone lacks every commit: the chain is found through the parent's events, and the fork's own bundle continues it", async () => {
    const parent = await threeBuilds("bundles-fork");
    const [first, second] = parent.commits as [Committed, Committed, Committed];
    // Host A stops; host B (its own clone at the base, its own workspaces) runs the fork.
    await runnerA.stop();
    const cloneB = freshClone("fork-b");
    const workspacesB = path.join(path.dirname(cloneB), "workspaces");
    const poolB = createPool(db.url, 4);
    const reactor = { reactToStepOutcome, reactToReactionFailure };
    await h.startRunner(undefined, {
      executors: stepKindRegistry(
        workflowStepKinds({
          pool: poolB,
          store: createAppEventStore(poolB),
          workspacesRoot: workspacesB,
          repositoryPath: () => cloneB,
          reactor,
        }),
      ).executors,
    });
    const fork = await forkSession(deps(), { sessionId: parent.sessionId, atVersion: parent.versions[1]! }, testActor);
    const done = await h.waitFor(fork.sessionId, "the fork ends", (s) => s.status === "finished", 60_000);
    expect(done.outcome).toBe("approved");
    // Host B fetched the parent's two bundles to start at the 2nd build.
    expect(has(cloneB, first.commit)).toBe(true);
    expect(has(cloneB, second.commit)).toBe(true);
    const own = ofType<Committed>((await db.store.readStream(fork.sessionId)).slice(fork.atVersion), "WorkspaceCommitted");
    expect(own.length).toBeGreaterThan(0);
    // The fork's first bundle is made since the commit it started from.
    expect(own[0]!.bundleSince).toBe(second.commit);
    expect(own[0]!.bundle!.size).toBeLessThan(first.bundle!.size / 4);
    const last = own.at(-1)!;
    expect(done.status === "finished" && done.head).toBe(last.commit);

    // A third host rebuilds the fork's last commit from the chain across the fork.
    const cloneC = freshClone("fork-c");
    expect(await ensureCommit(cloneC, last.commit, sessionBundles(db.pool, fork.sessionId))).toBe("fetched");
    const ws = await createWorkspace({
      repoPath: cloneC,
      workspacesRoot: path.join(path.dirname(cloneC), "ws"),
      sessionId: fork.sessionId,
      baseCommit: last.commit,
    });
    const builtOnB = filesOf(path.join(workspacesB, fork.sessionId));
    expect(builtOnB["data/big.txt"]).toBeDefined();
    expect(filesOf(ws.path)).toEqual(builtOnB);
    await poolB.end();
  }, 120_000);
});
