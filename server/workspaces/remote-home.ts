// The project's remote as the home of the sessions' branches (docs/delivery.md, "The remote is
// the home"): each build's commit is pushed to the session's branch there, so the branch is
// the same whichever host asks; a runner whose clone lacks a step's commit fetches it from
// there before it falls back to the session's bundle. Runners' clones are caches of it. The
// session's branch on the remote moves forward only, by the session's own steps.
import { AppError } from "../errors";
import { hasCommit } from "./bundles";
import { DeliveryProblem, mergedCommit, pushProblem, remoteBranchHead, remoteEnv, type MergeResult } from "./deliver";
import { runGit } from "./git";
import { assertFullCommitId, pinCommit, requireRepository } from "./repo";

/** A remote call gives up after this long: a build or a delivery must not hang on a dead host. */
const REMOTE_TIMEOUT_MS = 60_000;
/** Pushes tried again when the branch moved between the read and the push (the lease). */
const PUSH_TRIES = 3;

/** Where the sessions' branches live, and the token to reach it (from the runner's environment; never recorded). */
export interface SessionRemote {
  remote: string;
  token?: string;
}

function assertRemote(remote: string): void {
  // A remote is a name, a URL or a path: never something git could read as an option.
  if (remote === "" || remote.startsWith("-")) throw new AppError("INVALID_INPUT", `not a git remote: ${JSON.stringify(remote)}`);
}

async function isAncestor(cwd: string, ancestor: string, commit: string): Promise<boolean> {
  // A commit this clone does not have is no ancestor of anything here (git exits 128).
  return (await runGit(cwd, ["merge-base", "--is-ancestor", ancestor, commit], { allowFailure: true })).exitCode === 0;
}

/**
 * Pushes the session's `commit` to `branch` on `remote`, with a lease on the value read just
 * before (`--force-with-lease`): the branch moves forward only. It is pushed when the remote
 * has no such branch, or has it at an ancestor of `commit` (the step's expected head, or an
 * older commit of the session when an earlier push failed). Anything else there is either a
 * stale attempt's build or the head before a revert: it is replaced only while this attempt
 * still holds its step (`stillHeld`), so a stale attempt never moves the branch back. A branch
 * moved between the read and the push is read again (up to three times).
 * `stale`: not pushed, the branch is not this attempt's any more. A remote that cannot be
 * reached or refuses is a DeliveryProblem with its class.
 */
export async function pushSessionBranch(input: {
  repoPath: string;
  remote: SessionRemote;
  branch: string;
  commit: string;
  stillHeld: () => Promise<boolean>;
}): Promise<"pushed" | "already" | "stale"> {
  assertFullCommitId(input.commit, "commit");
  const { remote, token } = input.remote;
  assertRemote(remote);
  const repo = await requireRepository(input.repoPath);
  const ref = `refs/heads/${input.branch}`;
  for (let tries = 1; tries <= PUSH_TRIES; tries++) {
    const current = await remoteBranchHead({
      repoPath: repo.top,
      remote,
      branch: input.branch,
      ...(token ? { token } : {}),
      timeoutMs: REMOTE_TIMEOUT_MS,
    });
    if (current === input.commit) return "already";
    const forward = current === null || (await isAncestor(repo.top, current, input.commit));
    if (!forward && !(await input.stillHeld())) return "stale";
    const pushed = await runGit(
      repo.top,
      ["push", "--porcelain", `--force-with-lease=${ref}:${current ?? ""}`, "--", remote, `${input.commit}:${ref}`],
      { allowFailure: true, env: remoteEnv(token), timeoutMs: REMOTE_TIMEOUT_MS },
    );
    if (pushed.exitCode === 0) return "pushed";
    const said = `${pushed.stdout}\n${pushed.stderr}`;
    // The lease failed: someone moved the branch since it was read. Read it again.
    if (!/stale info|fetch first|non-fast-forward/.test(said)) throw pushProblem(pushed.stderr || pushed.stdout);
  }
  throw new DeliveryProblem("push_rejected", `${input.branch} kept moving on ${remote} while it was pushed`, [], true);
}

