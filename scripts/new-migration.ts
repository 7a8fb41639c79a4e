// `npm run db:new-migration -- <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql
// with the SQL from the schema of the previous migration (its schema.prisma snapshot) to the
// current prisma/schema.prisma, plus a snapshot of the current schema for the next diff.
// Hand-written SQL (triggers, functions) may be appended to migration.sql before committing.
import fs from "node:fs";
import path from "node:path";
import { openLocalDatabase } from "../server/db/local";
import { MIGRATIONS_DIR, listMigrations } from "../server/db/migrate";
import { diffSchemas } from "../server/db/schema-diff";

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: npm run db:new-migration -- <name>   (lowercase letters, digits, _)");
  process.exit(2);
}
const schema = fs.readFileSync(path.resolve(import.meta.dirname, "../prisma/schema.prisma"), "utf8");
const previous = listMigrations().at(-1);
const previousSchema = previous ? fs.readFileSync(path.join(MIGRATIONS_DIR, previous.name, "schema.prisma"), "utf8") : null;
const db = await openLocalDatabase(console.log);
try {
  const sql = await diffSchemas(db.url, previousSchema, schema);
  if (!sql.trim() || /empty migration/.test(sql)) {
    console.log("schema.prisma matches the latest migration: nothing to write");
  } else {
    const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
    const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "migration.sql"), sql);
    fs.writeFileSync(path.join(dir, "schema.prisma"), schema);
    console.log(`wrote ${path.relative(process.cwd(), dir)}/migration.sql`);
  }
} finally {
  await db.stop();
}
