// Session workspaces with real git processes: a tiny repository per test in a temp
// directory, worktrees created, committed to, forked, reset and removed. HOME points at an
// empty directory, so nothing here relies on a global git config.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execaSync } from "execa";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { isAppError, type AppErrorCode } from "../../server/errors";
import { observeProcesses } from "../../server/process/spawn";
import { runGitSequence } from "../../server/workspaces/git";
import {
  changedFilesSince,
  claimWorkspace,
  CleanWorktrees,
  commitWorkspace,
  createWorkspace,
  diffSince,
  forkWorkspace,
  isInside,
  KnownClones,
  removeWorkspace,
  resetWorkspace,
  resolveBaseCommit,
  type ChangedFile,
} from "../../server/workspaces";

const AUTHOR = { name: "Coder Cat", email: "coder@catcafe.test" };
const tempDirs: string[] = [];
let originalHome: string | undefined;
let emptyHome = "";

function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `catcafe-ws-${prefix}-`)));
  tempDirs.push(dir);
  return dir;
}

/** Test-side git: its own identity on the command line, no shell, no inherited GIT_* vars. */
function git(cwd: string, ...args: string[]): string {
  const result = execaSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: emptyHome, GIT_TERMINAL_PROMPT: "0", LANG: "C" },
    extendEnv: false,
  });
  return result.stdout.trim();
}

function write(root: string, file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), content);
}

/** A new directory `name` inside `root`. */
function tempDirIn(root: string, name: string): string {
  fs.mkdirSync(path.join(root, name), { recursive: true });
  return path.join(root, name);
}

function read(root: string, file: string): string {
  return fs.readFileSync(path.join(root, file), "utf8");
}

interface Project {
  repo: string;
  root: string;
  base: string;
}

/** A repository with a couple of files and one commit, plus a separate workspaces root. */
function makeProject(): Project {
  const repo = tempDir("repo");
  git(repo, "init", "--quiet", "--initial-branch=main");
  write(repo, "README.md", "# Tiny project\n\nHello.\n");
  write(repo, "src/app.ts", 'export const greeting = "hello";\n');
  write(repo, "docs/old-name.md", "Some documentation that will move.\nLine two.\n");
  write(repo, ".gitignore", "*.log\n");
  git(repo, "add", "--all");
  git(repo, "commit", "--quiet", "-m", "initial");
  return { repo, root: tempDir("root"), base: git(repo, "rev-parse", "HEAD") };
}

function byPath(files: ChangedFile[]): ChangedFile[] {
  return [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function expectAppError(promise: Promise<unknown>, code: AppErrorCode, message?: RegExp): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isAppError(error, code), `expected AppError ${code}, got ${String(error)}`).toBe(true);
  if (message) expect((error as Error).message).toMatch(message);
}

/** What `fn` returns, and how many processes it started. */
async function spawnsOf<T>(fn: () => T | Promise<T>): Promise<{ value: T; processes: number }> {
  let processes = 0;
  const value = await observeProcesses({ spawned: () => void processes++, exited: () => {} }, async () => fn());
  return { value, processes };
}

beforeAll(() => {
  originalHome = process.env.HOME;
  emptyHome = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-ws-home-"));
  process.env.HOME = emptyHome;
});