/**
 * Makes the clone at `repoPath` have `commit` from the session's branch on the remote
 * (`git fetch <remote> <branch>`), before anyone falls back to the session's bundle:
 * `present` when the clone had it (the remote is not asked for, nor resolved), `fetched` when
 * the remote's branch brought it (pinned, like a bundle's), `absent` when there is no remote
 * or it does not hold the commit, `unreachable` (with git's words) when the fetch failed.
 */
export async function fetchSessionCommit(input: {
  repoPath: string;
  remote: () => Promise<SessionRemote | null>;
  branch: string;
  commit: string;
}): Promise<{ outcome: "present" | "fetched" | "absent" } | { outcome: "unreachable"; reason: string }> {
  assertFullCommitId(input.commit, "commit");
  const repo = await requireRepository(input.repoPath);
  if (await hasCommit(repo.top, input.commit)) return { outcome: "present" };
  const home = await input.remote();
  if (!home) return { outcome: "absent" };
  assertRemote(home.remote);
  // Into no ref and not FETCH_HEAD (steps fetch into one clone at once): the commit is pinned below.
  const fetched = await runGit(
    repo.top,
    ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", home.remote, `refs/heads/${input.branch}`],
    {
      allowFailure: true,
      env: remoteEnv(home.token),
      timeoutMs: REMOTE_TIMEOUT_MS,
    },
  );
  if (fetched.exitCode !== 0) {
    // No such branch there (nothing was pushed yet) is an absence, not a failure.
    if (/couldn't find remote ref/i.test(fetched.stderr)) return { outcome: "absent" };
    return { outcome: "unreachable", reason: fetched.stderr.slice(0, 2000) || `git fetch exited with ${fetched.exitCode}` };
  }
  if (!(await hasCommit(repo.top, input.commit))) return { outcome: "absent" };
  await pinCommit(repo.top, input.commit);
  return { outcome: "fetched" };
}

/**
 * Merges `commit` into `target` on the remote: the target fetched, the merge computed here
 * without a working tree (a fast-forward or a merge commit, as a local merge), then pushed
 * with a lease on the fetched value. A target moved meanwhile is fetched and merged again (up
 * to three times), then reported as `target_moved` (retried); a conflict names its files; in
 * every refusal the remote's target stays where it was. No runner's clone has its branches
 * moved: the clone only lends its object store.
 */
export async function mergeIntoRemote(input: {
  repoPath: string;
  remote: SessionRemote;
  target: string;
  commit: string;
  message: string;
}): Promise<MergeResult> {
  assertFullCommitId(input.commit, "commit");
  const { remote, token } = input.remote;
  assertRemote(remote);
  const repo = await requireRepository(input.repoPath);
  const ref = `refs/heads/${input.target}`;
  for (let tries = 1; tries <= PUSH_TRIES; tries++) {
    const before = await remoteBranchHead({
      repoPath: repo.top,
      remote,
      branch: input.target,
      ...(token ? { token } : {}),
      timeoutMs: REMOTE_TIMEOUT_MS,
    });
    if (!before) throw new DeliveryProblem("not_configured", `the target branch ${input.target} does not exist on ${remote}`);
    if (!(await hasCommit(repo.top, before))) {
      const fetched = await runGit(repo.top, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", remote, ref], {
        allowFailure: true,
        env: remoteEnv(token),
        timeoutMs: REMOTE_TIMEOUT_MS,
      });
      if (fetched.exitCode !== 0) throw pushProblem(fetched.stderr || fetched.stdout);
      // Moved between the read and the fetch: read it again.
      if (!(await hasCommit(repo.top, before))) continue;
    }
    const { next, how } = await mergedCommit(repo.top, { target: input.target, before, commit: input.commit, message: input.message });
    if (how === "already_merged") return { target: input.target, commit: before, how };
    const pushed = await runGit(repo.top, ["push", "--porcelain", `--force-with-lease=${ref}:${before}`, "--", remote, `${next}:${ref}`], {
      allowFailure: true,
      env: remoteEnv(token),
      timeoutMs: REMOTE_TIMEOUT_MS,
    });
    if (pushed.exitCode === 0) return { target: input.target, commit: next, how };
    if (!/stale info|fetch first|non-fast-forward/.test(`${pushed.stdout}\n${pushed.stderr}`))
      throw pushProblem(pushed.stderr || pushed.stdout);
  }
  throw new DeliveryProblem("target_moved", `${input.target} kept moving on ${remote} while it was merged into; deliver again`, [], true);
}
