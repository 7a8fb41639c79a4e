// Computes migration SQL from Prisma schema files with Prisma's own schema engine,
// loaded as WebAssembly from npm. The Prisma CLI downloads a native engine on every
// command, which fails offline; this path needs no download (docs/architecture.md).
import fs from "node:fs";
import { createRequire } from "node:module";
import * as engineBindings from "@prisma/schema-engine-wasm/schema_engine_bg";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";

type Engine = engineBindings.SchemaEngine;
let wasmReady: Promise<void> | undefined;

function loadWasm(): Promise<void> {
  wasmReady ??= (async () => {
    const require = createRequire(import.meta.url);
    const wasmPath = require.resolve("@prisma/schema-engine-wasm").replace(/schema_engine\.js$/, "schema_engine_bg.wasm");
    const module = await WebAssembly.compile(fs.readFileSync(wasmPath));
    const instance = await WebAssembly.instantiate(module, {
      "./schema_engine_bg.js": engineBindings,
    });
    engineBindings.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
  })();
  return wasmReady;
}

/** The engine insists on a database connection even for file-to-file diffs. */
async function openEngine(databaseUrl: string, schema: string): Promise<Engine> {
  await loadWasm();
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString: databaseUrl }));
  return engineBindings.SchemaEngine.new({ datamodels: [["schema.prisma", schema]] }, () => {}, adapter);
}

const noFilters = { externalTables: [], externalEnums: [] };

/** SQL that turns schema `from` (or an empty database when null) into schema `to`. */
export async function diffSchemas(databaseUrl: string, from: string | null, to: string): Promise<string> {
  const engine = await openEngine(databaseUrl, to);
  try {
    const result = await engine.diff({
      from: from === null ? { tag: "empty" } : { tag: "schemaDatamodel", files: [{ path: "schema.prisma", content: from }] },
      to: { tag: "schemaDatamodel", files: [{ path: "schema.prisma", content: to }] },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    return result.stdout ?? "";
  } finally {
    engine.free();
  }
}
