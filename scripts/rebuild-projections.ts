// `npm run projections:rebuild`: rebuilds every projection table from the event log and
// reports which tables came out different from what was there before (a non-empty list
// means a projection had drifted or its handler changed). Stdout is only the JSON result;
// progress goes to stderr.
import { createPool } from "../server/db/pool";
import { openLocalDatabase } from "../server/db/local";
import { createAppEventStore } from "../server/app-store";
import { rebuildProjections, snapshotProjections } from "../server/events/rebuild";

const say = (line: string) => console.error(`[rebuild] ${line}`);

function changedTables(before: Record<string, string[]>, after: Record<string, string[]>): string[] {
  const tables = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...tables].filter((t) => JSON.stringify(before[t] ?? []) !== JSON.stringify(after[t] ?? [])).sort();
}

const db = await openLocalDatabase(say);
const pool = createPool(db.url, 2);
try {
  const store = createAppEventStore(pool);
  const before = await snapshotProjections(pool, store);
  say("rebuilding projections from the event log");
  const result = await rebuildProjections(store);
  const after = await snapshotProjections(pool, store);
  console.log(JSON.stringify({ events: result.events, tables: result.tables, changedTables: changedTables(before, after) }));
} catch (err) {
  const message = (err as Error).message;
  const hint = /relation .* does not exist/.test(message) ? " (run `npm run db:migrate` first)" : "";
  console.error(`[rebuild] failed: ${message}${hint}`);
  process.exitCode = 1;
} finally {
  await pool.end();
  await db.stop();
}
