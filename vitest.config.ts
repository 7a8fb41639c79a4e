// Three tiers, one per project, so each can run alone: `npm run test:unit` (pure, no
// PostgreSQL started), `test:int` (real embedded PostgreSQL, a database per file) and
// `test:e2e` (real processes and a real browser). `npm test` runs all three.
import path from "node:path";
import { defineConfig } from "vitest/config";

const shared = {
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
};

export default defineConfig({
  ...shared,
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    env: { CATCAFE_LOG_LEVEL: "warn", CATCAFE_POOL_CHECKS: "1" },
    projects: [
      { ...shared, extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      {
        ...shared,
        extends: true,
        test: {
          name: "int",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/setup/postgres.ts"],
          setupFiles: ["test/setup/pool-checks.ts"],
        },
      },
      {
        ...shared,
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/setup/postgres.ts"],
          setupFiles: ["test/setup/pool-checks.ts"],
        },
      },
    ],
  },
});
