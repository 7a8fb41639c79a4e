// Vitest global setup: one real embedded PostgreSQL per test run, with a template
// database that has every migration applied; each test file clones it (test/helpers/db.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../../server/db/embedded";
import { migrate } from "../../server/db/migrate";
import { freePort } from "../helpers/ports";

export const TEMPLATE_DATABASE = "catcafe_template";

declare module "vitest" {
  export interface ProvidedContext {
    postgres: { adminUrl: string; urlBase: string; template: string };
  }
}

export default async function setup(project: TestProject) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-test-pg-"));
  fs.chmodSync(dir, 0o755);
  const server = await startEmbeddedPostgres({
    dataDir: path.join(dir, "data"),
    port: await freePort(),
    password: "test",
    // Durability is not under test here; speed is welcome. (The benchmark uses defaults.)
    settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "400" },
  });
  await server.createDatabase(TEMPLATE_DATABASE);
  await migrate(server.urlFor(TEMPLATE_DATABASE));
  project.provide("postgres", {
    adminUrl: server.urlFor("postgres"),
    urlBase: server.urlFor(""),
    template: TEMPLATE_DATABASE,
  });
  return async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
