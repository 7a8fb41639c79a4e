// `npm run db:migrate`: applies the committed migrations to DATABASE_URL, or to the
// embedded PostgreSQL under .data/ when DATABASE_URL is not set, lists what it applied, and
// makes sure someone can sign in (ADMIN_EMAIL / ADMIN_PASSWORD, or a one-time setup link).
import { bootstrapAccess } from "../server/auth/bootstrap";
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
  // The first admin (ADMIN_EMAIL / ADMIN_PASSWORD) or a one-time setup link: the Docker web
  // container runs this before `next start`, so its first user can get in as with `npm start`.
  const access = await bootstrapAccess(db.url, process.env.NEXTAUTH_URL ?? `http://localhost:${process.env.PORT ?? 3000}`);
  if (access.kind === "admin") say(`admin ${access.email} ${access.created ? "created" : "updated"}`);
  if (access.kind === "setup") say(`no users yet: create the first admin at ${access.url} (valid until ${access.expiresAt.toISOString()})`);
} catch (err) {
  console.error(`[migrate] failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.stop();
}
