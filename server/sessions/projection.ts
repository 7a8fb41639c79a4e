// Projection: the `sessions` table (one row per session: title, workflow, current state,
// lineage, creator, and the task facts the dashboard filters on: project, mode, prompt,
// iteration, outcome). Written only by the events that change those; the event count and
// last activity come from the stream row every append already updates.
import type { Tx } from "../db/pool";
import type { Projection } from "../events/projection";
import type { RecordedEvent } from "../events/types";
import { actorLabel, type AppEvent } from "../events/catalog";
import { LINEAGE_CTE } from "../events/lineage";
import { attentionOf } from "../workflow/transition";

type ForkedEvent = RecordedEvent & Extract<AppEvent, { type: "SessionForked" }>;

interface TaskFacts {
  project_id: string | null;
  mode: string | null;
  prompt: string | null;
  iteration: number | null;
}

/**
 * What a fork inherits: the parent's task facts (they never change after TaskStarted) and
 * the iteration as the engine folds it: a rerun starts again at 1; any other fork keeps the
 * iteration reached at the fork point, looked up only when the parent has iterated since.
 */
async function inheritedFacts(tx: Tx, event: ForkedEvent): Promise<TaskFacts> {
  const { parentId, atVersion, reason } = event.data;
  const parent = await tx.query<TaskFacts>("SELECT project_id, mode, prompt, iteration FROM sessions WHERE id = $1", [parentId]);
  const facts = parent.rows[0] ?? { project_id: null, mode: null, prompt: null, iteration: null };
  if (facts.iteration === null) return facts;
  if (reason === "rerun") return { ...facts, iteration: 1 };
  if (facts.iteration <= 1) return facts;
  const at = await tx.query<{ iteration: number }>(
    `WITH RECURSIVE ${LINEAGE_CTE}
     SELECT (e.data->>'iteration')::int AS iteration
     FROM lineage l CROSS JOIN LATERAL (
       SELECT version, data FROM events
       WHERE stream_id = l.id AND version <= LEAST(COALESCE(l.cap, $2), $2) AND type = 'IterationStarted'
       ORDER BY version DESC LIMIT 1
     ) e
     ORDER BY e.version DESC LIMIT 1`,
    [parentId, atVersion],
  );
  return { ...facts, iteration: at.rows[0]?.iteration ?? 1 };
}

type StateChangedEvent = RecordedEvent & Extract<AppEvent, { type: "SessionStateChanged" }>;

/** Events recorded before `waitsFor` existed name the review loop's one waiting state. */
function waitsForPerson(event: StateChangedEvent): boolean {
  return event.data.waitsFor === "person" || (event.data.waitsFor === undefined && event.data.to === "awaiting_operator_confirm");
}

