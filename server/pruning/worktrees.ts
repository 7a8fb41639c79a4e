// Where each session's worktrees live (docs/operations.md, "Worktrees on every host"): a runner
// that creates one records WorktreePlaced (its host and path) in the session's stream; a host's
// clean-up pass (./host-gc.ts) records WorktreeRemoved. The live ones are those placed and not
// removed since, as `catcafe session show` and the session page list them: on the host that has
// them, not on the host that asks.
import os from "node:os";
import type { AppEvent } from "../events/catalog";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import { appendWhileHeld } from "../runner/dispatch";

export interface LiveWorktree {
  host: string;
  path: string;
  /** When it was created (its WorktreePlaced). */
  placedAt: string;
}

/** The host a runner process records, its worktrees and its row alike: CATCAFE_RUNNER_HOST or the hostname. */
export function runnerHost(configured?: string): string {
  return configured ?? os.hostname();
}

const keyOf = (host: string, path: string) => `${host}\u0000${path}`;

/** The session's own worktrees not removed since they were placed, oldest first (a fork's parent's are not its own). */
export function liveWorktrees(sessionId: string, events: readonly RecordedEvent[]): LiveWorktree[] {
  const live = new Map<string, LiveWorktree>();
  for (const e of events as (RecordedEvent & AppEvent)[]) {
    if (e.streamId !== sessionId) continue;
    if (e.type === "WorktreePlaced") live.set(keyOf(e.data.host, e.data.path), { host: e.data.host, path: e.data.path, placedAt: e.recordedAt });
    else if (e.type === "WorktreeRemoved") live.delete(keyOf(e.data.host, e.data.path));
  }
  return [...live.values()];
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
