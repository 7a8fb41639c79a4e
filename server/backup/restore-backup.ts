// `npm run restore -- <dir> [--force]` (docs/operations.md, "Backup and restore"): checks
// every file against the manifest before touching the database, brings the target to the
// backup's migration level, copies every table in with COPY ... FROM STDIN in foreign-key
// order inside one transaction (with the tables' own triggers held off: the rows already
// are the projections those triggers would write), resets the sequences, verifies the row
// counts and the events' per-stream hashes before committing, then migrates up to this
// version and rebuilds the projections from the restored events.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { createAppEventStore } from "../app-store";
import { createPool } from "../db/pool";
import { listMigrations, migrate } from "../db/migrate";
import { AppError } from "../errors";
import { rebuildAndCompare } from "../events/rebuild";
import { APP_VERSION } from "../version";
import { MANIFEST_FILE, ZBackupManifest, type BackupManifest, type BackupTable } from "./manifest";
import { differingStreams, streamHashes } from "./stream-hashes";
import { columnList, COPY_SETTINGS, MIGRATIONS_TABLE } from "./take-backup";

export interface RestoreOptions {
  /** Replace what the target database holds (refused without it when it holds any row). */
  force?: boolean;
  log?: (line: string) => void;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Migrations applied after the copy: the backup came from an older version. */
  migratedUp: string[];
  /** Projection tables the rebuild from the restored events changed (empty: they were already equal). */
  changedProjections: string[];
  durationMs: number;
}

/** The manifest of `dir`, after checking that every file it names is there, whole and unchanged. */
export async function readBackup(dir: string): Promise<BackupManifest> {
  const manifestPath = path.join(dir, MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  } catch (err) {
    throw new AppError("INVALID_INPUT", `${manifestPath} cannot be read as a backup manifest: ${(err as Error).message}`);
  }
  const parsed = ZBackupManifest.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("INVALID_INPUT", `${manifestPath} is not a Cat Cafe backup manifest: ${issue.path.join(".")}: ${issue.message}`);
  }
  for (const table of parsed.data.tables) await checkFile(dir, table);
  return parsed.data;
}

async function checkFile(dir: string, table: BackupTable): Promise<void> {
  const file = path.join(dir, table.file);
  const refuse = (why: string) =>
    new AppError("INVALID_INPUT", `backup file ${table.file} ${why}: the backup is damaged or was changed; nothing was restored`, {
      file: table.file,
    });
  if (!fs.existsSync(file)) throw refuse("is missing");
  const hash = crypto.createHash("sha256");
  await pipeline(fs.createReadStream(file), hash);
  if (fs.statSync(file).size !== table.bytes) throw refuse(`has ${fs.statSync(file).size} bytes, the manifest says ${table.bytes}`);
  if (hash.digest("hex") !== table.sha256) throw refuse("does not match the manifest's sha256");
}

/** Refuses a backup this code cannot take: from a newer version, or with migrations that differ from ours. */
export function checkMigrationLevel(manifest: BackupManifest): void {
  const ours = listMigrations();
  for (const [i, theirs] of manifest.migrations.entries()) {
    const mine = ours[i];
    if (mine?.name === theirs.name && mine.checksum === theirs.checksum) continue;
    if (!ours.some((m) => m.name === theirs.name)) {
      throw new AppError(
        "PRECONDITION_FAILED",
        `the backup was made by a newer Cat Cafe (version ${manifest.appVersion}; its migration ${theirs.name} is unknown to this version ${APP_VERSION}): restore it with that version or a later one`,
      );
    }
    throw new AppError(
      "PRECONDITION_FAILED",
      `the backup's migration ${theirs.name} differs from this version's (${mine?.name === theirs.name ? "its SQL changed" : "another order"}): not restoring`,
    );
  }
}

