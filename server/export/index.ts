// Session export (req E8): the export layout (req E8) for one session, as a file map, a folder
// (CLI `--out <dir>`) or a zip (UI download).
import type { Queryable } from "../db/pool";
import { getBlob } from "../events/blobs";
import type { EventStore } from "../events/store";
import { renderSessionExport } from "./layout";
import type { ExportFiles } from "./types";

export { exportArchive, type ArchiveOptions } from "./archive";
export { renderSessionExport, type TimelineLine } from "./layout";
export { exportPathProblem } from "./paths";
export { REDACTED } from "./redact";
export type { OutputMeta, RoundMeta, StepMeta } from "./rounds";
export { EXPORT_FORMAT_VERSION, type SessionSummary, type StateEventLine } from "./summary";
export type { BlobLoader, ExportFiles } from "./types";
export { writeExportDir } from "./write-dir";

/** Reads the session (with what it inherited from fork ancestors) and renders its export. */
export async function exportSession(store: EventStore, pool: Queryable, sessionId: string): Promise<ExportFiles> {
  const events = await store.readStream(sessionId);
  return renderSessionExport(sessionId, events, async (hash) => (await getBlob(pool, hash)).content);
}
