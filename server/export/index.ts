// Session export (req E8): the export layout (req E8) for one session, as a file map, a folder
// (CLI `--out <dir>`) or a zip (UI download).
import { ZPricingSettings, type PricingSettings } from "../config/schemas";
import type { Queryable } from "../db/pool";
import { sessionUsage } from "../usage/totals";
import { userLabelsIn } from "../../lib/people";
import { actorLabel } from "../events/catalog";
import { getBlob } from "../events/blobs";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import { viewerEventData } from "./redact";
import { renderSessionExport } from "./layout";
import { bakeOffDocument, forkedContenders } from "./bake-off";
import { jsonFile } from "./types";
import type { ExportFiles } from "./types";

export { exportArchive, type ArchiveOptions } from "./archive";
export { renderSessionExport, type TimelineLine } from "./layout";
export { exportPathProblem } from "./paths";
export { HIDDEN_FOR_VIEWERS, REDACTED } from "./redact";
export type { OutputMeta, RoundMeta, StepMeta } from "./rounds";
export { EXPORT_FORMAT_VERSION, type SessionSummary, type StateEventLine } from "./summary";
export type { BlobLoader, ExportFiles } from "./types";
export { writeExportDir } from "./write-dir";

export interface ExportOptions {
  /** "viewer": no repository paths, allowlists or agent configurations (viewerEventData). */
  audience?: "viewer" | "member";
  /** The price table summary.json's cost is priced with (settings.json's; none priced by default). */
  pricing?: PricingSettings;
  /** People's names by actor label (req X2), asked once for every label the session holds. */
  names?: (labels: string[]) => Promise<Record<string, string>>;
}

/** Reads the session (with what it inherited from fork ancestors) and renders its export. */
export async function exportSession(
  store: EventStore,
  pool: Queryable,
  sessionId: string,
  options: ExportOptions = {},
): Promise<ExportFiles> {
  const read = await store.readStream(sessionId);
  const events = options.audience === "viewer" ? read.map((e) => ({ ...e, data: viewerEventData(e.type, e.data) }) as RecordedEvent) : read;
  const labels = new Set(events.flatMap((e) => [actorLabel(e.metadata.actor), ...userLabelsIn(JSON.stringify(e.data))]));
  const names = options.names ? await options.names([...labels]) : {};
  const pricing = options.pricing ?? ZPricingSettings.parse({});
  const usage = await sessionUsage(pool, sessionId, pricing);
  const files = await renderSessionExport(sessionId, events, async (hash) => (await getBlob(pool, hash)).content, usage, names);
  const contenders = forkedContenders(read);
  if (!contenders.length) return files;
  // A bake-off (docs/bake-off.md): each contender's own export, and bake-off.json.
  for (const c of contenders) {
    const own = await exportSession(store, pool, c.sessionId, options);
    for (const [name, content] of own) files.set(`contenders/${c.id}-${c.sessionId}/${name}`, content);
  }
  const document = await bakeOffDocument({ pool, store }, sessionId, pricing, { audience: options.audience });
  files.set("bake-off.json", jsonFile(document));
  return files;
}
