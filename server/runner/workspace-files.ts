// The runner's own reads and writes of files in a session's worktree (a Forge step's
// artifacts, an HTTP brain's files reply): it does them with its own rights, so each path is
// checked first and never leads it out of the worktree (req F9; workspaces/paths.ts `isInside`).
import fs from "node:fs/promises";
import path from "node:path";
import { isInside } from "../workspaces";

/**
 * The path of `relative` inside `root`, refusing one that leaves it — by `..`, as an absolute
 * path, or through a symbolic link an agent planted (resolved as the system would:
 * workspaces/paths.ts `isInside`). The path is not normalized, so the system resolves it
 * exactly as `isInside` did.
 */
export function insideWorkspace(root: string, relative: string): string {
  if (path.isAbsolute(relative) || !isInside(root, relative))
    throw new Error(`refused path "${relative}": it leaves the workspace (a "..", an absolute path, or a symbolic link out)`);
  return `${root}${path.sep}${relative}`;
}

/** Writes `content` at `relative` inside `root` (its directories made), checked as `insideWorkspace` says. */
export async function writeInside(root: string, relative: string, content: Buffer | string): Promise<void> {
  const target = insideWorkspace(root, relative);
  await fs.mkdir(path.dirname(target), { recursive: true });
  await fs.writeFile(insideWorkspace(root, relative), content);
}
