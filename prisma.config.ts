// Prisma CLI configuration (Prisma 7 reads it instead of a datasource url in schema.prisma).
// `prisma generate` needs no database, so the url is only set when DATABASE_URL is: the
// client generation in `postinstall` must work on a fresh checkout without one.
// Migrations are applied by server/db/migrate.ts, not by this CLI (see docs/OFFLINE notes).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
});