afterEach(() => {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

afterAll(() => {
  process.env.HOME = originalHome;
  fs.rmSync(emptyHome, { recursive: true, force: true });
});

describe("resolveBaseCommit", () => {
  it("resolves HEAD and branch names to a full commit id", async () => {
    const { repo, base } = makeProject();
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    expect(await resolveBaseCommit(repo)).toBe(base);
    expect(await resolveBaseCommit(repo, "main")).toBe(base);
    expect(await resolveBaseCommit(repo, base.slice(0, 10))).toBe(base);
  });

  it("says clearly when the directory, the repository or the ref does not exist", async () => {
    const { repo } = makeProject();
    await expectAppError(resolveBaseCommit(repo, "no-such-branch"), "NOT_FOUND", /no-such-branch/);
    await expectAppError(resolveBaseCommit(repo, "--output=/tmp/x"), "INVALID_INPUT");
    await expectAppError(resolveBaseCommit(path.join(repo, "missing")), "NOT_FOUND", /does not exist/);
    await expectAppError(resolveBaseCommit(tempDir("plain")), "PRECONDITION_FAILED", /not a git repository/);
    // A subdirectory of a repository is not the project's repository.
    await expectAppError(resolveBaseCommit(path.join(repo, "src")), "PRECONDITION_FAILED", /not a git repository/);
    const empty = tempDir("empty");
    git(empty, "init", "--quiet");
    await expectAppError(resolveBaseCommit(empty), "NOT_FOUND", /HEAD/);
  });
});

describe("createWorkspace", () => {
  it("checks out the project at the base commit in a detached worktree under the root", async () => {
    const { repo, root, base } = makeProject();
    write(repo, "README.md", "# Changed later\n");
    git(repo, "commit", "--quiet", "-am", "second");

    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "sess-1", baseCommit: base });

    expect(ws).toEqual({ path: path.join(root, "sess-1"), baseCommit: base });
    expect(read(ws.path, "README.md")).toBe("# Tiny project\n\nHello.\n");
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(base);
    expect(git(ws.path, "rev-parse", "--abbrev-ref", "HEAD")).toBe("HEAD"); // detached
    expect(git(repo, "worktree", "list", "--porcelain")).toContain(`worktree ${ws.path}`);
    // The project's own checkout is untouched.
    expect(read(repo, "README.md")).toBe("# Changed later\n");
  });

  it("is idempotent at the same commit and refuses a different one", async () => {
    const { repo, root, base } = makeProject();
    const input = { repoPath: repo, workspacesRoot: root, sessionId: "retry.me", baseCommit: base };
    const first = await createWorkspace(input);
    write(first.path, "work-in-progress.txt", "kept\n");

    const again = await createWorkspace(input);

    expect(again).toEqual(first);
    expect(read(again.path, "work-in-progress.txt")).toBe("kept\n");
    expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(2);

    write(first.path, "README.md", "moved on\n");
    const { commit } = await commitWorkspace({ path: first.path, message: "advance", author: AUTHOR });
    await expectAppError(createWorkspace(input), "CONFLICT", new RegExp(`already exists at commit ${commit}`));
  });

  it("refuses a directory that is in the way and a root inside the project", async () => {
    const { repo, root, base } = makeProject();
    write(root, "taken/file.txt", "not a workspace\n");
    await expectAppError(createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "taken", baseCommit: base }), "CONFLICT");
    await expectAppError(
      createWorkspace({ repoPath: repo, workspacesRoot: path.join(repo, ".ws"), sessionId: "s", baseCommit: base }),
      "INVALID_INPUT",
      /outside the project/,
    );
    expect(fs.existsSync(path.join(repo, ".ws"))).toBe(false);
  });

  it.each(["../escape", "a/b", "", ".", "..", "with space", "semi;colon", "x".repeat(129), "/abs"])(
    "rejects the session id %j",
    async (sessionId) => {
      const { repo, root, base } = makeProject();
      await expectAppError(
        createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId, baseCommit: base }),
        "INVALID_INPUT",
        /session id/i,
      );
      expect(fs.readdirSync(root)).toEqual([]);
    },
  );

  it("says clearly when the project is not a git repository, or the commit is unknown", async () => {
    const { repo, root, base } = makeProject();
    const plain = tempDir("plain");
    write(plain, "index.js", "console.log(1);\n");
    await expectAppError(
      createWorkspace({ repoPath: plain, workspacesRoot: root, sessionId: "s1", baseCommit: base }),
      "PRECONDITION_FAILED",
      /is not a git repository/,
    );
    await expectAppError(
      createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: "main" }),
      "INVALID_INPUT",
      /full commit id/,
    );
    await expectAppError(
      createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: "0".repeat(40) }),
      "NOT_FOUND",
    );
    expect(fs.readdirSync(root)).toEqual([]);
  });
});

