import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { listMigrations, migrate } from "../../server/db/migrate";
import { diffSchemas } from "../../server/db/schema-diff";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

/** Tables, columns, indexes, constraints and enums of the public schema, as comparable text. */
async function describeSchema(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const q = async (sql: string) => (await client.query(sql)).rows.map((r) => JSON.stringify(r));
    return {
      columns: await q(`SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default,
                               character_maximum_length, numeric_precision, datetime_precision
                        FROM information_schema.columns
                        WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
                        ORDER BY table_name, column_name`),
      indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes
                        WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY indexname`),
      constraints: await q(`SELECT c.conrelid::regclass::text AS tbl, c.conname, c.contype, pg_get_constraintdef(c.oid) AS def
                            FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
                            WHERE n.nspname = 'public' AND c.conrelid::regclass::text <> '_prisma_migrations'
                            ORDER BY c.conname`),
      enums: await q(`SELECT t.typname, e.enumlabel, e.enumsortorder FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
                      ORDER BY t.typname, e.enumsortorder`),
    };
  } finally {
    await client.end();
  }
}

/**
 * Written by hand in their migrations: a traced claim's lookup of a step's StepScheduled
 * (prisma/migrations/*_step_scheduled_by_step, narrowed in *_steps_hot_queue), the queue's
 * index of open steps (*_steps_hot_queue), the index of the events that say which issue a
 * session was started from (*_issue_origin_index) and that of the intake's held deliveries
 * (*_intake_held_index).
 */
const HAND_WRITTEN_INDEXES = [
  "events_step_scheduled_step_id_idx",
  "steps_open_available_at_idx",
  "events_task_started_from_issue_idx",
  "events_intake_held_idx",
];

let migrated: TestDatabase;
let fromSchema: TestDatabase;
beforeAll(async () => {
  migrated = await createTestDatabase();
  fromSchema = await createTestDatabase({ migrated: false });
});

describe("migrations", () => {
  it("a database built from the committed migrations equals one built from schema.prisma", async () => {
    const schema = fs.readFileSync(path.resolve("prisma/schema.prisma"), "utf8");
    const sql = await diffSchemas(fromSchema.url, null, schema);
    expect(sql).toMatch(/CREATE TABLE "events"/);
    await fromSchema.pool.query(sql);
    const [a, b] = await Promise.all([describeSchema(migrated.url), describeSchema(fromSchema.url)]);
    expect(a.columns.length).toBeGreaterThan(40);
    // Indexes schema.prisma cannot say (partial, on an expression), written by hand in their
    // migration: there, and nothing else differs.
    const handWritten = a.indexes.filter((row) => HAND_WRITTEN_INDEXES.includes((JSON.parse(row) as { indexname: string }).indexname));
    expect(handWritten).toHaveLength(HAND_WRITTEN_INDEXES.length);
    expect({ ...a, indexes: a.indexes.filter((row) => !handWritten.includes(row)) }).toEqual(b);
  });

  it("records every migration in Prisma's _prisma_migrations table with its sha256 checksum", async () => {
    const rows = await migrated.pool.query(
      "SELECT migration_name, checksum, finished_at IS NOT NULL AS done, applied_steps_count FROM _prisma_migrations ORDER BY migration_name",
    );
    expect(rows.rows).toEqual(
      listMigrations().map((m) => ({ migration_name: m.name, checksum: m.checksum, done: true, applied_steps_count: 1 })),
    );
    expect(await migrate(migrated.url)).toEqual({ applied: [], alreadyApplied: listMigrations().length });
  });

  it("refuses to run when an applied migration file was edited afterwards", async () => {
    const db = await createTestDatabase();
    const first = listMigrations()[0]!;
    await db.pool.query("UPDATE _prisma_migrations SET checksum = repeat('0', 64) WHERE migration_name = $1", [first.name]);
    await expect(migrate(db.url)).rejects.toThrow(`migration ${first.name} was changed after it was applied`);
  });
});
