// Where a session's bundles are found (docs/scaling.md#bundles): the WorkspaceCommitted
// events of the session and of its fork ancestors up to each fork's position (a fork's first
// bundle is made since the commit it started from, which the parent's chain continues). One
// function for every caller that restores a commit on a clone that lacks it (the runner's
// workspace, delivery, compare, modify); server/workspaces/bundles.ts walks the chain.
import { z } from "zod";
import type { Queryable } from "../db/pool";
import { AppError, isAppError } from "../errors";
import { getBlob } from "./blobs";
import { LINEAGE_CTE } from "./lineage";

/** The bundle recorded for a commit (the shape server/workspaces/bundles.ts walks). */
export interface RecordedBundle {
  /** The bundle's prerequisite; null for a bundle of every commit since the base (recorded before bundles were incremental). */
  since: string | null;
  load(): Promise<Buffer>;
}

export interface SessionBundles {
  sessionId: string;
  bundleOf(commit: string): Promise<RecordedBundle | null>;
}

/** Each lineage member's WorkspaceCommitted events up to the version its descendant inherits, through the (stream_id, version) index. */
const BUNDLES_SQL = `WITH RECURSIVE ${LINEAGE_CTE}
  SELECT e.data->>'commit' AS commit, e.data->'bundle'->>'blob' AS blob, e.data->>'bundleSince' AS since
  FROM lineage l CROSS JOIN LATERAL (
    SELECT version, data FROM events
    WHERE stream_id = l.id AND type = 'WorkspaceCommitted' AND version <= COALESCE(l.cap, version)
    OFFSET 0
  ) e
  WHERE e.data ? 'bundle'
  ORDER BY e.version`;

const ZBundleRow = z.object({
  commit: z.string().regex(/^[0-9a-f]{40}$/),
  blob: z.string().regex(/^[0-9a-f]{64}$/),
  since: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .nullable(),
});

/**
 * The bundles `sessionId` recorded, its fork ancestors' included, by the commit each holds;
 * read once, on the first lookup (a clone that has the commit never asks).
 */
export function sessionBundles(db: Queryable, sessionId: string): SessionBundles {
  let recorded: Promise<Map<string, z.infer<typeof ZBundleRow>>> | null = null;
  const read = async () => {
    const r = await db.query(BUNDLES_SQL, [sessionId]);
    // The latest record of a commit wins.
    return new Map(r.rows.map((row) => ZBundleRow.parse(row)).map((row) => [row.commit, row]));
  };
  return {
    sessionId,
    async bundleOf(commit) {
      recorded ??= read();
      const row = (await recorded).get(commit);
      if (!row) return null;
      return {
        since: row.since,
        load: async () => {
          try {
            return (await getBlob(db, row.blob)).content;
          } catch (err) {
            if (!isAppError(err, "NOT_FOUND")) throw err;
            throw new AppError(
              "NOT_FOUND",
              `the bundle of commit ${commit} of session ${sessionId} is gone (blob ${row.blob}): the commit cannot be restored on this clone`,
              { commit, missingCommit: commit, sessionId, blob: row.blob },
            );
          }
        },
      };
    },
  };
}
