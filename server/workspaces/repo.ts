// What a directory is to git (the project repository, a session workspace, or neither) and
// which commits exist in it. Every other workspace function starts from these checks, so a
// wrong path fails with a clear message before git touches anything.
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../errors";
import { runGit } from "./git";

export interface Checkout {
  /** Top directory of the working tree (realpath). */
  top: string;
  /** This checkout's own git directory. */
  gitDir: string;
  /** The repository's shared git directory; equal to gitDir for the main checkout. */
  commonDir: string;
  /** True for a linked worktree (a session workspace), false for the main checkout. */
  linked: boolean;
}

function realDir(dir: string): string {
  const resolved = path.resolve(dir);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(resolved);
  } catch {
    throw new AppError("NOT_FOUND", `Directory does not exist: ${resolved}`, { path: resolved });
  }
  if (!stat.isDirectory()) throw new AppError("INVALID_INPUT", `Not a directory: ${resolved}`, { path: resolved });
  return fs.realpathSync(resolved);
}

function realOrResolved(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Describes the checkout whose top directory is exactly `dir`, or returns null when `dir`
 * is not the top of a git working tree. A subdirectory of some other repository (say a
 * workspaces root inside a project) is "not a checkout", never silently its parent's.
 */
export async function inspectCheckout(dir: string): Promise<Checkout | null> {
  const real = realDir(dir);
  const result = await runGit(real, ["rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir"], {
    allowFailure: true,
  });
  if (result.exitCode !== 0) return null;
  const [top, gitDir, commonDir] = result.stdout.split("\n");
  if (!top || !gitDir || !commonDir) return null;
  if (realOrResolved(top) !== real) return null;
  const realGitDir = realOrResolved(path.resolve(real, gitDir));
  const realCommonDir = realOrResolved(path.resolve(real, commonDir));
  return { top: real, gitDir: realGitDir, commonDir: realCommonDir, linked: realGitDir !== realCommonDir };
}

/**
 * What a machine lacks to work on a project in its clone at `repoPath`, or null: the clone is
 * there and is the top of a git checkout (docs/scaling.md, "Which runner runs a step").
 * Whether it holds a session's commits is ensureCommit's to find. `mapping`: how the path
 * was chosen (CATCAFE_REPOSITORY_PATHS), for the message.
 */
export async function missingClone(repoPath: string, mapping?: string): Promise<string | null> {
  const mapped = mapping ? ` (${mapping})` : "";
  if (!fs.existsSync(repoPath)) return `no clone at ${repoPath}${mapped}`;
  if (!(await inspectCheckout(repoPath))) return `${repoPath} is not the top of a git repository${mapped}`;
  return null;
}

/** How a registered repoPath became this machine's clone, for messages; undefined when it is the path itself. */
export function repositoryMapping(registered: string, local: string): string | undefined {
  return local === registered ? undefined : `CATCAFE_REPOSITORY_PATHS maps ${registered} to ${local}`;
}

/** The project repository at `repoPath`, which must be the top of a (non-bare) git checkout. */
export async function requireRepository(repoPath: string): Promise<Checkout> {
  const checkout = await inspectCheckout(repoPath);
  if (checkout) return checkout;
  throw new AppError(
    "PRECONDITION_FAILED",
    `The project at ${path.resolve(repoPath)} is not a git repository (or not its top directory); ` +
      "session workspaces are git worktrees, so the project must be a git repository with at least one commit",
    { repoPath },
  );
}

/** A session workspace: a linked worktree, never a project's main checkout. */
export async function requireWorkspace(workspacePath: string): Promise<Checkout> {
  const checkout = await inspectCheckout(workspacePath);
  if (checkout?.linked) return checkout;
  throw new AppError(
    "PRECONDITION_FAILED",
    checkout
      ? `${checkout.top} is a project's main checkout, not a session workspace; refusing to change it`
      : `${path.resolve(workspacePath)} is not a session workspace (not the top of a git worktree)`,
    { path: workspacePath },
  );
}

/**
 * Resolves `rev` to a full commit id in the checkout at `cwd`. A revision starting with `-`
 * could be read as an option, so it is refused outright.
 */
export async function resolveCommit(cwd: string, rev: string): Promise<string> {
  if (rev === "" || rev.startsWith("-") || /[\0\n]/.test(rev)) {
    throw new AppError("INVALID_INPUT", `Invalid git revision ${JSON.stringify(rev)}`, { rev });
  }
  const result = await runGit(cwd, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`], {
    allowFailure: true,
  });
  const sha = result.stdout.trim();
  if (result.exitCode !== 0 || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) {
    throw new AppError("NOT_FOUND", `No commit ${JSON.stringify(rev)} in the repository at ${cwd}`, {
      rev,
      cwd,
      stderr: result.stderr,
    });
  }
  return sha;
}

/** The commit a session starts from: `ref` (default HEAD) of the project repository. */
export async function resolveBaseCommit(repoPath: string, ref = "HEAD"): Promise<string> {
  const repo = await requireRepository(repoPath);
  return resolveCommit(repo.top, ref);
}

/** A recorded commit id: full hexadecimal, so the same id always means the same tree. */
export function assertFullCommitId(commit: string, field: string): string {
  const normalized = commit.toLowerCase();
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(normalized)) {
    throw new AppError("INVALID_INPUT", `${field} must be a full commit id (40 hex digits), got ${JSON.stringify(commit)}`, {
      [field]: commit,
    });
  }
  return normalized;
}

/**
 * Keeps a recorded commit reachable. Workspace commits live on a detached HEAD; once the
 * workspace is removed, only a ref stops `git gc` from deleting a commit that a later fork
 * (or a revert) still needs. Refs under refs/ are shared by all worktrees of a repository.
 */
export async function pinCommit(cwd: string, commit: string): Promise<void> {
  await runGit(cwd, ["update-ref", `refs/catcafe/pins/${commit}`, commit]);
}
