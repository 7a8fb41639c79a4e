// The export as one zip (for the UI's download): every file under a top folder named after
// the session. Same files, same bytes, same order and timestamps: the same zip every time.
import { zipSync, type Zippable } from "fflate";
import { AppError } from "../errors";
import { assertExportPath } from "./paths";
import type { ExportFiles } from "./types";

/** fflate stores DOS timestamps, which start in 1980. */
const EARLIEST_ZIP_TIME = Date.UTC(1980, 0, 2);

function summaryOf(files: ExportFiles): { sessionId?: unknown; timestamps?: { lastEventAt?: unknown } } {
  const text = files.get("summary.json");
  if (text === undefined) throw new AppError("INVALID_INPUT", "an export needs its summary.json");
  return JSON.parse(text.toString()) as { sessionId?: unknown; timestamps?: { lastEventAt?: unknown } };
}

export interface ArchiveOptions {
  /** Top folder in the zip; the session id from summary.json by default. */
  folder?: string;
  /** Modification time of every entry; the session's last event by default. */
  mtime?: Date;
}

export function exportArchive(files: ExportFiles, options: ArchiveOptions = {}): Buffer {
  const summary = options.folder && options.mtime ? null : summaryOf(files);
  const folder = options.folder ?? String(summary?.sessionId ?? "");
  assertExportPath(folder);
  if (folder.includes("/")) throw new AppError("INVALID_INPUT", `the archive's top folder must be one name, not ${JSON.stringify(folder)}`);
  const lastEventAt = summary?.timestamps?.lastEventAt;
  const at = options.mtime ?? (typeof lastEventAt === "string" ? new Date(lastEventAt) : new Date(EARLIEST_ZIP_TIME));
  const mtime = new Date(Math.max(at.getTime(), EARLIEST_ZIP_TIME));

  const entries: Zippable = {};
  for (const [name, content] of files) {
    assertExportPath(name);
    entries[`${folder}/${name}`] = [typeof content === "string" ? Buffer.from(content, "utf8") : content, { mtime }];
  }
  return Buffer.from(zipSync(entries, { level: 6 }));
}
