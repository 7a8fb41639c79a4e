// A very long task session written straight into the event tables: the same review rounds
// as task-fixtures.ts longTaskSession, each event validated and summarised by the app's
// registry as an append would, but inserted 5,000 rows per statement (a 100,000-event
// session through the store would take minutes of single appends to build). No projection
// sees it: the timeline reads the events table only.
import crypto from "node:crypto";
import type { Queryable } from "../../server/db/pool";
import type { Actor } from "../../server/events/catalog";
import type { EventRegistry } from "../../server/events/registry";
import { storedMetadata, type NewEvent } from "../../server/events/types";
import { reviewRound, taskStartedData } from "./task-fixtures";

const ROWS_PER_INSERT = 5000;

function* sessionEvents(total: number): Generator<NewEvent> {
  yield { type: "SessionCreated", data: { title: "A very long review loop", workflow: "review_loop", state: "start" } };
  yield { type: "TaskStarted", data: taskStartedData("bench-bulk", "Fix slugify() for every script") };
  let count = 2;
  for (let n = 1; ; n++) {
    for (const event of reviewRound(n)) {
      if (count++ >= total) return;
      yield event;
    }
  }
}

/** A session of exactly `total` events, its stream row included; returns its id. */
export async function bulkTaskSession(db: Queryable, registry: EventRegistry, actor: Actor, total: number): Promise<string> {
  const id = `bench-bulk-${crypto.randomUUID()}`;
  const correlationId = crypto.randomUUID();
  await db.query("INSERT INTO streams (id, type, version) VALUES ($1, 'session', $2)", [id, total]);
  let rows: { version: number; type: string; summary: string; data: string; metadata: string }[] = [];
  const flush = async () => {
    await db.query(
      `INSERT INTO events (event_id, stream_id, version, type, summary, data, metadata)
       SELECT gen_random_uuid(), $1, e.version, e.type, e.summary, e.data, e.metadata
       FROM unnest($2::int[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[]) AS e(version, type, summary, data, metadata)`,
      [
        id,
        rows.map((r) => r.version),
        rows.map((r) => r.type),
        rows.map((r) => r.summary),
        rows.map((r) => r.data),
        rows.map((r) => r.metadata),
      ],
    );
    rows = [];
  };
  let version = 0;
  for (const event of sessionEvents(total)) {
    const { data, schemaVersion } = registry.encode(event.type, event.data);
    rows.push({
      version: ++version,
      type: event.type,
      summary: registry.summarize(event.type, data),
      data: JSON.stringify(data),
      metadata: JSON.stringify(storedMetadata({ actor, correlationId, causationId: null, schemaVersion })),
    });
    if (rows.length === ROWS_PER_INSERT) await flush();
  }
  if (rows.length) await flush();
  return id;
}
