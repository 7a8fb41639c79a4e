// `catcafe projections rebuild` (req E4): every read model rebuilt from the event log, with
// the tables whose rows came out different from before (a drifted projection, or a handler
// that changed since the rows were written). Same work as `npm run projections:rebuild`,
// through the web process's event store.
import type { EventStore } from "../events/store";
import { rebuildProjections, snapshotProjections } from "../events/rebuild";

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
  const changedTables = result.tables.filter((t) => JSON.stringify(before[t] ?? []) !== JSON.stringify(after[t] ?? [])).sort();
  return { events: result.events, tables: result.tables, changedTables, durationMs: Math.round(performance.now() - startedAt) };
}