describe("commitWorkspace", () => {
  it("commits everything with the author and reports git's own list of changed files and diff", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base });
    write(ws.path, "src/app.ts", 'export const greeting = "hello, cats";\n');
    write(ws.path, "src/new/feature.ts", "export const feature = true;\n");
    fs.rmSync(path.join(ws.path, "README.md"));
    fs.renameSync(path.join(ws.path, "docs/old-name.md"), path.join(ws.path, "docs/new-name.md"));
    write(ws.path, "debug.log", "ignored by .gitignore\n");

    const result = await commitWorkspace({ path: ws.path, message: "Greet the cats", author: AUTHOR });

    expect(result.empty).toBe(false);
    expect(result.parent).toBe(base);
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(result.commit).not.toBe(base);
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(result.commit);
    expect(byPath(result.changedFiles)).toEqual([
      { path: "README.md", status: "deleted" },
      { path: "docs/new-name.md", status: "renamed", previousPath: "docs/old-name.md" },
      { path: "src/app.ts", status: "modified" },
      { path: "src/new/feature.ts", status: "added" },
    ]);
    expect(result.diff).toContain("diff --git a/src/app.ts b/src/app.ts");
    expect(result.diff).toContain('-export const greeting = "hello";');
    expect(result.diff).toContain('+export const greeting = "hello, cats";');
    expect(result.diff).toContain("+export const feature = true;");
    expect(result.diff).toContain("rename from docs/old-name.md");
    expect(result.diff).not.toContain("debug.log");
    expect(git(ws.path, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s|%P")).toBe(
      `Coder Cat <coder@catcafe.test>|Cat Cafe <catcafe@localhost>|Greet the cats|${base}`,
    );
    expect(git(ws.path, "status", "--porcelain")).toBe("");

    // The same answers later, from the recorded base commit.
    expect(await changedFilesSince(ws.path, base)).toEqual(result.changedFiles);
    expect(await diffSince(ws.path, base)).toBe(result.diff);
  });

  it("makes no commit when nothing changed (ignored files do not count)", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base });
    write(ws.path, "build.log", "noise\n");

    const result = await commitWorkspace({ path: ws.path, message: "nothing", author: AUTHOR });

    expect(result).toEqual({ commit: base, parent: base, changedFiles: [], diff: "", empty: true });
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(base);
    expect(await changedFilesSince(ws.path, base)).toEqual([]);
    expect(await diffSince(ws.path, base)).toBe("");
  });

  it("accumulates changes since the base over several commits", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base });
    write(ws.path, "a.txt", "a\n");
    await commitWorkspace({ path: ws.path, message: "one", author: AUTHOR });
    write(ws.path, "src/app.ts", "export {};\n");
    const second = await commitWorkspace({ path: ws.path, message: "two", author: AUTHOR });

    expect(second.changedFiles).toEqual([{ path: "src/app.ts", status: "modified" }]);
    expect(byPath(await changedFilesSince(ws.path, base))).toEqual([
      { path: "a.txt", status: "added" },
      { path: "src/app.ts", status: "modified" },
    ]);
    expect(await diffSince(ws.path, base)).toContain("+a");
  });

  it("refuses bad input and the project's main checkout", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base });
    write(ws.path, "x.txt", "x\n");
    await expectAppError(commitWorkspace({ path: ws.path, message: "  ", author: AUTHOR }), "INVALID_INPUT");
    await expectAppError(commitWorkspace({ path: ws.path, message: "m", author: { name: "Evil <x@y>", email: "e@x" } }), "INVALID_INPUT");
    write(repo, "y.txt", "y\n");
    await expectAppError(commitWorkspace({ path: repo, message: "m", author: AUTHOR }), "PRECONDITION_FAILED", /main checkout/);
    expect(git(repo, "rev-parse", "HEAD")).toBe(base);
    await expectAppError(changedFilesSince(ws.path, "HEAD~1"), "INVALID_INPUT");
    await expectAppError(changedFilesSince(ws.path, "f".repeat(40)), "NOT_FOUND");
  });
});

