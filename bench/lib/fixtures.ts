// Data the measurements append: the bench actor, sessions to append to, message events,
// and the event metadata a raw INSERT writes so that its rows look like the store's.
import crypto from "node:crypto";
import type { Actor } from "../../server/events/catalog";
import type { EventStore } from "../../server/events/store";
import { storedMetadata, type NewEvent } from "../../server/events/types";

export const benchActor: Actor = { kind: "system", id: "bench" };

export function uniqueStreamId(prefix: string): string {
  return `bench-${prefix}-${crypto.randomUUID()}`;
}

/** A stream cursor: the id and the version the next append expects. */
export interface StreamCursor {
  id: string;
  version: number;
}

/**
 * `count` sessions of one event each. Their ids name the measurement (`bench-<prefix>-<uuid>`)
 * unless `newId` makes them: a measurement of what a step writes gives them the product's own
 * ids (`newSessionId`), since the id is in every event row and index entry of the session.
 */
export async function createSessions(
  store: EventStore,
  count: number,
  prefix: string,
  newId: (prefix: string) => string = uniqueStreamId,
): Promise<StreamCursor[]> {
  const cursors: StreamCursor[] = [];
  for (let i = 0; i < count; i++) {
    const id = newId(prefix);
    const r = await store.append(
      id,
      "no_stream",
      [{ type: "SessionCreated", data: { title: `bench ${prefix} ${i}`, workflow: "bench", state: "open" } }],
      { actor: benchActor },
    );
    cursors.push({ id, version: r.version });
  }
  return cursors;
}

export function messageEvents(count: number, label: string): NewEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    type: "OperatorMessagePosted",
    data: { text: `${label} message ${i}` },
    eventId: crypto.randomUUID(),
  }));
}

/** The metadata JSON the store writes for one event, for raw rows of the same shape. */
export function rawMetadataJson(): string {
  return JSON.stringify(
    storedMetadata({
      actor: benchActor,
      correlationId: crypto.randomUUID(),
      causationId: null,
      schemaVersion: 1,
    }),
  );
}
