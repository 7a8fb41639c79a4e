// Projection: the `sessions` table (one row per session: title, workflow, current state,
// lineage, creator). Written only by the events that change those; the event count and
// last activity come from the stream row every append already updates.
import type { Projection } from "../events/projection";
import type { RecordedEvent } from "../events/types";
import { actorLabel, type AppEvent } from "../events/catalog";

export const sessionsProjection: Projection = {
  name: "sessions",
  handles: ["SessionCreated", "SessionForked", "SessionStateChanged"],
  tables: ["sessions"],
  async apply(tx, events) {
    for (const event of events as (RecordedEvent & AppEvent)[]) {
      switch (event.type) {
        case "SessionCreated":
        case "SessionForked": {
          const forked = event.type === "SessionForked" ? event.data : null;
          await tx.query(
            `INSERT INTO sessions (id, title, workflow, state, parent_id, fork_version, created_by, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
            [event.streamId, event.data.title, event.data.workflow, event.data.state, forked?.parentId ?? null, forked?.atVersion ?? null, actorLabel(event.metadata.actor), event.recordedAt],
          );
          break;
        }
        case "SessionStateChanged":
          await tx.query({
            name: "catcafe_sessions_state",
            text: "UPDATE sessions SET state = $2 WHERE id = $1",
            values: [event.streamId, event.data.to],
          });
          break;
        default:
          break;
      }
    }
  },
};