describe("sessions", () => {
  it("keep their workspaces isolated from each other", async () => {
    const { repo, root, base } = makeProject();
    const a = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "session-a", baseCommit: base });
    const b = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "session-b", baseCommit: base });

    write(a.path, "README.md", "edited by A\n");
    write(a.path, "only-a.txt", "A\n");
    await commitWorkspace({ path: a.path, message: "A's work", author: AUTHOR });
    write(b.path, "only-b.txt", "B (uncommitted)\n");

    expect(read(b.path, "README.md")).toBe("# Tiny project\n\nHello.\n");
    expect(fs.existsSync(path.join(b.path, "only-a.txt"))).toBe(false);
    expect(fs.existsSync(path.join(a.path, "only-b.txt"))).toBe(false);
    expect(git(b.path, "rev-parse", "HEAD")).toBe(base);
    expect(await changedFilesSince(b.path, base)).toEqual([]);
    expect(fs.existsSync(path.join(repo, "only-a.txt"))).toBe(false);
    expect(git(repo, "rev-parse", "HEAD")).toBe(base);
  });

  it("fork from a commit made in another session's workspace, even after it was removed and gc ran", async () => {
    const { repo, root, base } = makeProject();
    const parent = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "parent", baseCommit: base });
    write(parent.path, "feature.txt", "made in the parent session\n");
    const forkPoint = await commitWorkspace({ path: parent.path, message: "feature", author: AUTHOR });
    write(parent.path, "feature.txt", "later parent work\n");
    await commitWorkspace({ path: parent.path, message: "more", author: AUTHOR });

    const child = await forkWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "child", fromCommit: forkPoint.commit });

    expect(child).toEqual({ path: path.join(root, "child"), baseCommit: forkPoint.commit });
    expect(read(child.path, "feature.txt")).toBe("made in the parent session\n");
    expect(git(child.path, "rev-parse", "HEAD")).toBe(forkPoint.commit);

    // The parent's workspace goes away and git collects garbage: the fork point survives.
    await removeWorkspace({ repoPath: repo, path: parent.path });
    await removeWorkspace({ repoPath: repo, path: child.path });
    git(repo, "reflog", "expire", "--expire=now", "--all");
    git(repo, "gc", "--quiet", "--prune=now");
    const again = await forkWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "child-2", fromCommit: forkPoint.commit });
    expect(read(again.path, "feature.txt")).toBe("made in the parent session\n");
  });
});

