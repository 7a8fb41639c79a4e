// Path arguments must stay inside the workspace (req F9): an argument that is an absolute
// path outside it, whose `..` segments climb out of it, or that leads out of it through a
// symbolic link (the workspace's files are the repository's: a link may point anywhere) is
// refused. `--flag=value` values and `file://` URLs are checked like plain arguments.
import fs from "node:fs";
import path from "node:path";

/** The strings inside one argument that would be used as paths. */
function pathCandidates(arg: string): string[] {
  const candidates = [arg];
  const equals = arg.indexOf("=");
  if (arg.startsWith("-") && equals !== -1) candidates.push(arg.slice(equals + 1));
  return candidates.map((candidate) => (candidate.startsWith("file://") ? candidate.slice("file://".length) : candidate));
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function climbsOut(candidate: string): boolean {
  if (!candidate.split("/").includes("..")) return false;
  const normalized = path.posix.normalize(candidate);
  return normalized === ".." || normalized.startsWith("../");
}

/**
 * Why some argument of argv (the program itself excluded: the allowlist governs it) points
 * outside the workspace, or null. Without a workspace every absolute path is refused.
 */
export function pathEscapeReason(argv: readonly string[], workspace?: string): string | null {
  const root = workspace === undefined ? undefined : path.resolve(workspace);
  const realRoot = root === undefined ? undefined : realExisting(root);
  for (const arg of argv.slice(1)) {
    for (const candidate of pathCandidates(arg)) {
      if (path.isAbsolute(candidate)) {
        if (root === undefined) return `argument \`${arg}\` is an absolute path; use a path relative to the workspace`;
        if (!isInside(root, path.resolve(candidate))) return `argument \`${arg}\` is an absolute path outside the workspace`;
      } else if (climbsOut(candidate)) {
        return `argument \`${arg}\` uses \`..\` to leave the workspace`;
      }
      if (
        root !== undefined &&
        realRoot !== undefined &&
        candidate !== "" &&
        !isInside(realRoot, realExisting(path.resolve(root, candidate)))
      ) {
        return `argument \`${arg}\` leads outside the workspace through a symbolic link`;
      }
    }
  }
  return null;
}

/** The real path of `target`'s deepest part that exists (links resolved), with the rest appended. */
function realExisting(target: string): string {
  let existing = target;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(existing), ...rest.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return target;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}
