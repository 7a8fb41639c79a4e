// `npm run db:generate` (and `postinstall`): generates the Prisma client into
// server/db/generated. The client itself needs no engine binary (it runs on the query
// compiler with @prisma/adapter-pg), but the CLI fetches a schema-engine binary on every
// command unless told where one is; `generate` never uses it, so /bin/true stands in.
// A user who already points PRISMA_SCHEMA_ENGINE_BINARY at a real engine keeps it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const cli = path.join(root, "node_modules", "prisma", "build", "index.js");

if (!fs.existsSync(cli)) {
  // `npm install --omit=dev` or a partial install: nothing to generate with.
  console.error(`generate-prisma: ${path.relative(root, cli)} not found; run npm install first`);
  process.exit(1);
}

const engineStandIn = fs.existsSync("/bin/true") ? "/bin/true" : undefined;

try {
  execFileSync(process.execPath, [cli, "generate", "--config", path.join(root, "prisma.config.ts")], {
    cwd: root,
    stdio: "inherit",
    env: {
      ...process.env,
      CHECKPOINT_DISABLE: "1",
      PRISMA_HIDE_UPDATE_MESSAGE: "1",
      ...(engineStandIn && !process.env.PRISMA_SCHEMA_ENGINE_BINARY ? { PRISMA_SCHEMA_ENGINE_BINARY: engineStandIn } : {}),
    },
  });
} catch (err) {
  const status = (err as { status?: number | null }).status;
  console.error(`generate-prisma: prisma generate failed${status == null ? "" : ` (exit ${status})`}`);
  process.exit(status ?? 1);
}
