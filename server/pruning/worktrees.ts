// Where each session's worktrees live (docs/operations.md, "Worktrees on every host"): a runner
// that creates one records WorktreePlaced, its host and path (runner/worktree-placement.ts); a host's
// clean-up pass (./host-gc.ts) records WorktreeRemoved, a clean-up step (./steps.ts) SessionPruned
// with its host. The live ones are those placed and not
// removed since, as `catcafe session show` and the session page list them: on the host that has
// them, not on the host that asks.
import type { AppEvent } from "../events/catalog";
import type { RecordedEvent } from "../events/types";

export interface LiveWorktree {
  host: string;
  path: string;
  /** When it was created (its WorktreePlaced). */
  placedAt: string;
}

const keyOf = (host: string, path: string) => `${host}\u0000${path}`;

/** The session's own worktrees not removed since they were placed, oldest first (a fork's parent's are not its own). */
export function liveWorktrees(sessionId: string, events: readonly RecordedEvent[]): LiveWorktree[] {
  const live = new Map<string, LiveWorktree>();
  for (const e of events as (RecordedEvent & AppEvent)[]) {
    if (e.streamId !== sessionId) continue;
    if (e.type === "WorktreePlaced")
      live.set(keyOf(e.data.host, e.data.path), { host: e.data.host, path: e.data.path, placedAt: e.recordedAt });
    else if (e.type === "WorktreeRemoved") live.delete(keyOf(e.data.host, e.data.path));
    // The clean-up step removed the worktree of the host whose runner ran it.
    else if (e.type === "SessionPruned" && e.data.host && e.data.worktree) live.delete(keyOf(e.data.host, e.data.worktree));
  }
  return [...live.values()];
}
