// Timelines: one compact line per event (type, actor, one-line summary), read from the
// event log itself without the payload column, so timelines stay fast however large the
// outputs get. Includes what a fork inherited from its ancestors.
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import { actorLabel, type Actor } from "./catalog";
import { LINEAGE_CTE } from "./lineage";

export interface TimelineEntry {
  streamId: string;
  version: number;
  position: number;
  type: string;
  actor: string;
  summary: string;
  recordedAt: string;
}

export async function readTimeline(
  db: Queryable,
  streamId: string,
  options: { afterVersion?: number; limit?: number } = {},
): Promise<TimelineEntry[]> {
  const rows = await db.query<{
    stream_id: string;
    version: number;
    position: string;
    type: string;
    actor: Actor;
    summary: string;
    recorded_at: Date;
  }>({
    name: "catcafe_read_timeline",
    // The page is taken from each lineage member separately (an index range scan that
    // stops after $3 rows), then merged: a page costs the same at any depth of a long stream.
    text: `WITH RECURSIVE ${LINEAGE_CTE}
           SELECT p.* FROM lineage l CROSS JOIN LATERAL (
             SELECT e.stream_id, e.version, e.position, e.type, e.metadata->'actor' AS actor, e.summary, e.recorded_at
             FROM events e
             WHERE e.stream_id = l.id AND (l.cap IS NULL OR e.version <= l.cap) AND e.version > $2
             ORDER BY e.version
             LIMIT $3) p
           ORDER BY p.version
           LIMIT $3`,
    values: [streamId, options.afterVersion ?? 0, options.limit ?? 100],
  });
  return rows.rows.map((r) => ({
    streamId: r.stream_id,
    version: r.version,
    position: Number(r.position),
    type: r.type,
    actor: actorLabel(r.actor),
    summary: r.summary,
    recordedAt: r.recorded_at.toISOString(),
  }));
}

/** A session's timeline, or NOT_FOUND when there is no such session (an empty timeline is a real one). */
export async function readSessionTimeline(
  db: Queryable,
  sessionId: string,
  options: { afterVersion?: number; limit?: number } = {},
): Promise<TimelineEntry[]> {
  const stream = await db.query("SELECT 1 FROM streams WHERE id = $1", [sessionId]);
  if (stream.rowCount === 0) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  return readTimeline(db, sessionId, options);
}
