// Workspaces under faults, with real git: an attempt that lost its workspace to a later
// attempt cannot commit there; a HEAD that moved elsewhere is refused while the agent's own
// commits on top of the expected head are folded into one; many sessions' worktrees created
// at once under the per-repository lock all succeed.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../../server/errors";
import { withWorktreeLock } from "../../server/runner/repo-lock";
import { bundleSession, claimWorkspace, commitWorkspace, createWorkspace, ensureCommit, removeWorkspace } from "../../server/workspaces";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const AUTHOR = { name: "Coder Cat", email: "coder@catcafe.test" };
let root = "";
let repo = "";
let base = "";
let db: TestDatabase;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();
}

beforeAll(async () => {
  db = await createTestDatabase();
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-wsf-")));
  repo = path.join(root, "project");
  fs.mkdirSync(repo);
  fs.writeFileSync(path.join(repo, "a.txt"), "one\n");
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "initial");
  base = git(repo, "rev-parse", "HEAD");
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isAppError(err, "CONFLICT"), String(err)).toBe(true);
  return (err as Error).message;
}

describe("workspaces under faults", () => {
  it("an attempt whose workspace was claimed by a later attempt commits nothing: its edits never enter the later attempt's commit", async () => {
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: path.join(root, "ws"), sessionId: "s-owner", baseCommit: base });
    await claimWorkspace(ws.path, "step-1:1");
    fs.writeFileSync(path.join(ws.path, "a.txt"), "from the old attempt\n");
    await claimWorkspace(ws.path, "step-1:2"); // the takeover
    const message = await refusal(
      commitWorkspace({ path: ws.path, message: "old", author: AUTHOR, expect: { head: base, owner: "step-1:1" } }),
    );
    expect(message).toMatch(/now worked on by step-1:2, not step-1:1/);
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(base);
    // The new attempt commits its own work from a clean start.
    git(ws.path, "checkout", "--", "a.txt");
    fs.writeFileSync(path.join(ws.path, "b.txt"), "new\n");
    const ok = await commitWorkspace({ path: ws.path, message: "new", author: AUTHOR, expect: { head: base, owner: "step-1:2" } });
    expect(ok.changedFiles).toEqual([{ path: "b.txt", status: "added" }]);
  });

  it("a HEAD that moved off the expected commit is refused; commits the agent made on top of it are folded into one", async () => {
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: path.join(root, "ws"), sessionId: "s-head", baseCommit: base });
    // The agent committed twice itself: kept, folded into our one commit with parent = base.
    fs.writeFileSync(path.join(ws.path, "c.txt"), "c\n");
    git(ws.path, "add", "-A");
    git(ws.path, "commit", "-q", "-m", "agent 1");
    fs.writeFileSync(path.join(ws.path, "d.txt"), "d\n");
    git(ws.path, "add", "-A");
    git(ws.path, "commit", "-q", "-m", "agent 2");
    const folded = await commitWorkspace({ path: ws.path, message: "build", author: AUTHOR, expect: { head: base } });
    expect(folded.parent).toBe(base);
    expect(folded.changedFiles.map((f) => f.path).sort()).toEqual(["c.txt", "d.txt"]);

    // HEAD moved to a commit that does not descend from the expected one: refused, untouched.
    git(ws.path, "checkout", "-q", "--orphan", "elsewhere");
    git(ws.path, "commit", "-q", "-m", "unrelated");
    const elsewhere = git(ws.path, "rev-parse", "HEAD");
    expect(await refusal(commitWorkspace({ path: ws.path, message: "x", author: AUTHOR, expect: { head: folded.commit } }))).toMatch(
      /does not descend from the expected/,
    );
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(elsewhere);
  });

  it("24 sessions' worktrees created at once (with removals in between) under the repository lock: every one succeeds", async () => {
    const workspacesRoot = path.join(root, "burst");
    const made = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const ws = await withWorktreeLock(db.pool, repo, () =>
          createWorkspace({ repoPath: repo, workspacesRoot, sessionId: `s-burst-${i}`, baseCommit: base }),
        );
        if (i % 3 === 0) await withWorktreeLock(db.pool, repo, () => removeWorkspace({ repoPath: repo, path: ws.path }));
        return ws.path;
      }),
    );
    expect(made).toHaveLength(24);
    const listed = git(repo, "worktree", "list", "--porcelain");
    for (const [i, p] of made.entries()) expect(listed.includes(`worktree ${p}\n`), p).toBe(i % 3 !== 0);
  });

  it("a bundle carries a session's commits to another clone, which fetches them only when it lacks the commit", async () => {
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: path.join(root, "ws"), sessionId: "s-bundle", baseCommit: base });
    fs.writeFileSync(path.join(ws.path, "e.txt"), "e\n");
    const built = await commitWorkspace({ path: ws.path, message: "build", author: AUTHOR, expect: { head: base } });
    const bundle = await bundleSession(ws.path, base, built.commit);
    expect(bundle?.length).toBeGreaterThan(0);
    expect(await bundleSession(ws.path, base, base)).toBeNull();

    const clone = path.join(root, "clone");
    execFileSync("git", ["clone", "-q", "--no-local", repo, clone]); // objects reachable from branches only
    let loads = 0;
    const chain = {
      sessionId: "s-bundle",
      bundleOf: async (commit: string) => (commit === built.commit ? { since: base, load: async () => (loads++, bundle!) } : null),
    };
    expect(await ensureCommit(clone, built.commit, chain)).toBe("fetched");
    expect(await ensureCommit(clone, built.commit, chain)).toBe("present");
    expect(loads).toBe(1);
    expect(git(clone, "show", `${built.commit}:e.txt`)).toBe("e");
    const missing = await ensureCommit(clone, "f".repeat(40), chain).catch((e: unknown) => e);
    expect(isAppError(missing, "NOT_FOUND")).toBe(true);
  });
});