describe("resetWorkspace", () => {
  it("puts the workspace back at a known commit, removing untracked files", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base });
    write(ws.path, "committed.txt", "c\n");
    await commitWorkspace({ path: ws.path, message: "attempt 1", author: AUTHOR });
    write(ws.path, "README.md", "half-done edit\n");
    write(ws.path, "scratch/untracked.txt", "u\n");
    write(ws.path, "keep.log", "ignored\n");

    expect(await resetWorkspace(ws.path, base)).toEqual({ commit: base });

    expect(git(ws.path, "rev-parse", "HEAD")).toBe(base);
    expect(git(ws.path, "status", "--porcelain")).toBe("");
    expect(read(ws.path, "README.md")).toBe("# Tiny project\n\nHello.\n");
    expect(fs.existsSync(path.join(ws.path, "committed.txt"))).toBe(false);
    expect(fs.existsSync(path.join(ws.path, "scratch"))).toBe(false);
    expect(fs.existsSync(path.join(ws.path, "keep.log"))).toBe(true);

    await resetWorkspace(ws.path, base, { removeIgnored: true });
    expect(fs.existsSync(path.join(ws.path, "keep.log"))).toBe(false);
  });

  // The workspace already at the commit is read from its files, not asked of git (docs/scaling.md,
  // "First output and live paint"): whatever is in it is still reset and cleaned as before.
  it("at the commit it is already at: a modified, a deleted, a staged and an untracked file, an empty directory and a nested repository all go; ignored files stay", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s-dirty", baseCommit: base });
    write(ws.path, "README.md", "modified\n");
    fs.rmSync(path.join(ws.path, "src/app.ts"));
    write(ws.path, "staged.txt", "staged\n");
    git(ws.path, "add", "staged.txt");
    write(ws.path, "loose.txt", "untracked\n");
    fs.mkdirSync(path.join(ws.path, "empty/deeper"), { recursive: true });
    git(tempDirIn(ws.path, "nested"), "init", "--quiet");
    write(ws.path, "keep.log", "ignored\n");
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(base);

    // The reset and the clean in one process start.
    let processes = 0;
    const reset = await observeProcesses({ spawned: () => void processes++, exited: () => {} }, () => resetWorkspace(ws.path, base));
    expect({ reset, processes }).toStrictEqual({ reset: { commit: base }, processes: 1 });

    expect(git(ws.path, "status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(git(ws.path, "diff", "--cached", "--name-only", base)).toBe("");
    expect(read(ws.path, "README.md")).toBe("# Tiny project\n\nHello.\n");
    expect(read(ws.path, "src/app.ts")).toBe('export const greeting = "hello";\n');
    for (const gone of ["staged.txt", "loose.txt", "empty", "nested"]) expect(fs.existsSync(path.join(ws.path, gone)), gone).toBe(false);
    expect(read(ws.path, "keep.log")).toBe("ignored\n");
  });

  it("at another commit than the one asked for: moved back to the one asked for, by a full id in either case; an unknown commit is NOT_FOUND and changes nothing", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s-moved", baseCommit: base });
    write(ws.path, "later.txt", "later\n");
    const later = (await commitWorkspace({ path: ws.path, message: "later", author: AUTHOR })).commit!;

    expect(await resetWorkspace(ws.path, base.toUpperCase())).toEqual({ commit: base });
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(base);
    expect(fs.existsSync(path.join(ws.path, "later.txt"))).toBe(false);

    expect(await resetWorkspace(ws.path, later)).toEqual({ commit: later });
    expect(read(ws.path, "later.txt")).toBe("later\n");

    write(ws.path, "README.md", "kept: the reset was refused\n");
    await expectAppError(resetWorkspace(ws.path, "0".repeat(40)), "NOT_FOUND");
    expect(git(ws.path, "rev-parse", "HEAD")).toBe(later);
    expect(read(ws.path, "README.md")).toBe("kept: the reset was refused\n");
    await expectAppError(resetWorkspace(ws.path, "HEAD"), "INVALID_INPUT", /full commit id/);
  });

  it("a workspace whose .git file was redirected into the worktree is refused, not reset", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s-redirect", baseCommit: base });
    write(ws.path, "README.md", "an agent's edit\n");
    git(tempDirIn(ws.path, "fake"), "init", "--quiet");
    fs.writeFileSync(path.join(ws.path, ".git"), "gitdir: fake/.git\n");
    await expectAppError(resetWorkspace(ws.path, base), "PRECONDITION_FAILED", /\.git file was changed/);
    expect(read(ws.path, "README.md")).toBe("an agent's edit\n");
  });

  it("never resets the project's main checkout", async () => {
    const { repo, base } = makeProject();
    write(repo, "precious.txt", "uncommitted human work\n");
    await expectAppError(resetWorkspace(repo, base), "PRECONDITION_FAILED", /main checkout/);
    expect(read(repo, "precious.txt")).toBe("uncommitted human work\n");
  });
});

