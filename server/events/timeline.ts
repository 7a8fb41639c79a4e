// Timelines: one compact line per event (type, actor, one-line summary), read from the
// event log itself without the payload column, so timelines stay fast however large the
// outputs get. Includes what a fork inherited from its ancestors.
import type { Queryable } from "../db/pool";
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
  const rows = await db.query<{ stream_id: string; version: number; position: string; type: string; actor: Actor; summary: string; recorded_at: Date }>({
    name: "catcafe_read_timeline",
    text: `WITH RECURSIVE ${LINEAGE_CTE}
           SELECT e.stream_id, e.version, e.position, e.type, e.metadata->'actor' AS actor, e.summary, e.recorded_at
           FROM lineage l JOIN events e ON e.stream_id = l.id AND (l.cap IS NULL OR e.version <= l.cap)
           WHERE e.version > $2
           ORDER BY e.version
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
