// The global settings file as the web process finds it. server/config/settings.ts defaults
// to `$CATCAFE_DATA_DIR/settings.json`, falling back to a path beside its own source, which
// the Next.js bundle cannot compute (import.meta.dirname is undefined there) when
// CATCAFE_DATA_DIR is unset; the web server runs from the project root, so `.data` under
// its cwd is the same default.
import path from "node:path";
import { defaultSettingsPath } from "../config/settings";

export function webSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return defaultSettingsPath({ CATCAFE_DATA_DIR: env.CATCAFE_DATA_DIR ?? path.join(process.cwd(), ".data") });
}
