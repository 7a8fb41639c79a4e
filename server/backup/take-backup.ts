// `npm run backup -- <dir>` (docs/operations.md, "Backup and restore"): every table of the
// database copied out with COPY ... TO STDOUT inside one REPEATABLE READ, READ ONLY
// transaction, so the files are one consistent moment of a running Cat Cafe (appends that
// commit meanwhile are simply not in it), plus manifest.json. Blobs (bundles, artifacts,
// outputs) are rows of `blobs`, so they are in it; workspaces are caches rebuilt from
// bundles and are not.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { AppError } from "../errors";
import { APP_VERSION } from "../version";
import { BACKUP_FORMAT, MANIFEST_FILE, type BackupManifest, type BackupTable } from "./manifest";
import { streamHashes } from "./stream-hashes";

/** The same text for the same values whatever the server's defaults: backup and restore both set these. */
export const COPY_SETTINGS = "SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD'; SET LOCAL IntervalStyle = 'postgres'";

/** Recorded as the migration level, not copied: a restore makes it by migrating. */
export const MIGRATIONS_TABLE = "_prisma_migrations";

export interface BackupResult {
  dir: string;
  manifest: BackupManifest;
}

export async function takeBackup(databaseUrl: string, dir: string, log: (line: string) => void = () => {}): Promise<BackupResult> {
  const target = path.resolve(dir);
  if (fs.existsSync(target) && fs.readdirSync(target).length > 0) {
    throw new AppError("PRECONDITION_FAILED", `${target} is not empty: back up into a new or empty directory`);
  }
  fs.mkdirSync(path.join(target, "tables"), { recursive: true, mode: 0o700 });
  const startedAt = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "catcafe-backup" });
  await client.connect();
  try {
    // One snapshot for every table; READ ONLY so it can never write. Runners and the web
    // server go on working: a reader blocks no writer in PostgreSQL.
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
    await client.query(COPY_SETTINGS);
    const migrations = await client.query<{ name: string; checksum: string }>(
      `SELECT migration_name AS name, checksum FROM "${MIGRATIONS_TABLE}"
       WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
    );
    if (migrations.rowCount === 0) throw new AppError("PRECONDITION_FAILED", "the database has no migrations applied: nothing to back up");
    const tables: BackupTable[] = [];
    for (const { name, columns } of await listTables(client)) {
      const table = await copyTable(client, target, name, columns);
      log(`${name}: ${table.rows} rows, ${table.bytes} bytes`);
      tables.push(table);
    }
    const streams = await streamHashes(client);
    const version = await client.query<{ server_version: string }>("SHOW server_version");
    await client.query("COMMIT");
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      appVersion: APP_VERSION,
      createdAt: new Date().toISOString(),
      postgresVersion: version.rows[0]!.server_version,
      migrations: migrations.rows,
      tables,
      events: { count: streams.reduce((n, s) => n + s.events, 0), streams },
      durationMs: Math.round(performance.now() - startedAt),
    };
    fs.writeFileSync(path.join(target, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
    return { dir: target, manifest };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

/** Every table of the current schema but the migrations' (columns in order, generated ones left out). */
async function listTables(db: pg.Client): Promise<{ name: string; columns: string[] }[]> {
  const rows = await db.query<{ name: string; columns: string[] }>(
    `SELECT c.relname AS name, array_agg(a.attname::text ORDER BY a.attnum) AS columns
     FROM pg_class c
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> $1
     GROUP BY c.relname ORDER BY c.relname`,
    [MIGRATIONS_TABLE],
  );
  return rows.rows;
}

export function columnList(columns: readonly string[]): string {
  return columns.map((c) => `"${c.replaceAll('"', '""')}"`).join(", ");
}

async function copyTable(db: pg.Client, dir: string, name: string, columns: string[]): Promise<BackupTable> {
  const file = `tables/${name}.copy.gz`;
  const hash = crypto.createHash("sha256");
  let bytes = 0;
  let rows = 0;
  // COPY's text format ends every row with a newline and escapes the ones inside values.
  const countRows = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
      done(null, chunk);
    },
  });
  const hashFile = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(
    db.query(copyTo(`COPY "${name}" (${columnList(columns)}) TO STDOUT`)),
    countRows,
    // Level 1: blobs are mostly git bundles (already compressed) in hex; speed matters more.
    zlib.createGzip({ level: 1 }),
    hashFile,
    fs.createWriteStream(path.join(dir, file), { mode: 0o600 }),
  );
  return { name, columns, rows, file, bytes, sha256: hash.digest("hex") };
}
