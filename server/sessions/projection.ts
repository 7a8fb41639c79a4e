// Projection: the `sessions` table (one row per session with its current state, for the
// dashboard list). One statement per append: the batch is folded in memory first.
import type { Projection } from "../events/projection";
import type { RecordedEvent } from "../events/types";
import { actorLabel, type AppEvent } from "../events/catalog";

export const sessionsProjection: Projection = {
  name: "sessions",
  tables: ["sessions"],
  async apply(tx, events) {
    // An append touches one stream; a rebuild batch may hold many: fold per stream, in order.
    const byStream = new Map<string, RecordedEvent[]>();
    for (const e of events) byStream.set(e.streamId, [...(byStream.get(e.streamId) ?? []), e]);
    for (const [streamId, batch] of byStream) {
      let created: { title: string; workflow: string; parentId: string | null; forkVersion: number | null; createdBy: string; createdAt: string } | null = null;
      let state: string | null = null;
      for (const e of batch) {
        const event = e as RecordedEvent & AppEvent;
        if (event.type === "SessionCreated") {
          created = { title: event.data.title, workflow: event.data.workflow, parentId: null, forkVersion: null, createdBy: actorLabel(e.metadata.actor), createdAt: e.recordedAt };
          state = event.data.state;
        } else if (event.type === "SessionForked" && e.streamId === streamId && !created) {
          created = { title: event.data.title, workflow: event.data.workflow, parentId: event.data.parentId, forkVersion: event.data.atVersion, createdBy: actorLabel(e.metadata.actor), createdAt: e.recordedAt };
          state = event.data.state;
        } else if (event.type === "SessionStateChanged") {
          state = event.data.to;
        }
      }
      const last = batch.at(-1)!;
      if (created) {
        await tx.query(
          `INSERT INTO sessions (id, title, workflow, state, version, parent_id, fork_version, created_by, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [streamId, created.title, created.workflow, state, last.version, created.parentId, created.forkVersion, created.createdBy, created.createdAt, last.recordedAt],
        );
      } else {
        await tx.query({
          name: "catcafe_sessions_touch",
          text: `UPDATE sessions SET version = $2, updated_at = $3, state = COALESCE($4, state) WHERE id = $1`,
          values: [streamId, last.version, last.recordedAt, state],
        });
      }
    }
  },
};
