// Rebuilds every inline projection from the event log with the same handlers that
// maintain them live. Appends wait while it runs (the streams table is locked), reads don't.
// `rebuildAndCompare` (`catcafe projections rebuild`, req E4) also reports the tables whose
// rows came out different from before (a drifted projection, or a changed handler).
import { withTransaction, type Queryable } from "../db/pool";
import type { EventStore } from "./store";
import type { RecordedEvent } from "./types";

export interface RebuildResult {
  events: number;
  tables: string[];
}

export async function rebuildProjections(store: EventStore, batchSize = 2000): Promise<RebuildResult> {
  const tables = store.projections.flatMap((p) => p.tables);
  return withTransaction(store.pool, async (tx) => {
    await tx.query("LOCK TABLE streams IN EXCLUSIVE MODE");
    // Operational columns (a lease extended by heartbeat) are not in the events: keep their
    // live values across the rebuild, by row id, so that rebuilding while runners work
    // changes nothing they rely on.
    const kept = store.projections.flatMap((p) =>
      Object.entries(p.operationalColumns ?? {}).map(([table, columns]) => ({ table, columns, copy: `catcafe_keep_${table}` })),
    );
    for (const k of kept) {
      await tx.query(
        `CREATE TEMP TABLE "${k.copy}" ON COMMIT DROP AS SELECT id, ${k.columns.map((c) => `"${c}"`).join(", ")} FROM "${k.table}"`,
      );
    }
    if (tables.length) await tx.query(`TRUNCATE ${tables.map((t) => `"${t}"`).join(", ")}`);
    let after = 0;
    let total = 0;
    for (;;) {
      const batch = await tx.query<{
        position: string;
        tx_id: string;
        event_id: string;
        stream_id: string;
        version: number;
        type: string;
        data: unknown;
        metadata: RecordedEvent["metadata"];
        recorded_at: Date;
      }>(
        `SELECT position, tx_id, event_id, stream_id, version, type, data, metadata, recorded_at
         FROM events WHERE position > $1 ORDER BY position LIMIT $2`,
        [after, batchSize],
      );
      if (batch.rowCount === 0) break;
      const events: RecordedEvent[] = batch.rows.map((r) => ({
        position: Number(r.position),
        txId: Number(r.tx_id),
        eventId: r.event_id,
        streamId: r.stream_id,
        version: r.version,
        type: r.type,
        data: store.registry.decode(r.type, r.data, r.metadata.schemaVersion),
        metadata: r.metadata,
        recordedAt: r.recorded_at.toISOString(),
      }));
      for (const projection of store.projections) await projection.apply(tx, events, "rebuild");
      after = events.at(-1)!.position;
      total += events.length;
    }
    for (const k of kept) {
      const set = k.columns.map((c) => `"${c}" = k."${c}"`).join(", ");
      await tx.query(`UPDATE "${k.table}" t SET ${set} FROM "${k.copy}" k WHERE t.id = k.id`);
    }
    return { events: total, tables };
  });
}

/** Every projection row (minus operational columns) as JSON text, ordered: for equality checks. */
export async function snapshotProjections(db: Queryable, store: EventStore): Promise<Record<string, string[]>> {
  const snapshot: Record<string, string[]> = {};
  for (const projection of store.projections) {
    for (const table of projection.tables) {
      const skip = projection.operationalColumns?.[table] ?? [];
      const rows = await db.query<{ row: string }>(`SELECT (to_jsonb(t) - $1::text[])::text AS row FROM "${table}" t ORDER BY 1`, [skip]);
      snapshot[table] = rows.rows.map((r) => r.row);
    }
  }
  return snapshot;
}

export interface ProjectionRebuildReport {
  events: number;
  tables: string[];
  changedTables: string[];
  durationMs: number;
}

export async function rebuildAndCompare(store: EventStore): Promise<ProjectionRebuildReport> {
  const startedAt = performance.now();
  const before = await snapshotProjections(store.pool, store);
  const result = await rebuildProjections(store);
  const after = await snapshotProjections(store.pool, store);
  // Both snapshots hold every table of result.tables: the same projections' tables.
  const changedTables = result.tables.filter((t) => JSON.stringify(before[t]) !== JSON.stringify(after[t])).sort();
  return { events: result.events, tables: result.tables, changedTables, durationMs: Math.round(performance.now() - startedAt) };
}
