// `npm run projections:rebuild`: rebuilds every projection table from the event log and
// reports which tables came out different from what was there before (a non-empty list
// means a projection had drifted or its handler changed). Stdout is only the JSON result;
// progress goes to stderr.
import { createPool } from "../server/db/pool";
import { openLocalDatabase } from "../server/db/local";
import { createAppEventStore } from "../server/app-store";
import { rebuildAndCompare } from "../server/events/rebuild";

const say = (line: string) => console.error(`[rebuild] ${line}`);

const db = await openLocalDatabase(say);
const pool = createPool(db.url, 2);
try {
  const store = createAppEventStore(pool);
  say("rebuilding projections from the event log");
  // The comparison is the rebuild's own, taken under its lock (server/events/rebuild.ts).
  const { events, tables, changedTables } = await rebuildAndCompare(store);
  console.log(JSON.stringify({ events, tables, changedTables }));
} catch (err) {
  const message = (err as Error).message;
  const hint = /relation .* does not exist/.test(message) ? " (run `npm run db:migrate` first)" : "";
  console.error(`[rebuild] failed: ${message}${hint}`);
  process.exitCode = 1;
} finally {
  await pool.end();
  await db.stop();
}
