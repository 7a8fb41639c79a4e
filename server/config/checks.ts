// Small syntax checks the configuration schemas share: file globs, version ranges, ids and
// environment variable names. Each returns a reason a person can act on, or null.
import path from "node:path";
import picomatch from "picomatch";

/** Why `glob` cannot name files inside a repository, or null when it can. */
export function globProblem(glob: string): string | null {
  if (glob.trim() === "") return "is empty";
  if (glob.includes("\0")) return "contains a NUL byte";
  if (glob.includes("\\")) return "contains a backslash (use '/' between directories)";
  if (glob.startsWith("!")) return "negated globs are not supported (list the files that may change instead)";
  if (path.posix.isAbsolute(glob) || /^[A-Za-z]:/.test(glob)) return "is absolute (globs are relative to the repository root)";
  if (glob.split("/").includes("..")) return "climbs out of the repository with '..'";
  let braces = 0;
  let brackets = 0;
  for (const ch of glob) {
    if (ch === "{") braces++;
    else if (ch === "}") braces--;
    else if (ch === "[") brackets++;
    else if (ch === "]") brackets--;
    if (braces < 0) return "has a '}' without a matching '{'";
    if (brackets < 0) return "has a ']' without a matching '['";
  }
  if (braces > 0) return "has a '{' without a matching '}'";
  if (brackets > 0) return "has a '[' without a matching ']'";
  if (glob.split("/").some((segment) => segment.includes("**") && segment !== "**")) {
    return "uses '**' inside a path segment (write it as a whole segment, like src/**/*.ts)";
  }
  try {
    const re = picomatch.makeRe(glob, { dot: true });
    if (re.source === "$^") return "can never match a file";
  } catch (err) {
    return `is not a valid glob (${(err as Error).message})`;
  }
  return null;
}

const VERSION = /^v?(?:0|[1-9]\d*|[xX*])(?:\.(?:0|[1-9]\d*|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?$/;
const COMPARATOR = /^(?:>=|<=|>|<|=|\^|~)?(.+)$/;

/**
 * Why `range` is not a version range, or null when it is. The syntax is npm's: comparators
 * (`>=1.2.0 <2`), caret and tilde (`^1.0.0`, `~2.1`), x-ranges (`1.x`), hyphen ranges
 * (`1.0.0 - 2.0.0`) and alternatives joined by `||`.
 */
export function versionRangeProblem(range: string): string | null {
  if (range.trim() === "") return "is empty";
  for (const alternative of range.split("||")) {
    const set = alternative.trim();
    if (set === "") return "has an empty alternative around '||'";
    if (set === "*" || set.toLowerCase() === "x") continue;
    const hyphen = set.split(/\s+-\s+/);
    if (hyphen.length === 2) {
      if (!hyphen.every((v) => VERSION.test(v))) return `"${set}" is not a valid hyphen range (like 1.0.0 - 2.0.0)`;
      continue;
    }
    // ">= 1.2" is one comparator written with a space.
    for (const comparator of set.replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1").split(/\s+/)) {
      const version = COMPARATOR.exec(comparator)?.[1];
      if (!version || !VERSION.test(version)) return `"${comparator}" is not a version comparator (like >=1.2.0, ^1.0.0, 1.x)`;
    }
  }
  return null;
}
