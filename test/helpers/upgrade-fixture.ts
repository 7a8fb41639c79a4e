// The upgrade fixture (test/fixtures/upgrade/make-fixture.ts makes it): a database written by
// the previous release, table by table as CSV with its `_prisma_migrations`, and the bundle of
// the repository its sessions worked on. Loading it rebuilds that database at the previous
// release's migration level — its own recorded migrations, each taken from prisma/migrations
// and checked against the checksum it recorded — so the caller can run today's migrate over it.
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { z } from "zod";
import { listMigrations, migrate } from "../../server/db/migrate";

export const FIXTURE_MANIFEST = "manifest.json";
export const MIGRATIONS_TABLE = "_prisma_migrations";

/** The sessions of the fixture by the state they were left in. */
export const ZFixtureSessions = z.object({
  confirm: z.string(),
  interrupted: z.string(),
  approved: z.string(),
  failed: z.string(),
  forge: z.string(),
  conversation: z.string(),
  delivered: z.string(),
  fork: z.string(),
});

/** What the release's driver reports once its database holds every session. */
export const ZDriverReady = z.object({ url: z.string(), repo: z.string(), sessions: ZFixtureSessions });

export const ZFixtureManifest = z.object({
  /** The commit of the release whose code wrote the database. */
  release: z.string(),
  madeAt: z.string(),
  /** Where the project's repository was when the sessions ran (recorded in their step inputs). */
  repoPath: z.string(),
  sessions: ZFixtureSessions,
  tables: z.array(z.string()),
});
export type FixtureManifest = z.infer<typeof ZFixtureManifest>;

export interface LoadedFixture {
  manifest: FixtureManifest;
  url: string;
  /** The migrations the previous release had applied, in order. */
  oldMigrations: string[];
  /** The project's repository restored with every ref (branches, pins) as the release left it. */
  repo: string;
  /**
   * A clone with only `main`: a runner whose clone of the registered path (manifest.repoPath,
   * which the projects keep) is this one gets every session commit from the sessions' bundles.
   */
  mainOnlyClone: string;
}

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

function restoreRepository(bundle: string, dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  git(dir, "fetch", "-q", "--update-head-ok", bundle, "+refs/*:refs/*");
  git(dir, "reset", "-q", "--hard", "main");
  return dir;
}

async function copyTable(client: pg.Client, table: string, file: string): Promise<void> {
  const header = (fs.readFileSync(file, "utf8").split("\n", 1)[0] ?? "").split(",").map((c) => c.replace(/^"|"$/g, ""));
  const columns = header.map((c) => client.escapeIdentifier(c)).join(", ");
  await pipeline(
    fs.createReadStream(file),
    client.query(copyFrom(`COPY ${client.escapeIdentifier(table)} (${columns}) FROM STDIN WITH (FORMAT csv, HEADER true)`)),
  );
}

/** Applies the migrations the fixture recorded, from prisma/migrations, refusing one missing or changed. */
async function applyRecordedMigrations(client: pg.Client, release: string): Promise<string[]> {
  const recorded = await client.query<{ migration_name: string; checksum: string }>(
    `SELECT migration_name, checksum FROM "${MIGRATIONS_TABLE}" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  );
  const ours = new Map(listMigrations().map((m) => [m.name, m]));
  for (const { migration_name: name, checksum } of recorded.rows) {
    const m = ours.get(name);
    if (!m) throw new Error(`migration ${name}, applied by release ${release}, is missing from prisma/migrations`);
    if (m.checksum !== checksum) throw new Error(`migration ${name} differs from the one release ${release} applied (checksum)`);
    await client.query(m.sql);
  }
  return recorded.rows.map((r) => r.migration_name);
}

/** Sets every serial column's sequence past the largest value loaded. */
async function resetSequences(client: pg.Client): Promise<void> {
  const serials = await client.query<{ tbl: string; col: string; seq: string }>(
    `SELECT table_name AS tbl, column_name AS col, pg_get_serial_sequence(quote_ident(table_name), column_name) AS seq
       FROM information_schema.columns
      WHERE table_schema = 'public' AND pg_get_serial_sequence(quote_ident(table_name), column_name) IS NOT NULL`,
  );
  for (const { tbl, col, seq } of serials.rows)
    await client.query(
      `SELECT setval($1, COALESCE((SELECT max(${client.escapeIdentifier(col)}) FROM ${client.escapeIdentifier(tbl)}), 0) + 1, false)`,
      [seq],
    );
}

/**
 * Loads the fixture `archive` into a new database (on the server of `adminUrl`, named under
 * `urlBase`) at the previous release's migration level, and its repository under `workDir` (the projects keep
 * the path they were registered with, as an upgrade in place does).
 */
export async function loadUpgradeFixture(opts: {
  archive: string;
  adminUrl: string;
  urlBase: string;
  workDir: string;
}): Promise<LoadedFixture> {
  const unpacked = path.join(opts.workDir, "fixture");
  fs.mkdirSync(unpacked, { recursive: true });
  execFileSync("tar", ["-xzf", opts.archive, "-C", unpacked]);
  const manifest = ZFixtureManifest.parse(JSON.parse(fs.readFileSync(path.join(unpacked, FIXTURE_MANIFEST), "utf8")));

  const name = `upgrade_${crypto.randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: opts.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`).finally(() => admin.end());
  const url = `${opts.urlBase}${name}`;

  // Prisma's bookkeeping table (no migration applied), then the previous release's rows in it.
  const none = fs.mkdtempSync(path.join(opts.workDir, "no-migrations-"));
  await migrate(url, () => {}, { dir: none });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let oldMigrations: string[];
  try {
    const table = (t: string) => path.join(unpacked, "tables", `${t}.csv`);
    await copyTable(client, MIGRATIONS_TABLE, table(MIGRATIONS_TABLE));
    oldMigrations = await applyRecordedMigrations(client, manifest.release);
    await client.query("BEGIN");
    // Rows as they were, in any order: foreign keys and triggers (NOTIFY) are not checked.
    await client.query("SET LOCAL session_replication_role = replica");
    // The release's rows replace what its migrations seeded (the default team, ...).
    const data = manifest.tables.filter((t) => t !== MIGRATIONS_TABLE);
    await client.query(`TRUNCATE ${data.map((t) => client.escapeIdentifier(t)).join(", ")}`);
    for (const t of data) await copyTable(client, t, table(t));
    await resetSequences(client);
    await client.query("COMMIT");
  } finally {
    await client.end();
  }

  const bundle = path.join(unpacked, "repository.bundle");
  const repo = restoreRepository(bundle, path.join(opts.workDir, "project"));
  // A clone, not a fetch of the bundle: that would unpack every object the bundle holds.
  const mainOnlyClone = path.join(opts.workDir, "runner-clone");
  git(opts.workDir, "clone", "-q", "--no-local", "--single-branch", "--branch", "main", repo, mainOnlyClone);
  return { manifest, url, oldMigrations, repo, mainOnlyClone };
}
