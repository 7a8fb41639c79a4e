// The session worktrees one runner process left clean when a step ended, kept for the session's
// next step: a worktree this runner reset at a step's end, that no step has claimed since, whose
// HEAD is still that commit and whose index git has not written since, needs no reset when the
// next step starts. The reset moves from the start of a step to the end of the step before it,
// off the path between a person's Confirm and the coder's first output (docs/scaling.md, "First
// output and live paint"). Kept in this process's memory only: nothing an agent can write vouches
// for a worktree, and a runner that restarts, or any doubt, resets as before.
import { logger } from "../log";
import { resetWorkspace, workspaceOwner, worktreeStamp } from "./workspace";

/** At most this many worktrees are remembered; past it the oldest is forgotten (its next step resets it, as before). */
export const REMEMBERED_WORKTREES = 4096;

export class CleanWorktrees {
  /** Worktrees left clean, by path, oldest first: the commit they were reset to and their stamp then. */
  private readonly left = new Map<string, { commit: string; stamp: string }>();

  constructor(private readonly capacity = REMEMBERED_WORKTREES) {}

  /**
   * Puts the worktree back at `commit` (resetWorkspace) as a step of attempt `owner` ends, when
   * that attempt still holds it (another one's work is never touched), and remembers it clean.
   * Only after every process of the step has ended. A reset that fails is logged, not thrown:
   * the step's work is done, and the next step resets at its start.
   */
  async leave(workspacePath: string, commit: string, owner: string): Promise<void> {
    this.left.delete(workspacePath);
    if ((await workspaceOwner(workspacePath)) !== owner) return;
    try {
      await resetWorkspace(workspacePath, commit);
    } catch (err) {
      logger.warn({ workspacePath, err: String(err) }, "could not reset the worktree as its step ended; the next step resets it");
      return;
    }
    const stamp = worktreeStamp(workspacePath);
    if (!stamp) return;
    this.left.set(workspacePath, { commit, stamp });
    // A session's last step is never followed by another: its worktree is forgotten in turn.
    if (this.left.size > this.capacity) this.left.delete(this.left.keys().next().value!);
  }

  /**
   * Whether the worktree is still as this runner left it (leave) at `commit`. Asked before a
   * step claims it, once: it is forgotten either way, since the step about to run may change it.
   */
  untouched(workspacePath: string, commit: string): boolean {
    const left = this.left.get(workspacePath);
    this.left.delete(workspacePath);
    return left !== undefined && left.commit === commit && worktreeStamp(workspacePath) === left.stamp;
  }
}
