#!/usr/bin/env node
// `catcafe` (npx catcafe in this repository): runs the TypeScript CLI in cli/ through tsx,
// in this process. The CLI imports the typed client (lib/client) and never the server.
import { tsImport } from "tsx/esm/api";

await tsImport("../cli/main.ts", import.meta.url);
