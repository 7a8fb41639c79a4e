// A conversation as people read it (dashboard, `catcafe chat watch`): its messages, the
// calls in flight, what the mode noted where it happened (a routing with its candidates, a
// vote's tally), mode switches, stalls and the end — folded from its events.
import { allSimulated } from "../../lib/simulated";
import type { Queryable } from "../db/pool";
import type { AppEvent } from "../events/catalog";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import { MODES } from "../modes/registry";
import type { ConversationAgent, ModeNote } from "../modes/types";
import { conversationFold, isConversationEvent, type ConversationRecord } from "./fold";
import { CONVERSATION_WORKFLOW } from "./record";
import { AppError } from "../errors";

export type ConversationEntry = { version: number; at: string } & (
  | { kind: "person"; by: string; text: string; mentions: string[] }
  | { kind: "agent"; agent: string; text: string; mentions: string[] }
  | { kind: "system"; text: string }
  | { kind: "call"; callId: string; agent: string; caller: string }
  | { kind: "failed"; agent: string; errorClass: string; message: string }
  | { kind: "discarded"; agent: string | null; errorClass: string; reason: string }
  | { kind: "note"; note: ModeNote }
  | { kind: "progress"; progress: string; detail: string }
  | { kind: "stalled"; reason: string; cycle: string[] | null }
  | { kind: "terminated"; reason: string; by: string }
  /** A person's `/task <prompt>` and the task session it started (req W13). */
  | { kind: "task"; by: string; text: string; sessionId: string }
);

export interface ConversationView {
  id: string;
  title: string;
  project: { id: string; name: string } | null;
  /** Every agent it calls is simulated (the scripted brain): the page says its content is canned. */
  simulated: boolean;
  status: "open" | "stalled" | "terminated";
  mode: string;
  modeDescription: string;
  modeConfig: unknown;
  modeState: { currentStep: string | null; stepHistory: string[] };
  agents: ConversationAgent[];
  stallAfter: number;
  turns: number;
  inFlight: Array<{ callId: string; agent: string }>;
  entries: ConversationEntry[];
  version: number;
  /** A replay: the conversation as it was at `version` (the end of a decision), of `latest` events. */
  asOf: { version: number; latest: number } | null;
}

function entryOf(event: RecordedEvent & AppEvent): ConversationEntry | null {
  const at = { version: event.version, at: event.recordedAt };
  switch (event.type) {
    case "MessagePosted":
      return { ...at, kind: "person", by: event.data.by, text: event.data.text, mentions: event.data.mentions };
    case "AgentReplied":
      return { ...at, kind: "agent", agent: event.data.agent, text: event.data.text, mentions: event.data.mentions };
    case "SystemMessage":
      return { ...at, kind: "system", text: event.data.text };
    case "AgentCallScheduled":
      return { ...at, kind: "call", callId: event.data.callId, agent: event.data.agent, caller: event.data.caller };
    case "AgentCallFailed":
      return { ...at, kind: "failed", agent: event.data.agent, errorClass: event.data.errorClass, message: event.data.message };
    case "ReplyDiscarded":
      return { ...at, kind: "discarded", agent: event.data.agent, errorClass: event.data.errorClass, reason: event.data.reason };
    case "ModeNoted":
      return { ...at, kind: "note", note: event.data.note };
    case "ProgressNoted":
      return { ...at, kind: "progress", progress: event.data.kind, detail: event.data.detail };
    case "ConversationStalled":
      return { ...at, kind: "stalled", reason: event.data.reason, cycle: event.data.cycle };
    case "ConversationTerminated":
      return { ...at, kind: "terminated", reason: event.data.reason, by: event.data.by };
    case "TaskStartedFromConversation":
      return { ...at, kind: "task", by: event.data.by, text: event.data.text, sessionId: event.data.sessionId };
    default:
      return null;
  }
}

