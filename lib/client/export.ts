// A session's export (req E8) on the client: downloaded as the server's zip
// (`GET /api/sessions/:id/export`), unpacked in memory, and written to a folder in the
// export layout (summary.json, task-events.jsonl, task-timeline.json, rounds/<nn>/...).
// The folder must be new or empty, every name is checked before anything is written, and
// nothing is overwritten: a hostile archive cannot write outside the folder.
import fs from "node:fs/promises";
import path from "node:path";
import { unzipSync } from "fflate";
import { authHeaders, type CatCafeClientOptions } from "./client";
import { httpErrorFrom } from "./errors";
import { normalizeServerUrl } from "./url";

/** Export path ('/'-separated, relative) → bytes, in the archive's order. */
export type ExportedFiles = Map<string, Uint8Array>;

/** The server's rule for export names: plain segments, no dot files, nothing absolute. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function exportPathProblem(name: string): string | null {
  if (name === "" || name.length > 255) return "is empty or too long";
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return "is absolute";
  const bad = name.split("/").find((segment) => !SEGMENT.test(segment));
  return bad === undefined ? null : `has the segment ${JSON.stringify(bad)}`;
}

export async function downloadExport(options: CatCafeClientOptions, sessionId: string): Promise<ExportedFiles> {
  const url = `${normalizeServerUrl(options.url)}/api/sessions/${encodeURIComponent(sessionId)}/export`;
  const response = await (options.fetch ?? globalThis.fetch)(url, { headers: authHeaders(options) });
  if (!response.ok) throw await httpErrorFrom(response, `export of ${sessionId}`);
  const entries = unzipSync(new Uint8Array(await response.arrayBuffer()));
  const files: ExportedFiles = new Map();
  for (const [name, content] of Object.entries(entries)) {
    if (name.endsWith("/")) continue; // a folder entry
    // Every file sits under one top folder named after the session.
    const slash = name.indexOf("/");
    const inner = slash < 0 ? name : name.slice(slash + 1);
    const problem = exportPathProblem(inner);
    if (problem) throw new Error(`the export archive holds a file name that ${problem}: ${JSON.stringify(name)}`);
    files.set(inner, content);
  }
  if (!files.has("summary.json")) throw new Error(`the export of ${sessionId} has no summary.json`);
  return files;
}

/** `outDir` resolved, when it is missing or an empty directory; throws otherwise (check before downloading). */
export async function checkExportDir(outDir: string): Promise<string> {
  const root = path.resolve(outDir);
  const existing = await fs.stat(root).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? null : Promise.reject(err)));
  if (existing && !existing.isDirectory()) throw new Error(`${root} exists and is not a directory`);
  if (existing && (await fs.readdir(root)).length > 0) throw new Error(`${root} is not empty: export into a new or empty directory`);
  return root;
}

/** Writes the files under `outDir` (created if missing; must be empty); returns the paths written. */
export async function writeExportFiles(files: ExportedFiles, outDir: string): Promise<string[]> {
  for (const name of files.keys()) {
    const problem = exportPathProblem(name);
    if (problem) throw new Error(`refusing to write ${JSON.stringify(name)}: it ${problem}`);
  }
  const root = await checkExportDir(outDir);
  await fs.mkdir(root, { recursive: true });
  const written: string[] = [];
  for (const [name, content] of files) {
    const target = path.join(root, ...name.split("/"));
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, content, { flag: "wx" });
    written.push(target);
  }
  return written;
}
