// Path arguments must stay inside the workspace (req F9): an argument that is an absolute
// path outside it, or whose `..` segments climb out of it, is refused. Only the text is
// checked (the runner never resolves symlinks for this); `--flag=value` values and
// `file://` URLs are checked like plain arguments.
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
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
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
  for (const arg of argv.slice(1)) {
    for (const candidate of pathCandidates(arg)) {
      if (path.isAbsolute(candidate)) {
        if (root === undefined) return `argument \`${arg}\` is an absolute path; use a path relative to the workspace`;
        if (!isInside(root, path.resolve(candidate))) return `argument \`${arg}\` is an absolute path outside the workspace`;
      } else if (climbsOut(candidate)) {
        return `argument \`${arg}\` uses \`..\` to leave the workspace`;
      }
    }
  }
  return null;
}