export function conversationView(
  id: string,
  record: ConversationRecord,
  events: readonly RecordedEvent[],
  asOf: ConversationView["asOf"] = null,
): ConversationView {
  const created = (events as (RecordedEvent & AppEvent)[]).find((e) => e.type === "SessionCreated");
  if (record.state.status === "none" || created?.type !== "SessionCreated" || created.data.workflow !== CONVERSATION_WORKFLOW) {
    throw new AppError("NOT_FOUND", `session ${id} is not a conversation`);
  }
  const { state } = record;
  // A fork's own title (its SessionForked), else the one it was created with.
  const forked = (events as (RecordedEvent & AppEvent)[]).find((e) => e.type === "SessionForked" && e.streamId === id);
  return {
    id,
    title: forked?.type === "SessionForked" ? forked.data.title : created.data.title,
    project: record.setup ? { id: record.setup.project.id, name: record.setup.project.name } : null,
    simulated: allSimulated(Object.values(record.setup?.runtimes ?? {}).map((r) => r.config)),
    status: state.status === "terminated" ? "terminated" : state.stalled ? "stalled" : "open",
    mode: state.mode,
    modeDescription: MODES[state.mode]?.description ?? "",
    modeConfig: state.config,
    modeState: { currentStep: state.modeState.currentStep, stepHistory: state.modeState.stepHistory },
    agents: state.agents,
    stallAfter: state.stallAfter,
    turns: state.turns,
    inFlight: Object.entries(state.inFlight).map(([callId, c]) => ({ callId, agent: c.agent })),
    entries: (events as (RecordedEvent & AppEvent)[]).flatMap((e) => (isConversationEvent(e) ? (entryOf(e) ?? []) : [])),
    version: record.version,
    asOf,
  };
}

/**
 * The conversation now, or as it was at event `atVersion` (a replay), moved to the end of
 * the decision holding it (its events were recorded together): a position a fork can take.
 * Its state is the replay state there (`stateAt`, from the nearest snapshot, as every replay's);
 * its entries are the events up to there.
 */
export async function readConversation(store: EventStore, id: string, atVersion?: number): Promise<ConversationView> {
  const latest = await store.streamVersion(id);
  if (latest === null) throw new AppError("NOT_FOUND", `stream ${id} does not exist`);
  const events = await store.readStream(id, { toVersion: latest });
  let end = latest;
  if (atVersion !== undefined) {
    const at = events.find((e) => e.version === Math.min(atVersion, latest));
    if (!at) throw new AppError("NOT_FOUND", `session ${id} has no events`);
    end = events.filter((e) => e.txId === at.txId).at(-1)!.version;
  }
  const record = await store.stateAt(id, end, conversationFold);
  const shown = end === latest ? events : events.filter((e) => e.version <= end);
  return conversationView(id, record, shown, atVersion === undefined ? null : { version: end, latest });
}

export interface ConversationListItem {
  id: string;
  title: string;
  projectId: string | null;
  mode: string | null;
  state: string;
  createdAt: string;
  createdBy: string;
}

/** The latest conversations, newest first (the sessions projection holds them). */
export async function listConversations(
  db: Queryable,
  options: { projectId?: string; limit?: number } = {},
): Promise<ConversationListItem[]> {
  const r = await db.query<{
    id: string;
    title: string;
    project_id: string | null;
    mode: string | null;
    state: string;
    created_at: Date;
    created_by: string;
  }>(
    `SELECT id, title, project_id, mode, state, created_at, created_by FROM sessions
     WHERE workflow = $1 AND ($2::text IS NULL OR project_id = $2)
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [CONVERSATION_WORKFLOW, options.projectId ?? null, options.limit ?? 50],
  );
  return r.rows.map((row) => ({
    id: row.id,
    title: row.title,
    projectId: row.project_id,
    mode: row.mode,
    state: row.state,
    createdAt: row.created_at.toISOString(),
    createdBy: row.created_by,
  }));
}
