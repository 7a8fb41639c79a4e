// Projection and reader for timelines: one compact row per event (type, actor, one-line
// summary), never the payload, so timelines stay fast however large outputs get.
import type { Queryable } from "../db/pool";
import type { EventRegistry } from "./registry";
import type { Projection } from "./projection";
import { actorLabel } from "./catalog";
import { LINEAGE_CTE } from "./lineage";

export function timelineProjection(registry: EventRegistry): Projection {
  return {
    name: "timeline",
    tables: ["timeline"],
    async apply(tx, events) {
      await tx.query({
        name: "catcafe_timeline_insert",
        text: `INSERT INTO timeline (stream_id, version, position, type, actor, summary, recorded_at)
               SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
        values: [
          events.map((e) => e.streamId),
          events.map((e) => e.version),
          events.map((e) => e.position),
          events.map((e) => e.type),
          events.map((e) => actorLabel(e.metadata.actor)),
          events.map((e) => registry.summarize(e.type, e.data)),
          events.map((e) => e.recordedAt),
        ],
      });
    },
  };
}

export interface TimelineEntry {
  streamId: string;
  version: number;
  position: number;
  type: string;
  actor: string;
  summary: string;
  recordedAt: string;
}

/** A page of a session's timeline, including what it inherited from fork ancestors. */
export async function readTimeline(
  db: Queryable,
  streamId: string,
  options: { afterVersion?: number; limit?: number } = {},
): Promise<TimelineEntry[]> {
  const rows = await db.query<{ stream_id: string; version: number; position: string; type: string; actor: string; summary: string; recorded_at: Date }>({
    name: "catcafe_read_timeline",
    text: `WITH RECURSIVE ${LINEAGE_CTE}
           SELECT t.stream_id, t.version, t.position, t.type, t.actor, t.summary, t.recorded_at
           FROM lineage l JOIN timeline t ON t.stream_id = l.id AND (l.cap IS NULL OR t.version <= l.cap)
           WHERE t.version > $2
           ORDER BY t.version
           LIMIT $3`,
    values: [streamId, options.afterVersion ?? 0, options.limit ?? 100],
  });
  return rows.rows.map((r) => ({
    streamId: r.stream_id,
    version: r.version,
    position: Number(r.position),
    type: r.type,
    actor: r.actor,
    summary: r.summary,
    recordedAt: r.recorded_at.toISOString(),
  }));
}
