// What a runner does with a `prune_workspace` step (req F14; docs/operations.md, "Cleaning up
// failed sessions"): on the runner's host, where the worktree lives, the session's worktree is
// removed (`git worktree remove`, then `git worktree prune`) and the refs its request names are
// deleted. Safe to run again: what is already gone is skipped, and the output says what this
// run removed.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Db } from "../db/pool";
import { isAppError } from "../errors";
import type { ClaimedStep } from "../runner/dispatch";
import { StepExecutionError } from "../runner/executors";
import { withWorktreeLock } from "../runner/repo-lock";
import { runnerHost } from "../runner/worktree-placement";
import { deleteRefs, removeWorkspace } from "../workspaces";

export const PRUNE_STEP = "prune_workspace";
/** Removing a worktree and a few refs takes seconds; this only bounds a wedged git. */
export const PRUNE_TIMEOUT_MS = 120_000;

export const ZPruneInput = z.object({
  repoPath: z.string().min(1),
  refs: z.array(z.string().min(1)),
  /** Who asked (an actor label), carried to the record of the outcome. */
  requestedBy: z.string().min(1),
});
export type PruneInput = z.infer<typeof ZPruneInput>;

export const ZPruneOutput = z.object({
  kind: z.literal("prune"),
  worktree: z.string().nullable(),
  /** The runner's host, where the worktree was (absent: recorded before hosts were). */
  host: z.string().min(1).optional(),
  refsDeleted: z.array(z.string()),
});
export type PruneOutput = z.infer<typeof ZPruneOutput>;

export interface PruneExecutorDeps {
  pool: Db;
  /** This runner's host (CATCAFE_RUNNER_HOST); the hostname by default. */
  host?: string;
  /** Where this runner's session worktrees live. */
  workspacesRoot: string;
  /** This runner's clone of a project registered at `repoPath` (CATCAFE_REPOSITORY_PATHS). */
  repositoryPath?: (repoPath: string) => string;
}

export function pruneExecutor(deps: PruneExecutorDeps): (step: ClaimedStep, input: PruneInput) => Promise<PruneOutput> {
  return async (step, input) => {
    const repoPath = deps.repositoryPath?.(input.repoPath) ?? input.repoPath;
    // As the worktree's creation recorded it (WorktreePlaced): under the root's real path.
    const root = fs.existsSync(deps.workspacesRoot) ? fs.realpathSync(deps.workspacesRoot) : path.resolve(deps.workspacesRoot);
    const target = path.join(root, step.sessionId);
    try {
      // One worktree operation per repository at a time, as creating one is (runner/repo-lock.ts).
      const { removed } = await withWorktreeLock(deps.pool, repoPath, () => removeWorkspace({ repoPath, path: target }));
      const refsDeleted = await deleteRefs(repoPath, input.refs);
      return { kind: "prune", worktree: removed ? target : null, host: runnerHost(deps.host), refsDeleted };
    } catch (err) {
      // A directory there that is not the session's worktree, or a repository gone: trying again changes nothing.
      if (isAppError(err, "PRECONDITION_FAILED") || isAppError(err, "NOT_FOUND") || isAppError(err, "INVALID_INPUT")) {
        throw new StepExecutionError("internal_error", err.message, false);
      }
      throw err;
    }
  };
}
