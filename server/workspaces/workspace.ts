// Session workspaces: one detached git worktree of the project per session, at a recorded
// commit, under `<workspacesRoot>/<sessionId>`. Worktrees (not copies) because a commit made
// in one session's workspace is then visible to every other worktree, so a fork can start
// from it. Every operation here is safe to call again when a runner retries a step.
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../errors";
import { worktreeGitDirs } from "../process/git-dir";
import { gitFailure, runGit, runGitSequence } from "./git";
import { assertValidSessionId, isInside } from "./paths";
import { assertFullCommitId, inspectCheckout, pinCommit, requireRepository, requireWorkspace, resolveCommit, type Checkout } from "./repo";

export interface CreateWorkspaceInput {
  /** The project's git repository (top directory of its main checkout). */
  repoPath: string;
  /** Directory holding all session workspaces; created if missing; must be outside the project. */
  workspacesRoot: string;
  sessionId: string;
  /** Full commit id the session starts from (see resolveBaseCommit). */
  baseCommit: string;
}

export interface Workspace {
  path: string;
  baseCommit: string;
}

export interface ForkWorkspaceInput extends Omit<CreateWorkspaceInput, "baseCommit"> {
  /** The commit recorded at the fork point, possibly made in another session's workspace. */
  fromCommit: string;
}

async function headOf(dir: string): Promise<string> {
  return resolveCommit(dir, "HEAD");
}

function prepareRoot(workspacesRoot: string, repo: Checkout): string {
  const resolved = path.resolve(workspacesRoot);
  if (isInside(repo.top, resolved)) {
    // Workspaces inside the project would show up (and be committed) as project files.
    throw new AppError("INVALID_INPUT", `The workspaces root ${resolved} must be outside the project ${repo.top}`, {
      workspacesRoot,
    });
  }
  fs.mkdirSync(resolved, { recursive: true });
  return fs.realpathSync(resolved);
}

function isEmptyDirectory(dir: string): boolean {
  return fs.statSync(dir).isDirectory() && fs.readdirSync(dir).length === 0;
}

/**
 * The workspace already at `target`, when it is a worktree of `repo` at `baseCommit`;
 * null when nothing is there yet; CONFLICT when something else is.
 */
async function existingWorkspace(target: string, repo: Checkout, baseCommit: string): Promise<Workspace | null> {
  if (!fs.existsSync(target)) return null;
  const checkout = fs.statSync(target).isDirectory() ? await inspectCheckout(target) : null;
  if (!checkout) {
    if (isEmptyDirectory(target)) return null;
    throw new AppError("CONFLICT", `${target} already exists and is not a session workspace`, { path: target });
  }
  if (!checkout.linked || checkout.commonDir !== repo.commonDir) {
    throw new AppError("CONFLICT", `${target} is a checkout of another repository, not of ${repo.top}`, {
      path: target,
    });
  }
  const head = await headOf(target);
  if (head !== baseCommit) {
    throw new AppError(
      "CONFLICT",
      `The workspace ${target} already exists at commit ${head}, not at ${baseCommit}; ` + "reset it (resetWorkspace) or remove it first",
      { path: target, head, baseCommit },
    );
  }
  return { path: target, baseCommit };
}

/**
 * Creates the session's workspace: a detached worktree of the project at `baseCommit`.
 * Calling it again for a workspace already at that commit returns it unchanged (files an
 * agent already wrote there are kept; resetWorkspace discards them).
 */
export async function createWorkspace(input: CreateWorkspaceInput): Promise<Workspace> {
  assertValidSessionId(input.sessionId);
  const repo = await requireRepository(input.repoPath);
  const baseCommit = assertFullCommitId(input.baseCommit, "baseCommit");
  if ((await resolveCommit(repo.top, baseCommit)) !== baseCommit) {
    throw new AppError("NOT_FOUND", `No commit ${baseCommit} in ${repo.top}`, { baseCommit });
  }
  const root = prepareRoot(input.workspacesRoot, repo);
  const target = path.join(root, input.sessionId);
  if (!isInside(root, target) || target === root) {
    throw new AppError("INVALID_INPUT", `Session id ${input.sessionId} escapes the workspaces root`, {
      sessionId: input.sessionId,
    });
  }

  const workspace = (await existingWorkspace(target, repo, baseCommit)) ?? (await addWorktree(repo, target, baseCommit));
  await pinCommit(repo.top, baseCommit);
  return workspace;
}

