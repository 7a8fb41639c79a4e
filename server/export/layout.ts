// The export layout (req E8), as a pure function of a session's events and a blob
// loader: summary.json, task-events.jsonl, task-timeline.json, feedback_history.json and
// rounds/<nn>/.
import { nameLabelsIn } from "../../lib/people";
import { actorLabel, appRegistry } from "../events/catalog";
import type { RecordedEvent } from "../events/types";
import { startedTask } from "../task-engine";
import { AppError } from "../errors";
import { assertExportPath } from "./paths";
import { feedbackHistory } from "../sessions/feedback";
import { splitRounds, type PlacedEvent } from "../sessions/rounds";
import { renderRound, type RoundMeta } from "./rounds";
import { buildSummary, stateEventLines } from "./summary";
import { conversationLines, conversationMarkdown, isConversationExport } from "./conversation";
import type { SessionUsage } from "../usage/totals";
import { jsonFile, jsonLines, type BlobLoader, type ExportFiles } from "./types";

/** One entry of task-timeline.json: what the UI replays, without payloads. */
export interface TimelineLine {
  version: number;
  streamId: string;
  type: string;
  actor: string;
  /** The actor as people read it: a person's name (req X2), else the label. */
  actorName: string;
  summary: string;
  recordedAt: string;
  round: number;
  /** The workflow state after this event. */
  state: string;
}

function timelineLines(placed: PlacedEvent[], names: Record<string, string>): TimelineLine[] {
  return placed.map(({ event: e, round, state }) => ({
    version: e.version,
    streamId: e.streamId,
    type: e.type,
    actor: actorLabel(e.metadata.actor),
    actorName: nameLabelsIn(actorLabel(e.metadata.actor), names),
    summary: nameLabelsIn(appRegistry.summarize(e.type, e.data), names),
    recordedAt: e.recordedAt,
    round,
    state,
  }));
}

/**
 * Renders a session's export. `events` is the session's whole stream as `readStream`
 * returns it (fork-inherited events included); blobs are loaded only for the files that
 * hold them (raw outputs, diffs); `usage` is the session's usage as the usage projection
 * has it (exportSession reads it; null leaves summary.json's usage out). `names`: people's
 * names by actor label (req X2), for what people read (the timeline, the feedback, the
 * transcript); a person not in it reads as a former member. The raw events keep their labels.
 */
export async function renderSessionExport(
  sessionId: string,
  events: RecordedEvent[],
  loadBlob: BlobLoader,
  usage: SessionUsage | null = null,
  names: Record<string, string> = {},
): Promise<ExportFiles> {
  if (events.length === 0) throw new AppError("NOT_FOUND", `session ${sessionId} has no events to export`);
  const { rounds: slices, placed, final } = splitRounds(events);
  const roundFiles: ExportFiles = new Map();
  const rounds: RoundMeta[] = [];
  for (const slice of slices) rounds.push(await renderRound(slice, loadBlob, roundFiles));

  const files: ExportFiles = new Map();
  files.set("summary.json", jsonFile(buildSummary(sessionId, placed, final, rounds, usage)));
  files.set("task-events.jsonl", jsonLines(stateEventLines(placed)));
  files.set("task-timeline.json", jsonFile(timelineLines(placed, names)));
  files.set("feedback_history.json", jsonFile(feedbackHistory(events).map((f) => ({ ...f, name: nameLabelsIn(f.by, names) }))));
  for (const [name, content] of roundFiles) files.set(name, content);
  // A staged session (the Forge pipeline): each artifact as it stands, under forge/.
  const task = startedTask(final);
  for (const [path, artifact] of Object.entries(task?.pipeline.artifacts ?? {})) {
    files.set(`forge/${path.replace(/^\.forge\//, "")}`, await loadBlob(artifact.blob.blob));
  }
  // A conversation: its transcript and its conversation events.
  if (isConversationExport(events)) {
    files.set("conversation.md", nameLabelsIn(conversationMarkdown(sessionId, events), names));
    files.set("conversation.jsonl", jsonLines(conversationLines(events)));
  }
  for (const name of files.keys()) assertExportPath(name);
  return files;
}
