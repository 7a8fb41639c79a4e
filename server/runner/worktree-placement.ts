// Where a runner creates a session's worktree, recorded (docs/operations.md, "Worktrees on every
// host"): the runner's host and the path, as WorktreePlaced in the session's stream. Read by
// pruning/worktrees.ts (the live ones, for `session show` and the page) and pruning/host-gc.ts
// (each host's own clean-up).
import os from "node:os";
import type { EventStore } from "../events/store";
import { appendWhileHeld } from "./dispatch";

/** The host a runner process records, its worktrees and its row alike: CATCAFE_RUNNER_HOST or the hostname. */
export function runnerHost(configured?: string): string {
  return configured ?? os.hostname();
}

/**
 * Records that the step's runner created the session's worktree at `path` on `host`; nothing when
 * the attempt no longer holds its step (a later attempt records its own).
 */
export async function recordWorktreePlaced(
  store: EventStore,
  step: { id: string; attempt: number; sessionId: string },
  host: string,
  path: string,
): Promise<void> {
  await appendWhileHeld(store, step, [{ type: "WorktreePlaced", data: { stepId: step.id, host, path } }], {
    actor: { kind: "system", id: "workspaces" },
  });
}
