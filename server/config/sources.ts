// Where `.catcafe/` is read from: the working tree (for the validate command, before a
// commit) or a commit (when a task starts: the configuration of the recorded base commit,
// so what a session runs never depends on files edited later). Both return the JSON
// files' texts by name; anything that cannot be read is a configuration error.
import fs from "node:fs";
import path from "node:path";
import { runGit } from "../workspaces/git";
import type { ConfigError } from "./errors";
import { configFilePath } from "./project-config";
import { CONFIG_DIR } from "./schemas";

export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

export interface ConfigTexts {
  /** False when the repository has no `.catcafe/` directory (nothing configured). */
  found: boolean;
  texts: Record<string, string>;
  errors: ConfigError[];
}

const NOT_FOUND: ConfigTexts = { found: false, texts: {}, errors: [] };
const tooLarge = (name: string): ConfigError => ({
  file: configFilePath(name),
  path: "",
  message: `is larger than ${MAX_CONFIG_FILE_BYTES / 1024} KiB`,
});
const notRegular = (name: string): ConfigError => ({
  file: configFilePath(name),
  path: "",
  message: "must be a regular file (symbolic links are not followed)",
});

/** `.catcafe/*.json` as they are in the working tree of `repoDir`. */
export function readConfigDir(repoDir: string): ConfigTexts {
  const dir = path.join(repoDir, CONFIG_DIR);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch {
    return NOT_FOUND;
  }
  if (!stat.isDirectory())
    return { found: true, texts: {}, errors: [{ file: `${CONFIG_DIR}/`, path: "", message: "must be a directory" }] };
  const result: ConfigTexts = { found: true, texts: {}, errors: [] };
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.name.endsWith(".json")) continue;
    if (!entry.isFile()) {
      result.errors.push(notRegular(entry.name));
      continue;
    }
    const file = path.join(dir, entry.name);
    if (fs.statSync(file).size > MAX_CONFIG_FILE_BYTES) result.errors.push(tooLarge(entry.name));
    else result.texts[entry.name] = fs.readFileSync(file, "utf8");
  }
  return result;
}

interface TreeEntry {
  mode: string;
  type: string;
  object: string;
  name: string;
}

async function listTree(repoDir: string, treeish: string): Promise<TreeEntry[]> {
  const out = await runGit(repoDir, ["ls-tree", "-z", treeish], { allowFailure: true });
  if (out.exitCode !== 0) return [];
  return out.stdout
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const [meta = "", name = ""] = line.split("\t");
      const [mode = "", type = "", object = ""] = meta.split(" ");
      return { mode, type, object, name };
    });
}

/** `.catcafe/*.json` as committed in `commit` (a full commit id) of `repoDir`. */
export async function readConfigDirAtCommit(repoDir: string, commit: string): Promise<ConfigTexts> {
  const top = await listTree(repoDir, commit);
  const dir = top.find((e) => e.name === CONFIG_DIR);
  if (!dir) return NOT_FOUND;
  if (dir.type !== "tree")
    return { found: true, texts: {}, errors: [{ file: `${CONFIG_DIR}/`, path: "", message: "must be a directory" }] };
  const result: ConfigTexts = { found: true, texts: {}, errors: [] };
  for (const entry of (await listTree(repoDir, dir.object)).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.name.endsWith(".json")) continue;
    // 100644 / 100755 are files; 120000 is a symbolic link, 160000 a submodule.
    if (entry.type !== "blob" || !entry.mode.startsWith("100")) {
      result.errors.push(notRegular(entry.name));
      continue;
    }
    const size = Number((await runGit(repoDir, ["cat-file", "-s", entry.object])).stdout.trim());
    if (size > MAX_CONFIG_FILE_BYTES) result.errors.push(tooLarge(entry.name));
    else result.texts[entry.name] = (await runGit(repoDir, ["cat-file", "blob", entry.object])).stdout;
  }
  return result;
}
