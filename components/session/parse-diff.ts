// A unified diff (as `git diff` writes it) split into files and typed lines, for the diff
// view. Tolerant: anything it does not recognise is kept as a context line.
export type DiffLineKind = "add" | "del" | "context" | "hunk" | "meta";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

export interface DiffFile {
  /** The path after the change (before it, for a deletion). */
  path: string;
  previousPath: string | null;
  status: "added" | "deleted" | "renamed" | "modified" | "binary";
  additions: number;
  deletions: number;
  lines: DiffLine[];
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseUnifiedDiff(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | null = null;
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) {
      const m = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
      file = { path: m?.[2] ?? line.slice(11), previousPath: null, status: "modified", additions: 0, deletions: 0, lines: [] };
      files.push(file);
      inHunk = false;
      continue;
    }
    if (!file) {
      if (line.trim() === "") continue;
      file = { path: "(diff)", previousPath: null, status: "modified", additions: 0, deletions: 0, lines: [] };
      files.push(file);
    }
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      inHunk = true;
      file.lines.push({ kind: "hunk", text: line, oldNo: null, newNo: null });
      continue;
    }
    if (!inHunk) {
      if (line.startsWith("new file")) file.status = "added";
      else if (line.startsWith("deleted file")) file.status = "deleted";
      else if (line.startsWith("rename from ")) {
        file.status = "renamed";
        file.previousPath = line.slice(12);
      } else if (line.startsWith("Binary files")) file.status = "binary";
      if (line.startsWith("--- ") || line.startsWith("+++ ") || line.startsWith("index ") || line.trim() === "") continue;
      file.lines.push({ kind: "meta", text: line, oldNo: null, newNo: null });
      continue;
    }
    if (line.startsWith("+")) {
      file.additions++;
      file.lines.push({ kind: "add", text: line.slice(1), oldNo: null, newNo: newNo++ });
    } else if (line.startsWith("-")) {
      file.deletions++;
      file.lines.push({ kind: "del", text: line.slice(1), oldNo: oldNo++, newNo: null });
    } else if (line.startsWith("\\")) {
      file.lines.push({ kind: "meta", text: line, oldNo: null, newNo: null });
    } else if (line === "") {
      // The split leaves one empty string after the final newline; inside a hunk an empty
      // context line is written as a single space, so a bare "" is never content.
      continue;
    } else {
      file.lines.push({ kind: "context", text: line.slice(1), oldNo: oldNo++, newNo: newNo++ });
    }
  }
  return files;
}