export async function restoreBackup(databaseUrl: string, dir: string, options: RestoreOptions = {}): Promise<RestoreResult> {
  const log = options.log ?? (() => {});
  const startedAt = performance.now();
  const manifest = await readBackup(path.resolve(dir));
  log(
    `backup of ${manifest.createdAt} (version ${manifest.appVersion}): ${manifest.tables.length} tables, ${manifest.events.count} events`,
  );
  checkMigrationLevel(manifest);
  const level = manifest.migrations.at(-1)!.name;

  const holding = await rowsHeld(databaseUrl, manifest);
  if (holding.newerMigrations.length > 0) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `the target database is at a later migration (${holding.newerMigrations.at(-1)}) than the backup (${level}): restore into a new database (an empty data directory, or CREATE DATABASE)`,
    );
  }
  if (holding.tables.length > 0 && !options.force) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `the target database is not empty (rows in ${holding.tables.join(", ")}): restore into an empty database, or pass --force to replace what it holds`,
    );
  }

  await migrate(databaseUrl, log, { upTo: level });
  await copyIn(databaseUrl, dir, manifest, log);
  await advanceTransactionIds(databaseUrl, log);
  const up = await migrate(databaseUrl, log);
  if (up.applied.length) log(`migrated up from the backup's level: ${up.applied.join(", ")}`);

  const pool = createPool(databaseUrl, 2);
  try {
    const { changedTables } = await rebuildAndCompare(createAppEventStore(pool));
    if (changedTables.length) log(`projections rebuilt from the restored events; changed: ${changedTables.join(", ")}`);
    return { manifest, migratedUp: up.applied, changedProjections: changedTables, durationMs: Math.round(performance.now() - startedAt) };
  } finally {
    await pool.end();
  }
}

/** Rows the migrations themselves write (prisma/migrations/*_users_and_tokens): a migrated database holding only these is empty. */
const SEEDED_BY_MIGRATIONS: Record<string, string> = { teams: `id = 'default'` };

/** What the target holds: the tables with rows of their own, and migrations it has that the backup has not. */
async function rowsHeld(databaseUrl: string, manifest: BackupManifest): Promise<{ tables: string[]; newerMigrations: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "catcafe-restore" });
  await client.connect();
  try {
    const names = await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class
       WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND relname <> $1 ORDER BY relname`,
      [MIGRATIONS_TABLE],
    );
    const tables: string[] = [];
    for (const { name } of names.rows) {
      const seeded = SEEDED_BY_MIGRATIONS[name];
      const any = await client.query(`SELECT 1 FROM "${name}" ${seeded ? `WHERE NOT (${seeded})` : ""} LIMIT 1`);
      if (any.rowCount) tables.push(name);
    }
    const known = new Set(manifest.migrations.map((m) => m.name));
    const applied = await client
      .query<{ name: string }>(
        `SELECT migration_name AS name FROM "${MIGRATIONS_TABLE}" WHERE rolled_back_at IS NULL ORDER BY migration_name`,
      )
      .catch(() => ({ rows: [] as { name: string }[] }));
    return { tables, newerMigrations: applied.rows.map((r) => r.name).filter((n) => !known.has(n)) };
  } finally {
    await client.end();
  }
}

async function copyIn(databaseUrl: string, dir: string, manifest: BackupManifest, log: (line: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "catcafe-restore" });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(COPY_SETTINGS);
    const names = manifest.tables.map((t) => t.name);
    const present = await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND relname <> $1`,
      [MIGRATIONS_TABLE],
    );
    const missing = names.filter((n) => !present.rows.some((r) => r.name === n));
    if (missing.length) throw new AppError("PRECONDITION_FAILED", `the target database lacks the backup's tables ${missing.join(", ")}`);

    // The tables' own triggers (the steps projection on events, the inbox's doorbell, the
    // append-only guard against TRUNCATE) are held off inside this transaction only: nobody
    // else ever sees them off. Foreign keys stay checked, hence the order below.
    const triggers = await client.query<{ table: string; trigger: string }>(
      `SELECT c.relname AS table, t.tgname AS trigger FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       WHERE NOT t.tgisinternal AND t.tgenabled <> 'D' AND c.relname = ANY($1) AND c.relnamespace = current_schema()::regnamespace`,
      [names],
    );
    for (const t of triggers.rows) await client.query(`ALTER TABLE "${t.table}" DISABLE TRIGGER "${t.trigger}"`);
    // What --force replaces, and the rows the migrations wrote (the default team): the backup has its own.
    await client.query(`TRUNCATE ${names.map((n) => `"${n}"`).join(", ")}`);

    for (const table of await dependencyOrder(client, manifest.tables)) {
      await pipeline(
        fs.createReadStream(path.join(dir, table.file)),
        zlib.createGunzip(),
        client.query(copyFrom(`COPY "${table.name}" (${columnList(table.columns)}) FROM STDIN`)),
      );
      log(`${table.name}: ${table.rows} rows`);
    }
    for (const t of triggers.rows) await client.query(`ALTER TABLE "${t.table}" ENABLE TRIGGER "${t.trigger}"`);
    await resetSequences(client);
    await verify(client, manifest);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

