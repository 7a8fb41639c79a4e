// The names an export may use for its files: relative, '/'-separated, each segment plain
// letters, digits, '.', '_' or '-' and never starting with a dot, so no generated name can
// climb out of the export folder ('..'), hide, or be absolute — whatever the events hold.
import { AppError } from "../errors";

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_PATH_CHARS = 255;

/** Why `name` may not be a file in an export, or null when it may. */
export function exportPathProblem(name: string): string | null {
  if (name === "") return "is empty";
  if (name.length > MAX_PATH_CHARS) return `is longer than ${MAX_PATH_CHARS} characters`;
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "is absolute";
  const bad = name.split("/").find((segment) => !SEGMENT.test(segment));
  if (bad !== undefined) return `has the segment ${JSON.stringify(bad)} (allowed: letters, digits, '.', '_', '-', not starting with '.')`;
  return null;
}

export function assertExportPath(name: string): void {
  const problem = exportPathProblem(name);
  if (problem) throw new AppError("INVALID_INPUT", `export file name ${JSON.stringify(name)} ${problem}`, { name });
}
