// Rebuilds every inline projection from the event log with the same handlers that
// maintain them live. Appends wait while it runs (the streams table is locked), reads don't.
// `rebuildAndCompare` (`catcafe projections rebuild`, `npm run projections:rebuild`, req E4)
// also reports the tables whose rows came out different from before (a drifted projection,
// or a changed handler): both snapshots are taken under the same lock as the rebuild, or an
// append committed between "before" and the lock (every busy runner's) would read as a change.
import { withTransaction, type Queryable, type Tx } from "../db/pool";
import { EVENT_COLUMNS, type EventRow, type EventStore } from "./store";

export interface RebuildResult {
  events: number;
  tables: string[];
}

export async function rebuildProjections(store: EventStore, batchSize = 2000): Promise<RebuildResult> {
  return withTransaction(store.pool, async (tx) => {
    await lockAppends(tx);
    return rebuildLocked(tx, store, batchSize);
  });
}

/**
 * Every append writes its stream's row first (EventStore.appendInTx, the runner's claim), so
 * this lock waits for the appends in flight to commit and holds new ones until the caller's
 * transaction ends; reads go on.
 */
async function lockAppends(tx: Tx): Promise<void> {
  await tx.query("LOCK TABLE streams IN EXCLUSIVE MODE");
}

/** The rebuild itself, inside a transaction that holds lockAppends. */
async function rebuildLocked(tx: Tx, store: EventStore, batchSize: number): Promise<RebuildResult> {
  const tables = store.projections.flatMap((p) => p.tables);
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
    const batch = await tx.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`, [
      after,
      batchSize,
    ]);
    if (batch.rowCount === 0) break;
    const events = batch.rows.map((r) => store.toRecorded(r));
    for (const projection of store.projections) await projection.apply(tx, events, "rebuild");
    after = events.at(-1)!.position;
    total += events.length;
  }
  for (const k of kept) {
    const set = k.columns.map((c) => `"${c}" = k."${c}"`).join(", ");
    await tx.query(`UPDATE "${k.table}" t SET ${set} FROM "${k.copy}" k WHERE t.id = k.id`);
  }
  return { events: total, tables };
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

export async function rebuildAndCompare(store: EventStore, batchSize = 2000): Promise<ProjectionRebuildReport> {
  const startedAt = performance.now();
  const { result, before, after } = await withTransaction(store.pool, async (tx) => {
    await lockAppends(tx);
    // Read committed: each snapshot sees every append committed before it, and none can commit
    // while the lock is held, so "before" and "after" differ only by what the rebuild changed.
    const before = await snapshotProjections(tx, store);
    const result = await rebuildLocked(tx, store, batchSize);
    const after = await snapshotProjections(tx, store);
    return { result, before, after };
  });
  // Both snapshots hold every table of result.tables: the same projections' tables.
  const changedTables = result.tables.filter((t) => JSON.stringify(before[t]) !== JSON.stringify(after[t])).sort();
  return { events: result.events, tables: result.tables, changedTables, durationMs: Math.round(performance.now() - startedAt) };
}