describe("runGitSequence (git commands in one process start)", () => {
  it("hands every argument to git as it is, never to the shell: quotes, $(...), backquotes, ; and newlines stay text", async () => {
    const { repo } = makeProject();
    const value = "a'b\" $(touch pwned) `touch pwned2`; touch pwned3\n${HOME} \\ *";
    await runGitSequence(repo, [
      ["config", "catcafe.first", value],
      ["config", "catcafe.second", "--", "-x"],
    ]);
    expect(git(repo, "config", "--get", "catcafe.first")).toBe(value.trim());
    expect(git(repo, "config", "--get", "catcafe.second")).toBe("--");
    for (const planted of ["pwned", "pwned2", "pwned3"]) expect(fs.existsSync(path.join(repo, planted)), planted).toBe(false);
  });

  it("stops at the first command that fails, naming it with git's own error; the next never runs", async () => {
    const { repo } = makeProject();
    await expectAppError(
      runGitSequence(repo, [
        ["rev-parse", "--verify", "--quiet", "no-such-ref^{commit}"],
        ["config", "catcafe.after", "ran"],
      ]),
      "INTERNAL",
      /^git rev-parse --verify --quiet no-such-ref\^\{commit\} && git config catcafe.after ran failed \(exit 1\)/,
    );
    expect(() => git(repo, "config", "--get", "catcafe.after")).toThrow();
  });
});

describe("KnownClones (a runner's clone check, asked of git once per clone)", () => {
  it("a clone found once is not asked again; deleted, replaced by a plain directory or by another clone, it is checked again and said as missingClone says it", async () => {
    const { repo } = makeProject();
    const clones = new KnownClones();
    expect(await spawnsOf(() => clones.missing(repo))).toStrictEqual({ value: null, processes: 1 });
    expect(await spawnsOf(() => clones.missing(repo))).toStrictEqual({ value: null, processes: 0 });

    const moved = `${repo}-moved`;
    fs.renameSync(repo, moved);
    tempDirs.push(moved);
    expect(await clones.missing(repo, "a mapping")).toBe(`no clone at ${repo} (a mapping)`);
    fs.mkdirSync(repo);
    expect(await clones.missing(repo)).toBe(`${repo} is not the top of a git repository`);
    fs.mkdirSync(path.join(repo, ".git"));
    expect(await clones.missing(repo)).toBe(`${repo} is not the top of a git repository`);

    fs.rmSync(repo, { recursive: true });
    git(tempDirIn(path.dirname(repo), path.basename(repo)), "init", "--quiet");
    expect(await spawnsOf(() => clones.missing(repo))).toStrictEqual({ value: null, processes: 1 });
    fs.rmSync(path.join(repo, ".git"), { recursive: true });
    fs.renameSync(path.join(moved, ".git"), path.join(repo, ".git"));
    expect(await spawnsOf(() => clones.missing(repo))).toStrictEqual({ value: null, processes: 1 });
  });
});

