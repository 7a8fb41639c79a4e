// What one runner process learned about the clones it works in, kept for its next steps: that
// the clone at a path is there and is the top of a git checkout. One `git rev-parse` per
// clone instead of one per step (docs/scaling.md, "First output and live paint"). The fact is
// kept with the clone's identity (the device and inode of its directory and of its `.git`),
// read again with two `stat` calls at every use: a clone deleted, moved away or replaced by
// another is checked with git again, and its absence reported as before.
import fs from "node:fs";
import path from "node:path";
import { missingClone } from "./repo";

function cloneIdentity(repoPath: string): string | null {
  try {
    const top = fs.statSync(repoPath);
    const git = fs.lstatSync(path.join(repoPath, ".git"));
    // A `.git` file (a clone made with --separate-git-dir) can be rewritten in place: its times count too.
    const written = git.isDirectory() ? "dir" : `${git.size}:${git.mtimeMs}:${git.ctimeMs}`;
    return [top.dev, top.ino, git.dev, git.ino, written].join(":");
  } catch {
    return null;
  }
}

export class KnownClones {
  /** Clones found to be checkouts, by path, with their identity then. */
  private readonly checkouts = new Map<string, string>();

  /** What this machine lacks to work in the clone at `repoPath`, or null: missingClone, asked once per clone. */
  async missing(repoPath: string, mapping?: string): Promise<string | null> {
    const identity = cloneIdentity(repoPath);
    if (identity !== null && this.checkouts.get(repoPath) === identity) return null;
    const missing = await missingClone(repoPath, mapping);
    // Kept only when nothing was swapped while git looked.
    if (missing === null && identity !== null && cloneIdentity(repoPath) === identity) this.checkouts.set(repoPath, identity);
    else this.checkouts.delete(repoPath);
    return missing;
  }
}
