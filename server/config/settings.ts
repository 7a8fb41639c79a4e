// The global settings file (`<data dir>/settings.json`): default shell and brain, timeouts,
// retry policy and rate limit. A missing file means every default; a broken one is
// reported like any project file, naming the file, the path and the problem.
import fs from "node:fs";
import path from "node:path";
import type { ConfigError } from "./errors";
import { configMajor, incompatibleVersionMessage, parseConfigFile } from "./project-config";
import { DEFAULT_SETTINGS, SETTINGS_FILE, ZSettings, CONFIG_MAJOR, type Settings } from "./schemas";

export interface LoadedSettings {
  settings: Settings;
  /** The file as errors name it. */
  file: string;
  /** False when the file does not exist (defaults apply). */
  found: boolean;
  errors: ConfigError[];
}

/** `<CATCAFE_DATA_DIR or .data>/settings.json`, the data directory `npm start` uses. */
export function defaultSettingsPath(env: Record<string, string | undefined> = process.env): string {
  // import.meta.dirname is undefined inside the Next.js bundle: fall back to the working directory.
  const dataDir = env.CATCAFE_DATA_DIR ?? (import.meta.dirname ? path.join(import.meta.dirname, "../../.data") : path.resolve(".data"));
  return path.resolve(dataDir, SETTINGS_FILE);
}

/**
 * The settings file as the web process finds it: `defaultSettingsPath` falls back to a path
 * beside its own source, which the Next.js bundle cannot compute when CATCAFE_DATA_DIR is
 * unset; the web server runs from the project root, so `.data` under its cwd is the same
 * default.
 */
export function webSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return defaultSettingsPath({ CATCAFE_DATA_DIR: env.CATCAFE_DATA_DIR ?? path.join(process.cwd(), ".data") });
}

/** Settings from their text (`file` names the file in errors). */
export function parseSettings(text: string, file: string): LoadedSettings {
  const { value, errors } = parseConfigFile(file, text, ZSettings);
  if (!value) return { settings: DEFAULT_SETTINGS, file, found: true, errors };
  if (configMajor(value.version) !== CONFIG_MAJOR) {
    return {
      settings: DEFAULT_SETTINGS,
      file,
      found: true,
      errors: [{ file, path: "version", message: incompatibleVersionMessage(value.version) }],
    };
  }
  return { settings: value, file, found: true, errors: [] };
}

export function loadSettings(file: string = defaultSettingsPath()): LoadedSettings {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { settings: DEFAULT_SETTINGS, file, found: false, errors: [] };
    return {
      settings: DEFAULT_SETTINGS,
      file,
      found: true,
      errors: [{ file, path: "", message: `cannot be read: ${(err as Error).message}` }],
    };
  }
  return parseSettings(text, file);
}