async function addWorktree(repo: Checkout, target: string, baseCommit: string): Promise<Workspace> {
  const args = ["worktree", "add", "--detach", "--", target, baseCommit];
  for (let attempt = 1; ; attempt++) {
    // A workspace directory deleted by hand stays registered until pruned, and blocks `add`:
    // pruned before each try after the first, so that the usual add is one git process on the
    // path of a session's first step (docs/scaling.md, "First output and live paint").
    if (attempt > 1) await runGit(repo.top, ["worktree", "prune"]);
    const added = await runGit(repo.top, args, { allowFailure: true });
    if (added.exitCode === 0) return { path: target, baseCommit };
    // Another runner may have created the same workspace at the same moment.
    const raced = await existingWorkspace(target, repo, baseCommit).catch(() => null);
    if (raced) return raced;
    // A concurrent git process in the same repository (a lock file, a half-made worktree of
    // another session) is transient: try again shortly; anything else after three tries.
    if (attempt >= 3) throw gitFailure(repo.top, args, added);
    if (fs.existsSync(target) && isEmptyDirectory(target)) fs.rmdirSync(target);
    await new Promise((r) => setTimeout(r, 100 * attempt));
  }
}

/**
 * Creates a forked session's workspace at the commit recorded at its fork point. The same
 * as createWorkspace: the commit may come from another session's workspace, and worktrees
 * of one repository share their commits.
 */
export async function forkWorkspace(input: ForkWorkspaceInput): Promise<Workspace> {
  const { fromCommit, ...rest } = input;
  return createWorkspace({ ...rest, baseCommit: fromCommit });
}

export interface ResetWorkspaceOptions {
  /** Also delete ignored files (build output, node_modules); by default they are kept. */
  removeIgnored?: boolean;
}

/**
 * Puts a workspace back at `commit` exactly: tracked files reset, untracked files and
 * directories deleted. Used to re-run a step from a known commit after a failed attempt.
 */
export async function resetWorkspace(
  workspacePath: string,
  commit: string,
  options: ResetWorkspaceOptions = {},
): Promise<{ commit: string }> {
  // Read from the worktree's files where they prove it (a linked worktree, at that commit
  // already): two git processes fewer on every step (docs/scaling.md, "First output and live paint").
  const linked = linkedWorktree(workspacePath);
  const top = linked?.top ?? (await requireWorkspace(workspacePath)).top;
  const wanted = assertFullCommitId(commit, "commit");
  const sha = linked && detachedHead(linked.gitDir) === wanted ? wanted : await resolveCommit(top, wanted);
  // Both in one process start: the reset, then (only when it succeeded) the clean.
  await runGitSequence(top, [
    ["reset", "--hard", "--quiet", sha],
    ["clean", "-ffdq", ...(options.removeIgnored ? ["-x"] : [])],
  ]);
  return { commit: sha };
}

/**
 * The linked worktree whose top is `workspacePath`, proven from its files alone: its `.git` file
 * leads to an admin directory of the repository that points back at it (process/git-dir.ts,
 * the check every git call here makes first). Null when that does not prove it: the callers
 * then ask git, which says what the directory is instead.
 */
function linkedWorktree(workspacePath: string): { top: string; gitDir: string; commonDir: string } | null {
  try {
    const top = fs.realpathSync(workspacePath);
    const dirs = worktreeGitDirs(top);
    return dirs && dirs.gitDir !== dirs.commonDir ? { top, ...dirs } : null;
  } catch {
    return null;
  }
}

/** The commit a detached HEAD names, from the worktree's own HEAD file; null for a branch or anything else. */
function detachedHead(gitDir: string): string | null {
  try {
    const head = fs.readFileSync(path.join(gitDir, "HEAD"), "utf8").trim();
    return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(head) ? head : null;
  } catch {
    return null;
  }
}

/**
 * Whether `workspacePath` is a session workspace of the clone at `repoPath` whose HEAD is
 * `commit`, read from files (no git process). True proves the clone holds the commit: git's gc
 * keeps every worktree's HEAD. False proves nothing.
 */
export function workspaceAtCommit(workspacePath: string, repoPath: string, commit: string): boolean {
  const linked = linkedWorktree(workspacePath);
  if (!linked || detachedHead(linked.gitDir) !== commit.toLowerCase()) return false;
  try {
    return fs.realpathSync(path.join(repoPath, ".git")) === linked.commonDir;
  } catch {
    return false;
  }
}

/**
 * Removes a session's workspace and its worktree registration. Removing one that is
 * already gone is not an error (`removed: false`). Commits made in it stay in the
 * repository (they are pinned), so forks from them keep working.
 */
export async function removeWorkspace(input: { repoPath: string; path: string }): Promise<{ removed: boolean }> {
  const repo = await requireRepository(input.repoPath);
  const target = path.resolve(input.path);
  let removed = false;
  if (fs.existsSync(target)) {
    const checkout = await inspectCheckout(target);
    if (!checkout?.linked || checkout.commonDir !== repo.commonDir) {
      throw new AppError("PRECONDITION_FAILED", `${target} is not a session workspace of ${repo.top}`, {
        path: target,
        repoPath: repo.top,
      });
    }
    // Twice --force: also removes a workspace with changes or one that was locked.
    await runGit(repo.top, ["worktree", "remove", "--force", "--force", "--", checkout.top]);
    removed = true;
  }
  await runGit(repo.top, ["worktree", "prune"]);
  return { removed };
}