describe("CleanWorktrees (a worktree a runner reset as a step ended, taken as it is by the next step)", () => {
  /** A session's worktree claimed by attempt `owner`, with what an agent leaves: a changed, an untracked and an ignored file. */
  async function worked(owner: string) {
    const project = makeProject();
    const ws = (await createWorkspace({ repoPath: project.repo, workspacesRoot: project.root, sessionId: "s1", baseCommit: project.base }))
      .path;
    await claimWorkspace(ws, owner);
    write(ws, "README.md", "half-done edit\n");
    write(ws, "scratch/untracked.txt", "u\n");
    write(ws, "keep.log", "ignored\n");
    return { ...project, ws };
  }

  it("left by the attempt that holds it: reset at once, then untouched for the next step, with no git process, and only once", async () => {
    const { ws, base } = await worked("step-1:1");
    const worktrees = new CleanWorktrees();
    await worktrees.leave(ws, base, "step-1:1");
    expect(read(ws, "README.md")).toBe("# Tiny project\n\nHello.\n");
    expect(fs.existsSync(path.join(ws, "scratch"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "keep.log"))).toBe(true);

    expect(await spawnsOf(() => worktrees.untouched(ws, base))).toStrictEqual({ value: true, processes: 0 });
    // (Asked after: `git status` may write the index, which would count as a touch.)
    expect(git(ws, "status", "--porcelain")).toBe("");
    // Asked once: the step that asked may change it.
    expect(worktrees.untouched(ws, base)).toBe(false);
    // Another runner process never left it.
    await worktrees.leave(ws, base, "step-1:1");
    expect(new CleanWorktrees().untouched(ws, base)).toBe(false);
  });

  it("not taken as it is once another attempt claimed it, git wrote its index or left a lock, HEAD moved, or at another commit", async () => {
    const { ws, base } = await worked("step-1:1");
    const worktrees = new CleanWorktrees();
    const gitDir = git(ws, "rev-parse", "--absolute-git-dir");
    const changes: Array<[string, () => Promise<unknown> | unknown]> = [
      ["claimed by another attempt", () => claimWorkspace(ws, "step-2:1")],
      [
        "claimed again by the same attempt, after another",
        async () => {
          await claimWorkspace(ws, "step-2:1");
          await claimWorkspace(ws, "step-1:1");
        },
      ],
      [
        "its index written by git",
        () => {
          write(ws, "new.txt", "n\n");
          git(ws, "add", "new.txt");
        },
      ],
      ["a lock on its index", () => fs.writeFileSync(path.join(gitDir, "index.lock"), "")],
      [
        "HEAD moved",
        () => {
          write(ws, "moved.txt", "m\n");
          git(ws, "add", "moved.txt");
          git(ws, "commit", "--quiet", "-m", "moved");
        },
      ],
    ];
    for (const [what, change] of changes) {
      await claimWorkspace(ws, "step-1:1");
      await worktrees.leave(ws, base, "step-1:1");
      expect(git(ws, "rev-parse", "HEAD"), what).toBe(base);
      await change();
      expect(worktrees.untouched(ws, base), what).toBe(false);
      fs.rmSync(path.join(gitDir, "index.lock"), { force: true });
    }
    // The same worktree asked for at another commit.
    await claimWorkspace(ws, "step-1:1");
    await worktrees.leave(ws, base, "step-1:1");
    expect(worktrees.untouched(ws, "0".repeat(40))).toBe(false);
    // Left, and nothing of the above: as it was left.
    await worktrees.leave(ws, base, "step-1:1");
    expect(worktrees.untouched(ws, base)).toBe(true);
  });

  it("remembers as many worktrees as it may, forgetting the oldest", async () => {
    const { ws, repo, root, base } = await worked("a:1");
    const other = (await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s2", baseCommit: base })).path;
    await claimWorkspace(other, "b:1");
    const worktrees = new CleanWorktrees(1);
    await worktrees.leave(ws, base, "a:1");
    await worktrees.leave(other, base, "b:1");
    expect(worktrees.untouched(ws, base)).toBe(false);
    expect(worktrees.untouched(other, base)).toBe(true);
  });

  it("never resets a worktree another attempt holds, and never remembers one whose reset failed", async () => {
    const { ws, base } = await worked("step-2:1");
    const worktrees = new CleanWorktrees();
    await worktrees.leave(ws, base, "step-1:1");
    expect(read(ws, "README.md")).toBe("half-done edit\n");
    expect(worktrees.untouched(ws, base)).toBe(false);

    fs.writeFileSync(path.join(git(ws, "rev-parse", "--absolute-git-dir"), "index.lock"), "");
    await worktrees.leave(ws, base, "step-2:1");
    expect(read(ws, "README.md")).toBe("half-done edit\n");
    expect(worktrees.untouched(ws, base)).toBe(false);
  });
});

describe("removeWorkspace", () => {
  it("removes the worktree and its registration, and is safe to repeat", async () => {
    const { repo, root, base } = makeProject();
    const ws = await createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base });
    write(ws.path, "uncommitted.txt", "dropped\n");

    expect(await removeWorkspace({ repoPath: repo, path: ws.path })).toEqual({ removed: true });

    expect(fs.existsSync(ws.path)).toBe(false);
    const worktrees = git(repo, "worktree", "list", "--porcelain");
    expect(worktrees).not.toContain(ws.path);
    expect(worktrees.match(/^worktree /gm)).toHaveLength(1);
    expect(await removeWorkspace({ repoPath: repo, path: ws.path })).toEqual({ removed: false });
  });

  it("prunes a workspace deleted by hand, so the session can be created again", async () => {
    const { repo, root, base } = makeProject();
    const processes = { first: 0, again: 0 };
    const counted = (which: keyof typeof processes) => ({ spawned: () => void processes[which]++, exited: () => {} });
    const ws = await observeProcesses(counted("first"), () =>
      createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base }),
    );
    fs.rmSync(ws.path, { recursive: true, force: true });

    const again = await observeProcesses(counted("again"), () =>
      createWorkspace({ repoPath: repo, workspacesRoot: root, sessionId: "s1", baseCommit: base }),
    );
    expect(read(again.path, "README.md")).toContain("Tiny project");
    // Pruned only when an add failed: the second time an add refused, a prune, and the add again.
    expect(processes.again - processes.first).toBe(2);
    expect(await removeWorkspace({ repoPath: repo, path: ws.path })).toEqual({ removed: true });
    expect(git(repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  });

  it("refuses to remove the main checkout or a directory that is not a workspace", async () => {
    const { repo, root } = makeProject();
    await expectAppError(removeWorkspace({ repoPath: repo, path: repo }), "PRECONDITION_FAILED");
    write(root, "other/file.txt", "x\n");
    await expectAppError(removeWorkspace({ repoPath: repo, path: path.join(root, "other") }), "PRECONDITION_FAILED");
    expect(fs.existsSync(path.join(repo, "README.md"))).toBe(true);
    expect(fs.existsSync(path.join(root, "other/file.txt"))).toBe(true);
  });
});

