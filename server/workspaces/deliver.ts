// Getting a session's commit out of its worktree (docs/delivery.md), in the project repository:
// pushing its branch to a remote, or merging it into a target branch without touching any
// working tree (git merge-tree computes the merge, update-ref moves the target only if it
// is still where it was read). Every refusal is a DeliveryProblem with its class; nothing
// is half done: a conflict or a moved target leaves the target as it was.
import { AppError } from "../errors";
import { runGit } from "./git";
import { moveBranch } from "./changes";
import { requireRepository, resolveCommit } from "./repo";

export type DeliveryProblemClass =
  "push_rejected" | "auth_failed" | "remote_unreachable" | "merge_conflict" | "target_moved" | "target_checked_out" | "not_configured";

export class DeliveryProblem extends Error {
  constructor(
    readonly problemClass: DeliveryProblemClass,
    message: string,
    readonly files: string[] = [],
    /** Worth trying again later (the remote was unreachable). */
    readonly retryable = false,
  ) {
    super(message);
    this.name = "DeliveryProblem";
  }
}

/** `token` goes to git through its environment (GIT_CONFIG_*), never on a command line. */
export function authEnv(token: string | undefined): Record<string, string> {
  if (!token) return {};
  const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
  return { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "http.extraHeader", GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
}

/** The environment of a git call that reaches a remote: the token, no transport that runs a command (ext::), and an ssh that never waits for a person. */
export function remoteEnv(token: string | undefined): Record<string, string> {
  return { ...authEnv(token), GIT_ALLOW_PROTOCOL: "file:git:http:https:ssh", GIT_SSH_COMMAND: "ssh -o BatchMode=yes -o ConnectTimeout=10" };
}

/**
 * What `remote` says its `branch` points at (`git ls-remote`, with the token as a push sends
 * it): the commit, or null when the remote has no such branch. A remote that cannot be reached
 * or refuses the credentials is a DeliveryProblem, classed as a push's would be.
 */
export async function remoteBranchHead(input: {
  repoPath: string;
  remote: string;
  branch: string;
  token?: string;
  timeoutMs: number;
}): Promise<string | null> {
  const repo = await requireRepository(input.repoPath);
  const listed = await runGit(repo.top, ["ls-remote", "--heads", "--", input.remote, `refs/heads/${input.branch}`], {
    allowFailure: true,
    env: remoteEnv(input.token),
    timeoutMs: input.timeoutMs,
  });
  if (listed.exitCode !== 0) throw pushProblem(listed.stderr || listed.stdout || `git ls-remote exited with ${listed.exitCode}`);
  return listed.stdout.split("\n")[0]?.split("\t")[0]?.trim() || null;
}

/** The URL git pushes to for `remote` (a remote's name, or already a URL or path). */
export async function remoteUrl(repoPath: string, remote: string): Promise<string> {
  const repo = await requireRepository(repoPath);
  const named = await runGit(repo.top, ["remote", "get-url", "--push", "--", remote], { allowFailure: true });
  return named.exitCode === 0 ? named.stdout.trim() : remote;
}

/** What a failed push said, as a class (and without the token, which git never prints). */
export function pushProblem(stderr: string): DeliveryProblem {
  const text = stderr.slice(0, 2000);
  if (/authentication failed|could not read username|401|403|permission denied|access denied/i.test(text))
    return new DeliveryProblem("auth_failed", `the remote refused the credentials: ${text}`);
  if (/could not resolve host|connection refused|timed out|unable to access|does not appear to be a git repository|not found/i.test(text))
    return new DeliveryProblem("remote_unreachable", `the remote could not be reached: ${text}`, [], true);
  return new DeliveryProblem("push_rejected", `the remote refused the push: ${text}`);
}

/**
 * Pushes `branch` at `commit` to `remote` (the session's branch is ours: it is moved there
 * even if the remote had another commit). Idempotent: pushing the same commit again changes nothing.
 */
export async function pushBranch(input: {
  repoPath: string;
  remote: string;
  branch: string;
  commit: string;
  token?: string;
}): Promise<{ remoteCommit: string }> {
  const repo = await requireRepository(input.repoPath);
  await moveBranch(repo.top, input.branch, input.commit);
  const pushed = await runGit(repo.top, ["push", "--porcelain", input.remote, `+refs/heads/${input.branch}:refs/heads/${input.branch}`], {
    allowFailure: true,
    env: remoteEnv(input.token),
  });
  if (pushed.exitCode !== 0) throw pushProblem(pushed.stderr || pushed.stdout);
  return { remoteCommit: input.commit };
}

/** The worktree that has `branch` checked out, if any (its files would change under a person). */
async function checkedOutIn(cwd: string, branch: string): Promise<string | null> {
  const list = await runGit(cwd, ["worktree", "list", "--porcelain"]);
  let path: string | null = null;
  for (const line of list.stdout.split("\n")) {
    if (line.startsWith("worktree ")) path = line.slice("worktree ".length);
    if (line === `branch refs/heads/${branch}`) return path;
  }
  return null;
}

export interface MergeResult {
  target: string;
  /** The target's commit after the merge. */
  commit: string;
  /** How: the target moved forward to the session's commit, a merge commit, or it had it already. */
  how: "fast_forward" | "merge_commit" | "already_merged";
}

/**
 * Merges `commit` into the local branch `target`: a fast-forward when the target is behind,
 * else a merge commit computed by `git merge-tree` (no working tree touched). A conflict is
 * reported with the files; a target moved by someone meanwhile is reported too; in both the
 * target stays where it was. A target checked out in a worktree is refused (its files would
 * no longer match it).
 */
export async function mergeInto(input: { repoPath: string; target: string; commit: string; message: string }): Promise<MergeResult> {
  const repo = await requireRepository(input.repoPath);
  const cwd = repo.top;
  const ref = `refs/heads/${input.target}`;
  const exists = await runGit(cwd, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { allowFailure: true });
  if (exists.exitCode !== 0) throw new DeliveryProblem("not_configured", `the target branch ${input.target} does not exist in ${cwd}`);
  const before = exists.stdout.trim();
  const holder = await checkedOutIn(cwd, input.target);
  if (holder) {
    throw new DeliveryProblem(
      "target_checked_out",
      `${input.target} is checked out in ${holder}: merging would change it under whoever works there; deliver to another branch, or merge it yourself`,
    );
  }
  const merged = await mergedCommit(cwd, { target: input.target, before, commit: input.commit, message: input.message });
  if (merged.how === "already_merged") return { target: input.target, commit: before, how: "already_merged" };
  const { next, how } = merged;
  // Moved only if it is still where it was read: someone else's push meanwhile is not overwritten.
  const moved = await runGit(cwd, ["update-ref", ref, next, before], { allowFailure: true });
  if (moved.exitCode !== 0) {
    const now = await resolveCommit(cwd, ref).catch(() => "gone");
    throw new DeliveryProblem(
      "target_moved",
      `${input.target} moved from ${before.slice(0, 12)} to ${now.slice(0, 12)} meanwhile; deliver again`,
      [],
      true,
    );
  }
  return { target: input.target, commit: next, how };
}

/**
 * The commit `target` (at `before`) becomes when `commit` is merged into it, computed without a
 * working tree: `commit` itself when the target is behind (fast-forward), a merge commit made by
 * `git merge-tree` otherwise, `before` when it has the commit already. A conflict is a
 * DeliveryProblem naming the files. Nothing is moved: the caller moves the target (a local
 * update-ref, or a push to the remote).
 */
export async function mergedCommit(
  cwd: string,
  input: { target: string; before: string; commit: string; message: string },
): Promise<{ next: string; how: MergeResult["how"] }> {
  const { before, commit } = input;
  const isAncestor = async (a: string, b: string) =>
    (await runGit(cwd, ["merge-base", "--is-ancestor", a, b], { allowFailure: true })).exitCode === 0;
  if (await isAncestor(commit, before)) return { next: before, how: "already_merged" };
  if (await isAncestor(before, commit)) return { next: commit, how: "fast_forward" };
  const merged = await runGit(cwd, ["merge-tree", "--write-tree", "--name-only", "--no-messages", before, commit], { allowFailure: true });
  const [tree = "", ...rest] = merged.stdout.split("\n").filter(Boolean);
  if (merged.exitCode === 1) {
    throw new DeliveryProblem(
      "merge_conflict",
      `merging into ${input.target} conflicts in ${rest.length} file(s): ${rest.join(", ")}`,
      rest,
    );
  }
  if (merged.exitCode !== 0) throw new AppError("INTERNAL", `git merge-tree failed: ${merged.stderr}`);
  const commitTree = await runGit(cwd, ["commit-tree", tree, "-p", before, "-p", commit, "-m", input.message], {
    env: {
      GIT_AUTHOR_NAME: "Cat Cafe",
      GIT_AUTHOR_EMAIL: "deliver@catcafe.local",
      GIT_COMMITTER_NAME: "Cat Cafe",
      GIT_COMMITTER_EMAIL: "deliver@catcafe.local",
    },
  });
  return { next: commitTree.stdout.trim(), how: "merge_commit" };
}