export const sessionsProjection: Projection = {
  name: "sessions",
  handles: [
    "SessionCreated",
    "SessionForked",
    "SessionStateChanged",
    "TaskStarted",
    "IterationStarted",
    "SessionFinalized",
    "SessionResumed",
    "AttentionAcknowledged",
    // Conversations (req C1–C8): their project, mode, and whether they wait for a person.
    "ConversationStarted",
    "ConversationSetup",
    "ModeSwitched",
    "ConversationStalled",
    "MessagePosted",
    "ConversationTerminated",
  ],
  tables: ["sessions"],
  async apply(tx, events) {
    for (const event of events as (RecordedEvent & AppEvent)[]) {
      switch (event.type) {
        case "SessionCreated":
        case "SessionForked": {
          const forked = event.type === "SessionForked" ? event.data : null;
          const facts = event.type === "SessionForked" ? await inheritedFacts(tx, event) : null;
          await tx.query(
            `INSERT INTO sessions (id, title, workflow, state, parent_id, fork_version, created_by, created_at, project_id, mode, prompt, iteration, outcome)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
            [
              event.streamId,
              event.data.title,
              event.data.workflow,
              event.data.state,
              forked?.parentId ?? null,
              forked?.atVersion ?? null,
              actorLabel(event.metadata.actor),
              event.recordedAt,
              facts?.project_id ?? null,
              facts?.mode ?? null,
              facts?.prompt ?? null,
              facts?.iteration ?? null,
              // A fork of a finished position is a finished copy.
              forked?.outcome ?? null,
            ],
          );
          break;
        }
        case "SessionStateChanged":
          // Waiting for a person puts the session in the inbox; any other move takes it out
          // (SessionFinalized, right after, puts it back when the ending needs someone).
          await tx.query({
            name: "catcafe_sessions_state",
            text: `UPDATE sessions SET state = $2, attention = $3, attention_since = CASE WHEN $3::text IS NULL THEN NULL ELSE $4::timestamptz END,
                                       acked_by = NULL, acked_at = NULL
                   WHERE id = $1`,
            values: [event.streamId, event.data.to, waitsForPerson(event) ? "waiting" : null, event.recordedAt],
          });
          break;
        case "TaskStarted":
          await tx.query({
            name: "catcafe_sessions_task",
            text: "UPDATE sessions SET project_id = $2, mode = $3, prompt = $4, iteration = 1 WHERE id = $1",
            values: [event.streamId, event.data.project.id, event.data.mode, event.data.prompt],
          });
          break;
        case "IterationStarted":
          await tx.query({
            name: "catcafe_sessions_iteration",
            text: "UPDATE sessions SET iteration = $2 WHERE id = $1",
            values: [event.streamId, event.data.iteration],
          });
          break;
        case "SessionFinalized": {
          const attention = attentionOf(event.data.outcome);
          await tx.query({
            name: "catcafe_sessions_outcome",
            text: `UPDATE sessions SET outcome = $2, attention = $3, attention_since = CASE WHEN $3::text IS NULL THEN NULL ELSE $4::timestamptz END,
                                       acked_by = NULL, acked_at = NULL
                   WHERE id = $1`,
            values: [event.streamId, event.data.outcome, attention, event.recordedAt],
          });
          break;
        }
        case "SessionResumed":
          // It runs again: no outcome; the state change right after says where.
          await tx.query({
            name: "catcafe_sessions_resumed",
            text: "UPDATE sessions SET outcome = NULL WHERE id = $1",
            values: [event.streamId],
          });
          break;
        case "AttentionAcknowledged":
          await tx.query({
            name: "catcafe_sessions_ack",
            text: "UPDATE sessions SET acked_by = $2, acked_at = $3 WHERE id = $1",
            values: [event.streamId, actorLabel(event.metadata.actor), event.recordedAt],
          });
          break;
        case "ConversationStarted":
        case "ModeSwitched":
          await tx.query({
            name: "catcafe_sessions_conversation_mode",
            text: "UPDATE sessions SET mode = $2 WHERE id = $1",
            values: [event.streamId, event.type === "ModeSwitched" ? event.data.to : event.data.mode],
          });
          break;
        case "ConversationSetup":
          await tx.query({
            name: "catcafe_sessions_conversation_project",
            text: "UPDATE sessions SET project_id = $2 WHERE id = $1",
            values: [event.streamId, event.data.project.id],
          });
          break;
        case "ConversationStalled":
          // Stalled: nobody is called until a person writes, so a person is needed.
          await tx.query({
            name: "catcafe_sessions_stalled",
            text: `UPDATE sessions SET state = 'stalled', attention = 'waiting', attention_since = $2, acked_by = NULL, acked_at = NULL
                   WHERE id = $1`,
            values: [event.streamId, event.recordedAt],
          });
          break;
        case "MessagePosted":
          await tx.query({
            name: "catcafe_sessions_unstalled",
            text: "UPDATE sessions SET state = 'open', attention = NULL, attention_since = NULL WHERE id = $1 AND state = 'stalled'",
            values: [event.streamId],
          });
          break;
        case "ConversationTerminated":
          await tx.query({
            name: "catcafe_sessions_terminated",
            text: "UPDATE sessions SET state = 'terminated', outcome = 'terminated', attention = NULL, attention_since = NULL WHERE id = $1",
            values: [event.streamId],
          });
          break;
        default:
          break;
      }
    }
  },
};
