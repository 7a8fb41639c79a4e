// What a session changed in its workspace, as git sees it: committing everything an agent
// left there, and listing or diffing the changes since a commit. The changed-file list is
// always computed by git, never taken from the agent's own report (req M7 manifest checks).
import fs from "node:fs/promises";
import path from "node:path";
import { knownSecretValues } from "../redact";
import { AppError } from "../errors";
import { runGit } from "./git";
import { assertFullCommitId, pinCommit, requireRepository, requireWorkspace, resolveCommit } from "./repo";
import { workspaceOwner } from "./workspace";

export type ChangedFile =
  | { path: string; status: "added" | "modified" | "deleted" }
  /** A rename touches two paths; a manifest check must allow both. */
  | { path: string; status: "renamed"; previousPath: string };

export interface CommitAuthor {
  name: string;
  email: string;
}

export interface CommitWorkspaceInput {
  path: string;
  message: string;
  author: CommitAuthor;
  /**
   * What the committer believes: the workspace is at `head` (commits the agent made on top
   * of it are folded into this one) and, when given, still claimed by `owner`
   * (claimWorkspace). Anything else is refused with CONFLICT and nothing is committed.
   */
  expect?: { head: string; owner?: string };
  /** A branch of the project repository that is moved to the commit (the session's branch). */
  branch?: string;
}

export interface WorkspaceCommit {
  /** The new commit, or the unchanged HEAD when there was nothing to commit. */
  commit: string;
  parent: string;
  changedFiles: ChangedFile[];
  /** Unified diff parent..commit. */
  diff: string;
  empty: boolean;
}

/** Commits are made by Cat Cafe on behalf of their author; works with no git config at all. */
const COMMITTER = { name: "Cat Cafe", email: "catcafe@localhost" } as const;

// Fixed options so a user's git config (colour, external diff tools, prefixes) cannot change
// what we store or parse.
const DIFF_OPTIONS = ["--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/"];

function assertIdentityPart(value: string, field: string): void {
  if (value.trim() === "" || /[<>\n\r\0]/.test(value)) {
    throw new AppError("INVALID_INPUT", `${field} must be non-empty and contain no <, > or line breaks`, {
      [field]: value,
    });
  }
}

/** Parses `git diff --name-status -z`: a status, then one path (two for renames and copies). */
function parseNameStatus(output: string): ChangedFile[] {
  const fields = output.split("\0");
  const take = (): string => {
    const field = fields.shift();
    if (field === undefined || field === "") throw new AppError("INTERNAL", "Truncated git --name-status output");
    return field;
  };
  const files: ChangedFile[] = [];
  while (fields.length > 0 && fields[0] !== "") {
    const code = take().charAt(0);
    const filePath = take();
    if (code === "A") files.push({ path: filePath, status: "added" });
    else if (code === "D") files.push({ path: filePath, status: "deleted" });
    else if (code === "M" || code === "T") files.push({ path: filePath, status: "modified" });
    else if (code === "R") files.push({ path: take(), status: "renamed", previousPath: filePath });
    // A copy (only with copy detection) is, for a manifest, a new file.
    else if (code === "C") files.push({ path: take(), status: "added" });
    else throw new AppError("INTERNAL", `Unexpected git status ${JSON.stringify(code)} for ${filePath}`);
  }
  return files;
}

async function changedFilesBetween(cwd: string, from: string, to: string): Promise<ChangedFile[]> {
  const result = await runGit(cwd, ["diff", "--name-status", "-z", ...DIFF_OPTIONS, from, to, "--"]);
  return parseNameStatus(result.stdout);
}

async function diffBetween(cwd: string, from: string, to: string, exclude: readonly string[] = []): Promise<string> {
  const paths = exclude.length ? [".", ...exclude.map((p) => `:(exclude)${p}`)] : [];
  const result = await runGit(cwd, ["diff", ...DIFF_OPTIONS, from, to, "--", ...paths]);
  return result.stdout;
}

