// Path safety for workspaces: which session ids may name a directory, and whether a path
// (after following symlinks) stays inside a root. Used for our own directories and by agent
// tools (req F9: no `..` escape, no absolute path outside, no symlink out of the root).
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../errors";

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A session id becomes a directory name: plain characters only, never `.` or `..`. */
export function assertValidSessionId(sessionId: string): void {
  if (!SESSION_ID.test(sessionId) || /^\.+$/.test(sessionId)) {
    throw new AppError(
      "INVALID_INPUT",
      `Invalid session id ${JSON.stringify(sessionId)}: use 1-128 characters from [A-Za-z0-9._-], not only dots`,
      { sessionId },
    );
  }
}

const MAX_SYMLINK_HOPS = 40;

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * Resolves an absolute path the way the operating system would, one component at a time:
 * a symlink is followed before a later `..` is applied (so `link/../x` lands next to the
 * link's target, not next to the link), and a dangling symlink is followed too, because
 * writing through it would create its target wherever that is. Components that do not
 * exist yet are appended as they are.
 */
function resolvePhysically(absolute: string): string {
  const fsRoot = path.parse(absolute).root;
  const pending = absolute.slice(fsRoot.length).split(path.sep);
  let current = fsRoot;
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(next);
    } catch (err) {
      if (!isMissing(err)) throw err;
      current = next;
      continue;
    }
    if (!stat.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) throw new Error(`too many symbolic links at ${next}`);
    const target = fs.readlinkSync(next);
    if (path.isAbsolute(target)) current = path.parse(target).root;
    pending.unshift(...target.split(path.sep));
  }
  return current;
}

/**
 * Whether `candidate` (absolute, or relative to `root`) is `root` itself or lies under it,
 * once `..` segments and symlinks are resolved. Anything odd (NUL bytes, symlink loops,
 * unreadable directories) answers false: callers use this to refuse, so it fails closed.
 */
export function isInside(root: string, candidate: string): boolean {
  if (root === "" || candidate === "" || root.includes("\0") || candidate.includes("\0")) return false;
  try {
    const realRoot = resolvePhysically(path.resolve(root));
    // Not path.resolve: it would apply `..` before following symlinks.
    const joined = path.isAbsolute(candidate) ? candidate : `${realRoot}${path.sep}${candidate}`;
    const realCandidate = resolvePhysically(joined);
    const rel = path.relative(realRoot, realCandidate);
    return rel === "" || (!path.isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${path.sep}`));
  } catch {
    return false;
  }
}