describe("isInside", () => {
  let base = "";
  let root = "";
  let outside = "";

  beforeAll(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-ws-inside-")));
    root = path.join(base, "ws");
    outside = path.join(base, "outside");
    fs.mkdirSync(path.join(root, "src/deep"), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(root, "src/file.ts"), "x");
    fs.writeFileSync(path.join(outside, "secret.txt"), "s");
    fs.mkdirSync(path.join(base, "ws2"));
    fs.symlinkSync(outside, path.join(root, "link-out"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "secret-link"));
    fs.symlinkSync(path.join(outside, "not-yet.txt"), path.join(root, "dangling-out"));
    fs.symlinkSync("src", path.join(root, "link-in"));
    fs.symlinkSync("loop-b", path.join(root, "loop-a"));
    fs.symlinkSync("loop-a", path.join(root, "loop-b"));
  });

  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  it.each<{ name: string; candidate: () => string; inside: boolean }>([
    { name: "the root itself", candidate: () => ".", inside: true },
    { name: "an existing file", candidate: () => "src/file.ts", inside: true },
    { name: "a file not created yet", candidate: () => "src/new/dir/file.ts", inside: true },
    { name: "an absolute path inside", candidate: () => path.join(root, "src/file.ts"), inside: true },
    { name: "`..` that stays inside", candidate: () => "src/deep/../file.ts", inside: true },
    { name: "a symlink to a directory inside", candidate: () => "link-in/file.ts", inside: true },
    { name: "`..` out of the root", candidate: () => "../outside/secret.txt", inside: false },
    { name: "plain `..`", candidate: () => "..", inside: false },
    { name: "a sibling with the root as name prefix", candidate: () => "../ws2/x", inside: false },
    { name: "an absolute path outside", candidate: () => "/etc/passwd", inside: false },
    { name: "a symlink to a directory outside", candidate: () => "link-out/secret.txt", inside: false },
    { name: "a new file through a symlink outside", candidate: () => "link-out/new.txt", inside: false },
    { name: "a symlink to a file outside", candidate: () => "secret-link", inside: false },
    { name: "a dangling symlink pointing outside", candidate: () => "dangling-out", inside: false },
    { name: "`..` after a symlink resolves from its target", candidate: () => "link-out/../outside/secret.txt", inside: false },
    { name: "a symlink loop", candidate: () => "loop-a/x", inside: false },
    { name: "an empty path", candidate: () => "", inside: false },
    { name: "a NUL byte", candidate: () => "src/file.ts\0", inside: false },
  ])("$name → inside: $inside", ({ candidate, inside }) => {
    expect(isInside(root, candidate())).toBe(inside);
  });
});
