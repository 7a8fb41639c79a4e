// The Emmett peer: Emmett's PostgreSQL event store (@event-driven-io/emmett-postgresql),
// opened on the bench's own database through a pool the measurement owns, its schema
// created up front (its emt_* tables live beside ours and touch none of them), and an
// append with an exact expected stream version, as Cat Cafe's store appends.
//
// Emmett's connection layer (dumbo) replaces node-pg's GLOBAL type parsers when it opens a
// pool (int8 → BigInt, json/jsonb → its own deserializer). That would change what every
// other measurement's queries return, Cat Cafe's store included, so the parsers are put
// back as soon as the store and its schema are ready: its append path reads no json and
// turns the int8 columns it reads into BigInt itself, so it works either way.
import pg from "pg";
import { getPostgreSQLEventStore, type PostgresEventStore } from "@event-driven-io/emmett-postgresql";
import { rawMetadataJson, uniqueStreamId } from "../lib/fixtures";

/** OIDs dumbo re-registers: int8, jsonb, json. */
const PARSED_OIDS = [20, 3802, 114] as const;

export interface EmmettEvent {
  type: string;
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface EmmettPeer {
  /** Appends with the stream's exact expected version; returns the stream's new version. */
  append(streamName: string, expectedVersion: bigint | null, events: EmmettEvent[]): Promise<bigint>;
}

/** node-pg's current text parsers for the OIDs dumbo changes, and a way to put them back. */
function snapshotTypeParsers(): () => void {
  const saved = PARSED_OIDS.map((oid) => [oid, pg.types.getTypeParser(oid, "text")] as const);
  return () => {
    for (const [oid, parser] of saved) pg.types.setTypeParser(oid, parser);
  };
}

/** Opens Emmett's store on `pool` (the caller ends the pool) and creates its schema. */
export async function openEmmettPeer(connectionString: string, pool: pg.Pool): Promise<EmmettPeer> {
  const restoreParsers = snapshotTypeParsers();
  let store: PostgresEventStore;
  try {
    store = getPostgreSQLEventStore(connectionString, { connectionOptions: { pool } });
    await store.schema.migrate();
  } finally {
    restoreParsers();
  }
  return {
    async append(streamName, expectedVersion, events) {
      const r = await store.appendToStream(
        streamName,
        events,
        expectedVersion === null ? undefined : { expectedStreamVersion: expectedVersion },
      );
      return r.nextExpectedStreamVersion;
    },
  };
}

/** `count` message events with the data and metadata Cat Cafe's appends write, for Emmett. */
export function emmettMessages(count: number, label: string): EmmettEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    type: "OperatorMessagePosted",
    data: { text: `${label} message ${i}` },
    metadata: JSON.parse(rawMetadataJson()) as Record<string, unknown>,
  }));
}

/** A stream cursor on Emmett's side: the name and the version the next append expects. */
export interface EmmettCursor {
  name: string;
  version: bigint;
}

/** `count` new Emmett streams of one event each ("bench-<uuid>": Emmett's stream type is "bench"). */
export async function createEmmettStreams(peer: EmmettPeer, count: number, label: string): Promise<EmmettCursor[]> {
  const cursors: EmmettCursor[] = [];
  for (let i = 0; i < count; i++) {
    const name = uniqueStreamId(`emmett-${label}`);
    cursors.push({ name, version: await peer.append(name, null, emmettMessages(1, label)) });
  }
  return cursors;
}
