// `npm run backup -- <dir>`: a consistent copy of the whole database into <dir> (new or
// empty), taken while Cat Cafe runs (server/backup/take-backup.ts). The database is
// DATABASE_URL, or the embedded PostgreSQL under .data/ (CATCAFE_DATA_DIR): the one `npm
// start` is running, or started here for the backup and stopped after it.
import { openLocalDatabase } from "../server/db/local";
import { takeBackup } from "../server/backup/take-backup";

const say = (line: string) => console.error(`[backup] ${line}`);
const dir = process.argv.slice(2).find((a) => !a.startsWith("-"));

if (!dir) {
  console.error("usage: npm run backup -- <directory>   (a new or empty directory)");
  process.exit(2);
}
const db = await openLocalDatabase(say, { shareRunning: true }).catch((err: Error) => {
  say(`failed: ${err.message}`);
  process.exit(1);
});
try {
  say(db.embedded ? "backing up the embedded PostgreSQL" : "backing up DATABASE_URL");
  const { dir: where, manifest } = await takeBackup(db.url, dir, say);
  say(`done in ${manifest.durationMs} ms: ${manifest.tables.length} tables, ${manifest.events.count} events, into ${where}`);
  console.log(JSON.stringify({ dir: where, events: manifest.events.count, durationMs: manifest.durationMs }));
} catch (err) {
  say(`failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.stop();
}
