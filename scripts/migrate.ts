// `npm run db:migrate`: applies the committed migrations to DATABASE_URL, or to the
// embedded PostgreSQL under .data/ when DATABASE_URL is not set, and lists what it applied.
import { openLocalDatabase } from "../server/db/local";
import { migrate } from "../server/db/migrate";

const say = (line: string) => console.log(`[migrate] ${line}`);

const db = await openLocalDatabase(say);
try {
  say(db.embedded ? "using the embedded PostgreSQL" : "using DATABASE_URL");
  const result = await migrate(db.url, say);
  if (result.applied.length === 0) {
    say(`database is up to date (${result.alreadyApplied} migrations already applied)`);
  } else {
    say(`applied ${result.applied.length} migration(s): ${result.applied.join(", ")}`);
  }
} catch (err) {
  console.error(`[migrate] failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.stop();
}
