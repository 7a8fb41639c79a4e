// The events of cleaning up a finished, unsuccessful session's workspace (req F14; docs/operations.md,
// "Cleaning up failed sessions"): a person (or the automatic setting) asks for it, a runner removes
// the worktree and the git refs that only the session needed, and records what it removed. In the
// session's stream; its other events and blobs stay, so replay, forks and export keep working.
import { z } from "zod";
import { defineEvent } from "./registry";

/** Why a workspace is cleaned up: a person asked for this session, or for every one older than a threshold. */
export const ZPruneReason = z.enum(["session", "older_than", "automatic"]);

/** Why a host removed its worktree of a session (docs/operations.md, "Worktrees on every host"). */
export const ZWorktreeRemovalReason = z.enum(["not_last_host", "finished", "pruned"]);

export const pruningCatalog = {
  WorktreePlaced: defineEvent({
    version: 1,
    schema: z.object({
      /** The step whose runner created the worktree. */
      stepId: z.uuid(),
      /** The runner's host (CATCAFE_RUNNER_HOST, its hostname by default). */
      host: z.string().min(1),
      path: z.string().min(1),
    }),
    summary: (d) => `Worktree created on ${d.host} at ${d.path}`,
  }),
  WorktreeRemoved: defineEvent({
    version: 1,
    schema: z.object({
      host: z.string().min(1),
      /** Where the session's worktree is (or was) on that host. */
      path: z.string().min(1),
      /** Whether a worktree was there to remove (false: only refs, or nothing, were left). */
      removed: z.boolean(),
      reason: ZWorktreeRemovalReason,
      /** The pins and local branch deleted from that host's clone. */
      refsDeleted: z.array(z.string()),
    }),
    summary: (d) =>
      `${d.removed ? `Worktree removed from ${d.host} (${d.path})` : `No worktree left on ${d.host}`}: ${
        d.reason === "not_last_host"
          ? "a later step ran on another host"
          : d.reason === "pruned"
            ? "the session was cleaned up"
            : "kept long enough after the session ended"
      }${d.refsDeleted.length ? `; ${d.refsDeleted.length} git ref${d.refsDeleted.length === 1 ? "" : "s"} deleted` : ""}`,
  }),
  WorkspacePruneRequested: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      reason: ZPruneReason,
      /** The threshold the session was older than (days since it ended), for a bulk or automatic clean-up. */
      olderThanDays: z.number().int().nonnegative().nullable(),
      /** The git refs to delete besides the worktree: the pins of the session's own commits, its branch. */
      refs: z.array(z.string().min(1)),
    }),
    summary: (d) =>
      `Workspace clean-up asked${d.olderThanDays !== null ? ` (ended more than ${d.olderThanDays} days ago${d.reason === "automatic" ? ", automatic" : ""})` : ""}`,
  }),
  SessionPruned: defineEvent({
    version: 1,
    schema: z.object({
      stepId: z.uuid(),
      /** Who asked (an actor label), as the request recorded it. */
      requestedBy: z.string().min(1),
      /** The worktree removed; null when there was none on the runner that cleaned up. */
      worktree: z.string().nullable(),
      /** That runner's host (absent: recorded before hosts were). */
      host: z.string().min(1).optional(),
      refsDeleted: z.array(z.string()),
    }),
    summary: (d) =>
      `Workspace cleaned up: ${d.worktree ? "worktree removed" : "no worktree left"}, ${d.refsDeleted.length} git ref${d.refsDeleted.length === 1 ? "" : "s"} deleted`,
  }),
  WorkspacePruneFailed: defineEvent({
    version: 1,
    schema: z.object({ stepId: z.uuid(), message: z.string() }),
    summary: (d) => `Workspace clean-up failed: ${d.message}`,
  }),
} as const;
