// The replay peer: Emmett's PostgreSQL event store (@event-driven-io/emmett-postgresql)
// folding a stream with `aggregateStream` (read the whole stream, evolve each event; no
// snapshots). It holds a copy of a Cat Cafe session's events (type, data, metadata) in its
// own emt_* tables on the bench's database, and folds them with the engine's own evolve,
// so both sides read the same bytes and run the same fold.
//
// Emmett's connection layer (dumbo) sets node-pg's GLOBAL type parsers (int8 → BigInt,
// json/jsonb → its own deserializer) when it opens. Every other query of the bench expects
// node-pg's defaults, so those are put back at once, and Emmett gets its own parsers back
// only while one of its calls runs (the bench never runs two things at once).
import pg from "pg";
import type { Event } from "@event-driven-io/emmett";
import { getPostgreSQLEventStore, type PostgresEventStore } from "@event-driven-io/emmett-postgresql";
import type { FoldEvent } from "../../server/events/types";

/** OIDs dumbo sets parsers for: int8, jsonb, json. */
const PARSED_OIDS = [20, 3802, 114] as const;
type Parsers = Array<readonly [number, (value: string) => unknown]>;

function currentParsers(): Parsers {
  return PARSED_OIDS.map((oid) => [oid, pg.types.getTypeParser(oid, "text")] as const);
}

function install(parsers: Parsers): void {
  for (const [oid, parser] of parsers) pg.types.setTypeParser(oid, parser);
}

type EmmettEvent = Event<string, Record<string, unknown>, Record<string, unknown> | undefined>;

export interface EmmettReplayPeer {
  /** Appends `events` as a new stream, in batches; returns its name. */
  copyStream(events: Array<{ type: string; data: unknown; metadata: unknown }>): Promise<string>;
  /** Emmett's aggregateStream over the whole stream with `evolve`. */
  aggregate<S>(streamName: string, evolve: (state: S, event: FoldEvent) => S, initial: S): Promise<S>;
  close(): Promise<void>;
}

export async function openEmmettReplayPeer(connectionString: string): Promise<EmmettReplayPeer> {
  const ours = currentParsers();
  const pool = new pg.Pool({ connectionString, max: 4 });
  let store: PostgresEventStore;
  let theirs: Parsers;
  try {
    store = getPostgreSQLEventStore(connectionString, { connectionOptions: { pool } });
    await store.schema.migrate();
    theirs = currentParsers();
  } finally {
    install(ours);
  }
  const asEmmett = async <T>(fn: () => Promise<T>): Promise<T> => {
    install(theirs);
    try {
      return await fn();
    } finally {
      install(ours);
    }
  };
  return {
    copyStream: (events) =>
      asEmmett(async () => {
        const name = `session-${crypto.randomUUID()}`;
        let version: bigint | undefined;
        for (let i = 0; i < events.length; i += 400) {
          const batch = events.slice(i, i + 400).map((e) => ({
            type: e.type,
            data: e.data as Record<string, unknown>,
            metadata: e.metadata as Record<string, unknown>,
          }));
          const r = await store.appendToStream(name, batch, version === undefined ? undefined : { expectedStreamVersion: version });
          version = r.nextExpectedStreamVersion;
        }
        return name;
      }),
    async aggregate<S>(streamName: string, evolve: (state: S, event: FoldEvent) => S, initial: S): Promise<S> {
      const r = await asEmmett(() =>
        store.aggregateStream<S, EmmettEvent>(streamName, {
          initialState: () => initial,
          // Emmett reads no recording time: the fold gets "" (the engine's evolve then keeps no start time).
          evolve: (state: S, event: { type: string; data: unknown; metadata: { streamPosition: bigint } }) =>
            evolve(state, { version: Number(event.metadata.streamPosition), type: event.type, data: event.data, recordedAt: "" }),
        }),
      );
      return r.state;
    },
    close: async () => {
      await store.close().catch(() => {});
      await pool.end().catch(() => {});
    },
  };
}