/**
 * What a linked worktree is now, read from files alone (no git process): its directory, the
 * commit its HEAD names, the attempt that claimed it and when, and its index (device, inode, size,
 * modification time: any git command that changes the index writes a new file; a lock on it). Equal readings
 * before and after mean no step claimed it, HEAD did not move and git did not touch its index
 * in between (CleanWorktrees). Null when the files do not prove it a linked, detached worktree.
 */
export function worktreeStamp(workspacePath: string): string | null {
  const linked = linkedWorktree(workspacePath);
  const head = linked && detachedHead(linked.gitDir);
  if (!linked || !head) return null;
  try {
    const dir = fs.statSync(linked.top);
    const index = fs.statSync(path.join(linked.gitDir, "index"));
    const ownerFile = path.join(linked.gitDir, OWNER_FILE);
    const owner = [fs.readFileSync(ownerFile, "utf8"), fs.statSync(ownerFile).mtimeMs];
    // A lock on the index: a git process is (or was, and died) at work there.
    const locked = fs.existsSync(path.join(linked.gitDir, "index.lock"));
    return JSON.stringify([dir.dev, dir.ino, head, owner, index.dev, index.ino, index.size, index.mtimeMs, index.ctimeMs, locked]);
  } catch {
    return null;
  }
}

/** The file in a worktree's own git directory naming the step attempt that may commit there. */
const OWNER_FILE = "catcafe-owner";

/**
 * Marks `workspacePath` as worked on by `owner` (a step attempt, "<stepId>:<attempt>") from
 * now on: an earlier attempt that is somehow still running can no longer commit there
 * (commitWorkspace with `expect.owner` refuses).
 */
export async function claimWorkspace(workspacePath: string, owner: string): Promise<void> {
  fs.writeFileSync(path.join(await worktreeGitDir(workspacePath), OWNER_FILE), owner);
}

/** Who last claimed the workspace (claimWorkspace), or null. */
export async function workspaceOwner(workspacePath: string): Promise<string | null> {
  try {
    return fs.readFileSync(path.join(await worktreeGitDir(workspacePath), OWNER_FILE), "utf8");
  } catch {
    return null;
  }
}

/**
 * A linked worktree's own git directory, read from its `.git` file ("gitdir: <dir>") without
 * starting git (this runs on every step); anything else goes through requireWorkspace, which
 * explains what the directory is instead.
 */
async function worktreeGitDir(workspacePath: string): Promise<string> {
  try {
    const pointer = fs.readFileSync(path.join(workspacePath, ".git"), "utf8");
    const match = /^gitdir: (.+)$/m.exec(pointer);
    if (match?.[1]) return path.resolve(workspacePath, match[1].trim());
  } catch {
    // not a linked worktree's pointer file
  }
  return (await requireWorkspace(workspacePath)).gitDir;
}

/** The refs a session's clean-up may delete: its commits' pins and its own branches, nothing else. */
const SESSION_REF = /^refs\/(catcafe\/pins\/[0-9a-f]{40}|heads\/[A-Za-z0-9._/-]{1,250})$/;

/**
 * Deletes `refs` from the repository at `repoPath` (req F14): those that exist, are a pin or a
 * branch, and are no worktree's checked-out branch (deleting it would leave that worktree's
 * HEAD pointing nowhere). Deleting a ref that is already gone is not an error. The refs deleted.
 */
export async function deleteRefs(repoPath: string, refs: readonly string[]): Promise<string[]> {
  const repo = await requireRepository(repoPath);
  const bad = refs.filter((r) => !SESSION_REF.test(r));
  if (bad.length) throw new AppError("INVALID_INPUT", `not a session's pin or branch: ${bad.join(", ")}`, { refs: bad });
  const listed = await runGit(repo.top, ["worktree", "list", "--porcelain"]);
  const checkedOut = new Set(
    listed.stdout
      .split("\n")
      .filter((l) => l.startsWith("branch "))
      .map((l) => l.slice("branch ".length)),
  );
  const deleted: string[] = [];
  for (const ref of refs) {
    if (checkedOut.has(ref)) continue;
    const exists = await runGit(repo.top, ["show-ref", "--verify", "--quiet", ref], { allowFailure: true });
    if (exists.exitCode !== 0) continue;
    await runGit(repo.top, ["update-ref", "-d", ref]);
    deleted.push(ref);
  }
  return deleted;
}
