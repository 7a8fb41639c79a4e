// Where an agent CLI's executable is: a configured path, else the CLI's name in
// node_modules/.bin (the version this project pins), else on PATH. The adapters run what
// this finds and detection reports on the same file, so the two never disagree.
import fs from "node:fs";
import path from "node:path";
import type { EnvSource } from "../../process/env";

export type { EnvSource };

/**
 * This project's root: server/agents/shells/ is three levels down. Inside the Next.js
 * bundle (the web process: `ops.detectShells`) import.meta.dirname is undefined; the web
 * server runs from the project root, so its cwd stands in.
 */
const PROJECT_ROOT = import.meta.dirname ? path.resolve(import.meta.dirname, "../../..") : process.cwd();

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Directories searched for `name`, in order: node_modules/.bin of the cwd and of this project, then PATH. */
export function searchDirectories(env: EnvSource = process.env, cwd = process.cwd()): string[] {
  const dirs = [
    path.join(cwd, "node_modules", ".bin"),
    path.join(PROJECT_ROOT, "node_modules", ".bin"),
    ...(env.PATH ?? "").split(path.delimiter),
  ];
  return [...new Set(dirs.filter((d) => d !== "").map((d) => path.resolve(cwd, d)))];
}

/**
 * The absolute path of the executable `command` names (a path when it contains '/', else a
 * name to search for), or null when there is none.
 */
export function locateExecutable(command: string, env: EnvSource = process.env, cwd = process.cwd()): string | null {
  if (command.includes("/")) {
    const file = path.resolve(cwd, command);
    return isExecutable(file) ? file : null;
  }
  for (const dir of searchDirectories(env, cwd)) {
    const file = path.join(dir, command);
    if (isExecutable(file)) return file;
  }
  return null;
}