/** Beyond this many, advancing would take minutes (about 300,000 a second): warn instead. */
const MAX_TRANSACTION_IDS_TO_ADVANCE = 100_000_000;

/**
 * Events carry the id of the transaction that appended them (tx_id: the global read order,
 * and "appended together" for conversations). A new cluster counts transactions from a few
 * hundred, so the next appends would take ids the restored events already have, or lower
 * ones: commit empty transactions until the counter is past every restored tx_id.
 */
async function advanceTransactionIds(databaseUrl: string, log: (line: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "catcafe-restore" });
  await client.connect();
  try {
    const r = await client.query<{ gap: string }>(
      "SELECT (COALESCE(max(tx_id), 0) - (pg_current_xact_id()::text)::bigint + 1)::text AS gap FROM events",
    );
    const gap = Number(r.rows[0]!.gap);
    if (gap <= 0) return;
    if (gap > MAX_TRANSACTION_IDS_TO_ADVANCE) {
      log(
        `warning: the restored events' transaction ids are ${gap} ahead of this cluster's; new appends may share one with a restored event`,
      );
      return;
    }
    log(`advancing this cluster's transaction ids by ${gap}, past the restored events'`);
    await client.query("SET synchronous_commit = off");
    for (let left = gap; left > 0; left -= 1_000_000) {
      const n = Math.min(left, 1_000_000);
      await client.query(`DO $$ BEGIN FOR i IN 1..${n} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`);
    }
  } finally {
    await client.end();
  }
}

/** Referenced tables before the tables that reference them (a self-reference needs nothing first). */
async function dependencyOrder(db: pg.Client, tables: readonly BackupTable[]): Promise<BackupTable[]> {
  const edges = await db.query<{ child: string; parent: string }>(
    `SELECT ch.relname AS child, pa.relname AS parent FROM pg_constraint k
     JOIN pg_class ch ON ch.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid
     WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace AND ch.oid <> pa.oid`,
  );
  const ordered: BackupTable[] = [];
  const placed = new Set<string>();
  const visit = (table: BackupTable, path: string[]) => {
    if (placed.has(table.name)) return;
    if (path.includes(table.name)) throw new Error(`foreign keys form a cycle: ${[...path, table.name].join(" → ")}`);
    for (const e of edges.rows.filter((r) => r.child === table.name)) {
      const parent = tables.find((t) => t.name === e.parent);
      if (parent) visit(parent, [...path, table.name]);
    }
    placed.add(table.name);
    ordered.push(table);
  };
  for (const t of tables) visit(t, []);
  return ordered;
}

/** Each sequence owned by a column (events.position) continues after the highest restored value. */
async function resetSequences(db: pg.Client): Promise<void> {
  const owned = await db.query<{ seq: string; table: string; column: string }>(
    `SELECT s.relname AS seq, t.relname AS table, a.attname AS column
     FROM pg_class s
     JOIN pg_depend d ON d.objid = s.oid AND d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
     JOIN pg_class t ON t.oid = d.refobjid
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
     WHERE s.relkind = 'S' AND s.relnamespace = current_schema()::regnamespace`,
  );
  for (const o of owned.rows) {
    await db.query(`SELECT setval('"${o.seq}"', COALESCE((SELECT max("${o.column}") FROM "${o.table}"), 0) + 1, false)`);
  }
}

/** The restored rows against the manifest: every table's count, every stream's events and hash. */
async function verify(db: pg.Client, manifest: BackupManifest): Promise<void> {
  for (const table of manifest.tables) {
    const r = await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${table.name}"`);
    const n = Number(r.rows[0]!.n);
    if (n !== table.rows)
      throw new AppError("INTERNAL", `restored ${n} rows into ${table.name}, the manifest says ${table.rows}; rolled back`);
  }
  const differing = differingStreams(manifest.events.streams, await streamHashes(db));
  if (differing.length) {
    throw new AppError(
      "INTERNAL",
      `the restored events of ${differing.length} stream(s) differ from the manifest (${differing.slice(0, 5).join(", ")}); rolled back`,
    );
  }
}
