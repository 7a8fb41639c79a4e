// `npm run restore -- <dir> [--force]`: a backup made by `npm run backup` into DATABASE_URL,
// or into the embedded PostgreSQL under .data/ (CATCAFE_DATA_DIR; a new data directory is
// initialised). Refuses a damaged or changed backup (naming the file), one from a newer
// version, and a database that holds data unless --force (server/backup/restore-backup.ts).
// Stop Cat Cafe before restoring into its database: nothing may write while it is replaced.
import { openLocalDatabase } from "../server/db/local";
import { restoreBackup } from "../server/backup/restore-backup";

const say = (line: string) => console.error(`[restore] ${line}`);
const args = process.argv.slice(2);
const dir = args.find((a) => !a.startsWith("-"));
const unknown = args.filter((a) => a.startsWith("-") && a !== "--force");

if (!dir || unknown.length) {
  console.error(`${unknown.length ? `unknown option ${unknown.join(", ")}; ` : ""}usage: npm run restore -- <backup directory> [--force]`);
  process.exit(2);
}
const db = await openLocalDatabase(say).catch((err: Error) => {
  say(`failed: ${err.message}`);
  process.exit(1);
});
try {
  say(db.embedded ? "restoring into the embedded PostgreSQL" : "restoring into DATABASE_URL");
  const result = await restoreBackup(db.url, dir, { force: args.includes("--force"), log: say });
  say(
    `done in ${result.durationMs} ms: ${result.manifest.events.count} events in ${result.manifest.events.streams.length} streams verified`,
  );
  console.log(
    JSON.stringify({
      events: result.manifest.events.count,
      migratedUp: result.migratedUp,
      changedProjections: result.changedProjections,
      durationMs: result.durationMs,
    }),
  );
} catch (err) {
  say(`failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.stop();
}