/**
 * The code between two commits of a project (two sessions' heads): the diff and each file's
 * lines added and removed, paths under `exclude` left out (a pipeline's .forge/ artifacts are
 * compared apart). Either commit may come from any worktree of the repository.
 */
export async function diffCommits(
  repoPath: string,
  from: string,
  to: string,
  exclude: string[] = [],
): Promise<{ diff: string; files: Array<{ path: string; added: number; removed: number }> }> {
  const repo = await requireRepository(repoPath);
  const range = [assertFullCommitId(from, "from"), assertFullCommitId(to, "to"), "--", ".", ...exclude.map((p) => `:(exclude)${p}`)];
  const numstat = await runGit(repo.top, ["diff", "--no-renames", "--numstat", "-z", ...range]);
  const files = numstat.stdout
    .split("\0")
    .filter(Boolean)
    .map((entry) => {
      const [added, removed, ...rest] = entry.split("\t");
      return { path: rest.join("\t"), added: Number(added) || 0, removed: Number(removed) || 0 };
    });
  const diff = await runGit(repo.top, ["diff", ...DIFF_OPTIONS, ...range]);
  return { diff: diff.stdout, files };
}

/**
 * Stages everything in the workspace (`git add -A`, respecting .gitignore) and commits it
 * with the given author. Nothing to commit is not an error: `empty: true` and the current
 * HEAD. The new commit is pinned so it outlives the workspace.
 */
/**
 * Moves `branch` (refs/heads/…, shared by every worktree of the repository) to `commit`. A
 * name git refuses is an INVALID_INPUT, and nothing moves.
 */
export async function moveBranch(cwd: string, branch: string, commit: string): Promise<void> {
  const checked = await runGit(cwd, ["check-ref-format", "--branch", branch], { allowFailure: true });
  if (checked.exitCode !== 0) throw new AppError("INVALID_INPUT", `"${branch}" is not a valid branch name`, { branch });
  await runGit(cwd, ["update-ref", `refs/heads/${branch}`, commit]);
}

export async function commitWorkspace(input: CommitWorkspaceInput): Promise<WorkspaceCommit> {
  if (input.message.trim() === "" || input.message.includes("\0")) {
    throw new AppError("INVALID_INPUT", "A commit message must be non-empty text", { message: input.message });
  }
  assertIdentityPart(input.author.name, "author.name");
  assertIdentityPart(input.author.email, "author.email");
  const workspace = await requireWorkspace(input.path);
  const cwd = workspace.top;
  const parent = input.expect ? await checkExpectations(input.path, cwd, input.expect) : await resolveCommit(cwd, "HEAD");

  await runGit(cwd, ["add", "--all"]);
  await scrubStaged(cwd);
  const staged = await runGit(cwd, ["diff", "--cached", "--quiet", "--no-ext-diff"], { allowFailure: true });
  if (staged.exitCode === 0) {
    if (input.branch) await moveBranch(cwd, input.branch, parent);
    return { commit: parent, parent, changedFiles: [], diff: "", empty: true };
  }
  if (staged.exitCode !== 1) {
    throw new AppError("INTERNAL", `git diff --cached failed in ${cwd}: ${staged.stderr}`, { stderr: staged.stderr });
  }

  await runGit(
    cwd,
    [
      "-c",
      `user.name=${COMMITTER.name}`,
      "-c",
      `user.email=${COMMITTER.email}`,
      "-c",
      "commit.gpgsign=false",
      "commit",
      "--quiet",
      "--no-verify",
      "--message",
      input.message,
    ],
    { env: { GIT_AUTHOR_NAME: input.author.name, GIT_AUTHOR_EMAIL: input.author.email } },
  );
  const commit = await resolveCommit(cwd, "HEAD");
  await pinCommit(cwd, commit);
  if (input.branch) await moveBranch(cwd, input.branch, commit);
  return {
    commit,
    parent,
    changedFiles: await changedFilesBetween(cwd, parent, commit),
    diff: await diffBetween(cwd, parent, commit),
    empty: false,
  };
}

