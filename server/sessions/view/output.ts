// A large output opened in the session view (req E7): the text of a blob that one of the
// session's own events references (an agent's raw output or a commit's diff, inherited
// ones included), read only up to a size cap. A hash that the session does not reference
// is "not found" whether or not the blob exists, so a viewer of one session cannot fish
// for another's outputs.
import type { Queryable } from "../../db/pool";
import { AppError } from "../../errors";
import { LINEAGE_CTE } from "../../events/lineage";

export const OUTPUT_DEFAULT_BYTES = 512 * 1024;
export const OUTPUT_MAX_BYTES = 4 * 1024 * 1024;

export interface SessionOutput {
  blob: string;
  mediaType: string;
  /** Full size in bytes. */
  size: number;
  /** The first `maxBytes` bytes as text. */
  text: string;
  truncated: boolean;
}

export async function readSessionOutput(
  db: Queryable,
  sessionId: string,
  blob: string,
  maxBytes = OUTPUT_DEFAULT_BYTES,
): Promise<SessionOutput> {
  const cap = Math.max(1, Math.min(maxBytes, OUTPUT_MAX_BYTES));
  const r = await db.query<{ size: number; media_type: string; head: Buffer }>({
    name: "catcafe_session_output",
    text: `WITH RECURSIVE ${LINEAGE_CTE}
           SELECT b.size, b.media_type, substring(b.content FROM 1 FOR $3) AS head
           FROM blobs b
           WHERE b.hash = $2 AND EXISTS (
             SELECT 1 FROM lineage l CROSS JOIN LATERAL (
               SELECT 1 FROM events e
               WHERE e.stream_id = l.id AND (l.cap IS NULL OR e.version <= l.cap)
                 AND e.type IN ('AgentOutputRecorded', 'WorkspaceCommitted')
                 AND (e.data->'raw'->>'blob' = $2 OR e.data->'diff'->>'blob' = $2)
               LIMIT 1) found)`,
    values: [sessionId, blob, cap],
  });
  const row = r.rows[0];
  if (!row) throw new AppError("NOT_FOUND", `session ${sessionId} has no output ${blob}`);
  const truncated = row.size > row.head.length;
  // A cut may split a UTF-8 sequence: the decoder replaces the broken tail, never throws.
  return { blob, mediaType: row.media_type, size: row.size, text: new TextDecoder("utf-8").decode(row.head), truncated };
}
