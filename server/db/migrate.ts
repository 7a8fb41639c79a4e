// Applies the committed SQL migrations under prisma/migrations/<timestamp>_<name>/ and
// records them in Prisma's own `_prisma_migrations` table (same columns, same sha256
// checksums), so `prisma migrate deploy` on a machine with the engine agrees with us.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, "../../prisma/migrations");
/** The advisory lock key Prisma Migrate itself uses, so the two never run at once. */
const PRISMA_MIGRATE_LOCK = 72707369;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: crypto.createHash("sha256").update(sql).digest("hex") };
    });
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

export interface MigrateOptions {
  /** The migrations to apply (a test applies a past release's subset, test/helpers/upgrade-fixture.ts). */
  dir?: string;
  /** Stop after this migration (a restore first brings an empty database to its backup's level). */
  upTo?: string;
}

export async function migrate(
  databaseUrl: string,
  log: (line: string) => void = () => {},
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const all = listMigrations(options.dir ?? MIGRATIONS_DIR);
  const stop = options.upTo === undefined ? all.length : all.findIndex((m) => m.name === options.upTo) + 1;
  if (options.upTo !== undefined && stop === 0) throw new Error(`migration ${options.upTo} is not one of this version's migrations`);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const byName = new Map(done.rows.map((r) => [r.migration_name, r]));
    const result: MigrateResult = { applied: [], alreadyApplied: 0 };
    for (const m of all.slice(0, stop)) {
      const prior = byName.get(m.name);
      if (prior?.finished_at) {
        if (prior.checksum !== m.checksum) {
          throw new Error(`migration ${m.name} was changed after it was applied (checksum differs); add a new migration instead`);
        }
        result.alreadyApplied++;
        continue;
      }
      if (prior) {
        throw new Error(
          `migration ${m.name} failed earlier and is marked unfinished in _prisma_migrations; fix the database, then delete that row`,
        );
      }
      const id = crypto.randomUUID();
      await client.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ($1, $2, $3)`, [id, m.checksum, m.name]);
      try {
        await client.query("BEGIN");
        await client.query(m.sql);
        await client.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        await client.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [id, String((err as Error).message)]);
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      log(`migrations: applied ${m.name}`);
      result.applied.push(m.name);
    }
    return result;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK]).catch(() => {});
    await client.end();
  }
}