/**
 * Replaces, in every staged file, each value the server knows to be a secret — its own, and
 * every value handed to an agent (server/process/env.ts) — by `[redacted NAME]`, and stages the
 * file again: an agent that wrote a key into a file does not get it into a commit, a diff, a
 * bundle or an export. Whatever the file's encoding, the bytes are compared.
 */
async function scrubStaged(cwd: string): Promise<void> {
  const secrets = knownSecretValues().map((s) => ({ bytes: Buffer.from(s.value, "utf8"), with: Buffer.from(`[redacted ${s.name}]`) }));
  if (!secrets.length) return;
  const listed = await runGit(cwd, ["diff", "--cached", "--name-only", "-z", "--no-renames", "--diff-filter=AM"]);
  const scrubbed: string[] = [];
  for (const file of listed.stdout.split("\0").filter(Boolean)) {
    const full = path.join(cwd, file);
    let content: Buffer;
    try {
      const stat = await fs.lstat(full);
      if (!stat.isFile()) continue;
      content = await fs.readFile(full);
    } catch {
      continue;
    }
    let changed = false;
    for (const secret of secrets) {
      if (content.indexOf(secret.bytes) < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      for (let at = content.indexOf(secret.bytes); at >= 0; at = content.indexOf(secret.bytes, from)) {
        parts.push(content.subarray(from, at), secret.with);
        from = at + secret.bytes.length;
      }
      parts.push(content.subarray(from));
      content = Buffer.concat(parts);
      changed = true;
    }
    if (!changed) continue;
    await fs.writeFile(full, content);
    scrubbed.push(file);
  }
  if (scrubbed.length) await runGit(cwd, ["add", "--", ...scrubbed]);
}

/** Checks what the committer expects; returns HEAD afterwards (always the expected commit). */
async function checkExpectations(workspacePath: string, cwd: string, expect: { head: string; owner?: string }): Promise<string> {
  if (expect.owner !== undefined) {
    const owner = await workspaceOwner(workspacePath);
    if (owner !== expect.owner) {
      throw new AppError(
        "CONFLICT",
        `the workspace ${cwd} is now worked on by ${owner ?? "nobody"}, not ${expect.owner}: nothing committed`,
        {
          owner,
          expected: expect.owner,
        },
      );
    }
  }
  const expected = assertFullCommitId(expect.head, "expect.head");
  const head = await resolveCommit(cwd, "HEAD");
  if (head === expected) return head;
  // The agent committed on its own: keep its changes, staged, and commit them as one.
  const descends = await runGit(cwd, ["merge-base", "--is-ancestor", expected, head], { allowFailure: true });
  if (descends.exitCode !== 0) {
    throw new AppError(
      "CONFLICT",
      `the workspace ${cwd} is at ${head}, which does not descend from the expected ${expected}: nothing committed`,
      {
        head,
        expected,
      },
    );
  }
  await runGit(cwd, ["reset", "--soft", "--quiet", expected]);
  return expected;
}

async function committedRange(workspacePath: string, baseCommit: string): Promise<{ cwd: string; base: string; head: string }> {
  const workspace = await requireWorkspace(workspacePath);
  const base = await resolveCommit(workspace.top, assertFullCommitId(baseCommit, "baseCommit"));
  return { cwd: workspace.top, base, head: await resolveCommit(workspace.top, "HEAD") };
}

/**
 * Files changed between `baseCommit` and the workspace's HEAD (committed changes only:
 * commit the workspace first). What a manifest check compares against allowed globs.
 */
export async function changedFilesSince(workspacePath: string, baseCommit: string): Promise<ChangedFile[]> {
  const { cwd, base, head } = await committedRange(workspacePath, baseCommit);
  return changedFilesBetween(cwd, base, head);
}

/** Unified diff between `baseCommit` and the workspace's HEAD (committed changes only), paths under `exclude` left out. */
export async function diffSince(workspacePath: string, baseCommit: string, exclude: readonly string[] = []): Promise<string> {
  const { cwd, base, head } = await committedRange(workspacePath, baseCommit);
  return diffBetween(cwd, base, head, exclude);
}
