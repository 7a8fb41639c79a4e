// `catcafe config validate`: a project's `.catcafe/` as it is in the server's working tree,
// or `.catcafe/*.json` texts sent by the caller (a checkout on their machine, before they
// commit), validated with the server's settings file. Every error is `file: path: problem`.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Db } from "../db/pool";
import { formatConfigErrors } from "../config/errors";
import { loadFromTexts, validateConfig, validateProjectConfig } from "../config/load";
import { CONFIG_DIR } from "../config/schemas";
import { loadSettings, webSettingsPath } from "../config/settings";
import { MAX_CONFIG_FILE_BYTES } from "../config/sources";
import { withOverride } from "../config/schemas";
import { EventStore } from "../events/store";
import { serverOverride } from "./config-edits";
import { getProject } from "./projects";

const ZConfigFileName = z.string().regex(/^[A-Za-z0-9._-]{1,100}\.json$/, "a file name in .catcafe/ ending in .json");

export const ZValidateConfigInput = z
  .object({
    /** Validate this project's repository (its working tree on the server). */
    projectId: z.string().min(1).optional(),
    /** Or these `.catcafe/` files: name (e.g. `agents.json`) → text. */
    files: z
      .record(ZConfigFileName, z.string().max(MAX_CONFIG_FILE_BYTES, `at most ${MAX_CONFIG_FILE_BYTES / 1024} KiB per file`))
      .optional(),
  })
  .refine((i) => (i.projectId === undefined) !== (i.files === undefined), {
    message: "give either projectId or files",
    path: ["projectId"],
  })
  .refine((i) => i.files === undefined || Object.keys(i.files).length <= 20, { message: "at most 20 files", path: ["files"] });

export interface ConfigValidation {
  /** What was validated: `project <id> (<repo>)` or `uploaded files`. */
  source: string;
  /** False when there is no `.catcafe/` (nothing to validate: the project record's agents run). */
  found: boolean;
  ok: boolean;
  errors: string[];
}

export async function validateConfigSource(pool: Db, raw: z.input<typeof ZValidateConfigInput>): Promise<ConfigValidation> {
  const input = ZValidateConfigInput.parse(raw);
  if (input.files) {
    const file = loadSettings(webSettingsPath());
    const settings = { ...file, settings: withOverride(file.settings, (await serverOverride(new EventStore(pool))).override) };
    const loaded = loadFromTexts(
      { found: true, texts: input.files, errors: [] },
      { settings: settings.settings, settingsFile: settings.file },
    );
    const errors = formatConfigErrors([...settings.errors, ...validateConfig(loaded)]);
    return {
      source: `uploaded files (${Object.keys(input.files).sort().join(", ") || "none"})`,
      found: true,
      ok: errors.length === 0,
      errors,
    };
  }
  // Checked as a task of the project would start: the settings in force, its record's allowlist.
  const project = await getProject(pool, input.projectId!);
  const file = loadSettings(webSettingsPath());
  const { override } = await serverOverride(new EventStore(pool));
  const settings = { ...file, settings: withOverride(withOverride(file.settings, override), project.settings) };
  const errors = await validateProjectConfig(project.repoPath, { settings, project });
  const found = fs.existsSync(path.join(project.repoPath, CONFIG_DIR));
  return { source: `project ${project.id} (${project.repoPath})`, found, ok: errors.length === 0, errors };
}
