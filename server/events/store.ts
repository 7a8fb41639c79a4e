// The event store: append with optimistic concurrency, read a stream (through its fork
// lineage), read the global order without ever skipping a late-committing event, fork,
// and replay a stream to any position. One `events` table is the truth; see
// docs/architecture.md for why each choice was made.
import crypto from "node:crypto";
import type pg from "pg";
import { AppError } from "../errors";
import { withTransaction, type Db, type Queryable, type Tx } from "../db/pool";
import { appRegistry } from "./catalog";
import { hasCommandKey, recordKeyEffect } from "./command-keys";
import { foldStreamAt, LATEST_VERSION } from "./fold-read";
import { LINEAGE_CTE } from "./lineage";
import { timeOrderedId } from "./ids";
import type { EventRegistry } from "./registry";
import type { Projection } from "./projection";
import { redactedJson } from "../redact";
import { activeTraceparent } from "../tracing/spans";
import { recordEventsAppended } from "../metrics/registry";
import { eventCategory } from "./categories";
import type { StreamFold } from "./snapshots";
import {
  recordedMetadata,
  storedMetadata,
  type AppendMetadata,
  type AppendResult,
  type ExpectedVersion,
  type GlobalCheckpoint,
  type NewEvent,
  type RecordedEvent,
  type StoredEventMetadata,
} from "./types";

export const EVENTS_CHANNEL = "catcafe_events";

/**
 * The doorbell an append rings: NOTIFY the stream's id on {@link EVENTS_CHANNEL}, only when
 * some web process watches that stream live (its row in `live_interest`, kept by
 * server/sessions/view/listener.ts). A transaction that NOTIFYs takes a database-wide lock
 * at commit and holds it through its flush, so writers nobody watches would otherwise
 * commit one at a time (docs/architecture.md: 32 writers at a sixth of raw INSERTs).
 */
export function notifyWatchersSql(streamIdSql: string): string {
  return `(SELECT pg_notify('${EVENTS_CHANNEL}', ${streamIdSql}) FROM live_interest
           WHERE stream_id = ${streamIdSql} AND expires_at > now() LIMIT 1)`;
}

/** An `events` row as PostgreSQL returns it (also read by ./rebuild.ts). */
export interface EventRow {
  position: string;
  tx_id: string;
  event_id: string;
  stream_id: string;
  version: number;
  type: string;
  data: unknown;
  metadata: StoredEventMetadata;
  recorded_at: Date;
}

export const EVENT_COLUMNS = "position, tx_id, event_id, stream_id, version, type, data, metadata, recorded_at";

/**
 * A stream's events through its lineage, `$2..$3`, and only those whose type `filter` lets
 * through. Each lineage member's range is read through the (stream_id, version) index
 * (LATERAL, not flattened: OFFSET 0): with a plain join the planner, once statistics show one
 * long stream, scans every event of every stream to read a short one (20 ms instead of under
 * 1 ms for a 30-event stream beside a 100,000-event one).
 */
function readStreamSql(filter: string): string {
  return `WITH RECURSIVE ${LINEAGE_CTE}
  SELECT e.* FROM lineage l CROSS JOIN LATERAL (
    SELECT ${EVENT_COLUMNS} FROM events
    WHERE stream_id = l.id AND version >= $2 AND version <= LEAST($3, COALESCE(l.cap, $3))${filter}
    OFFSET 0
  ) e
  ORDER BY e.version`;
}

export const READ_STREAM_SQL = readStreamSql("");
/** The same, of the types `$4` only: the rest is never sent nor decoded. */
const READ_STREAM_OF_TYPES_SQL = readStreamSql(" AND type = ANY($4::text[])");

/**
 * One statement per append: bump (or create) the stream row, checking the expected
 * version, then insert the events numbered from the new version, then wake listeners.
 * The stream row is written first, so the transaction id is taken at the stream lock.
 * No row comes back when the version check fails. $1 stream, $2 count, $3 expected
 * version (or stream type for a new stream), $4.. per-event arrays. Watchers of the stream
 * are woken on commit ({@link notifyWatchersSql}).
 */
function appendStatement(expected: ExpectedVersion): string {
  const bump =
    expected === "no_stream" || expected === 0
      ? `INSERT INTO streams (id, type, version) VALUES ($1, $3, $2) ON CONFLICT (id) DO NOTHING RETURNING version`
      : expected === "any"
        ? `UPDATE streams SET version = version + $2, updated_at = now() WHERE id = $1 AND $3::int IS NULL RETURNING version`
        : `UPDATE streams SET version = version + $2, updated_at = now() WHERE id = $1 AND version = $3 RETURNING version`;
  return `WITH bump AS (${bump}),
    ins AS (
      INSERT INTO events (event_id, stream_id, version, type, summary, data, metadata)
      SELECT e.event_id, $1, bump.version - $2 + e.n::int, e.type, e.summary, e.data, e.metadata
      FROM bump, unnest($4::uuid[], $5::text[], $6::text[], $7::jsonb[], $8::jsonb[]) WITH ORDINALITY
        AS e(event_id, type, summary, data, metadata, n)
      RETURNING ${EVENT_COLUMNS})
    SELECT ins.*, ${notifyWatchersSql("$1")} AS notified FROM ins ORDER BY version`;
}

export interface EventStoreOptions {
  registry?: EventRegistry;
  projections?: Projection[];
}

export interface ForkInput {
  parentId: string;
  atVersion: number;
  childId: string;
  /** The SessionForked event that opens the child stream, then anything that follows at once. */
  event: NewEvent | NewEvent[];
  metadata: AppendMetadata;
}

/**
 * Who is told of every append made on a transaction's client while it watches
 * (EventStore.watchAppends): kept per client, not per store, so that an append through any
 * store on that transaction is seen.
 */
const appendWatchers = new WeakMap<Queryable, (events: readonly RecordedEvent[]) => void>();

export class EventStore {
  readonly registry: EventRegistry;
  readonly projections: Projection[];
  /** The projections the application applies after an append (the others run in the database, in the append itself). */
  private readonly appProjections: Projection[];

  constructor(
    readonly pool: Db,
    options: EventStoreOptions = {},
  ) {
    this.registry = options.registry ?? appRegistry;
    this.projections = options.projections ?? [];
    this.appProjections = this.projections.filter((p) => !p.inDatabase);
  }

  /**
   * Appends in its own transaction. A retry of an append whose events were already
   * recorded (same event ids) returns the recorded events with `duplicate: true`.
   */
  async append(
    streamId: string,
    expected: ExpectedVersion,
    events: NewEvent[],
    metadata: AppendMetadata,
    options: { streamType?: string } = {},
  ): Promise<AppendResult> {
    try {
      // A single statement is its own transaction: when no projection reacts to these
      // events, the append is one round trip; otherwise projections join a transaction.
      // So does an append under a command's idempotency key, whose row notes it (./command-keys.ts).
      const needsProjections = events.some((e) => this.appProjections.some((p) => p.handles.includes(e.type)));
      return needsProjections || hasCommandKey()
        ? await withTransaction(this.pool, (tx) => this.appendInTx(tx, streamId, expected, events, metadata, options))
        : await this.appendInTx(this.pool, streamId, expected, events, metadata, options);
    } catch (err) {
      const duplicate = await this.findDuplicateAppend(streamId, events, err);
      if (duplicate) return duplicate;
      throw err;
    }
  }

  /**
   * Appends inside the caller's transaction. The stream lock taken here must be the
   * transaction's first write: that is what makes the global order (by transaction id)
   * agree with every stream's own order. Reads before it are fine.
   */
  async appendInTx(
    tx: Tx | Db,
    streamId: string,
    expected: ExpectedVersion,
    events: NewEvent[],
    metadata: AppendMetadata,
    options: { streamType?: string } = {},
  ): Promise<AppendResult> {
    if (events.length === 0) throw new AppError("INVALID_INPUT", "append needs at least one event");
    // Nothing the server knows to be a secret is recorded, whoever wrote it into an event (server/redact.ts).
    const encoded = events.map((e) => {
      const valid = this.registry.encode(e.type, e.data);
      const text = redactedJson(valid.data);
      if (!text.redacted) return { ...e, ...valid, json: text.json };
      // Redacted data is validated again: what is stored is always what the schema allows.
      const again = this.registry.encode(e.type, text.value);
      return { ...e, ...again, json: JSON.stringify(again.data) };
    });
    // Events appended together share a correlation id; one event alone with none given needs
    // none stored: it reads back as its own id (recordedMetadata).
    const correlationId = metadata.correlationId ?? (events.length > 1 ? crypto.randomUUID() : undefined);
    // Tracing on and in a span: the events carry its context (a step's StepScheduled takes the
    // command's trace to the runner that claims it).
    const traceparent = activeTraceparent();
    const isNew = expected === "no_stream" || expected === 0;
    const rows = await this.refusedByProjection(() =>
      tx.query<EventRow>({
        name: `catcafe_append_${isNew ? "new" : expected === "any" ? "any" : "expected"}`,
        text: appendStatement(expected),
        values: [
          streamId,
          events.length,
          isNew ? (options.streamType ?? "session") : expected === "any" ? null : expected,
          encoded.map((e) => e.eventId ?? timeOrderedId()),
          encoded.map((e) => e.type),
          encoded.map((e) => this.registry.summarize(e.type, e.data)),
          encoded.map((e) => e.json),
          encoded.map((e) =>
            JSON.stringify(
              storedMetadata({
                actor: metadata.actor,
                correlationId,
                causationId: metadata.causationId ?? null,
                schemaVersion: e.schemaVersion,
                ...(traceparent ? { traceparent } : {}),
              }),
            ),
          ),
        ],
      }),
    );
    if (rows.rowCount === 0) {
      if (expected === "any") throw new AppError("NOT_FOUND", `stream ${streamId} does not exist`, { streamId });
      throw await this.conflict(tx, streamId, expected);
    }
    const recorded = rows.rows.map((r) => this.toRecorded(r, false));
    // Counted here, in this process (docs/operations.md, "Metrics"): an increment, no query.
    recordEventsAppended(recorded.map((e) => ({ category: eventCategory(e.type), type: e.type })));
    for (const projection of this.appProjections) {
      if (recorded.some((e) => projection.handles.includes(e.type))) await projection.apply(tx as Tx, recorded, "live");
    }
    appendWatchers.get(tx)?.(recorded);
    const version = recorded.at(-1)!.version;
    await recordKeyEffect(tx, streamId, version);
    return { streamId, version, events: recorded, duplicate: false };
  }

  /**
   * Calls `onAppend` with the events of every append made on `tx` (through any store) until the
   * returned function is called: a transaction's owner learns what code it called appended
   * (the runner's outcome transaction: whether its reaction scheduled a step). One watcher per client.
   */
  watchAppends(tx: Tx, onAppend: (events: readonly RecordedEvent[]) => void): () => void {
    appendWatchers.set(tx, onAppend);
    return () => {
      if (appendWatchers.get(tx) === onAppend) appendWatchers.delete(tx);
    };
  }

  /** Runs a statement that appends; a projection applied in the database that refuses it throws its own error. */
  async refusedByProjection<T>(statement: () => Promise<T>): Promise<T> {
    try {
      return await statement();
    } catch (err) {
      for (const p of this.projections) {
        const refusal = p.inDatabase?.refusal(err);
        if (refusal) throw refusal;
      }
      throw err;
    }
  }

  private async conflict(db: Queryable, streamId: string, expected: ExpectedVersion): Promise<AppError> {
    const actual = await db.query<{ version: number }>("SELECT version FROM streams WHERE id = $1", [streamId]);
    const actualVersion = actual.rows[0]?.version ?? null;
    const message =
      actualVersion === null
        ? `stream ${streamId} does not exist (expected version ${expected})`
        : `stream ${streamId} is at version ${actualVersion}, expected ${expected === "no_stream" || expected === 0 ? "a new stream" : expected}: it already moved on`;
    if (actualVersion === null) return new AppError("NOT_FOUND", message, { streamId, expected });
    return new AppError("CONFLICT", message, { streamId, expected, actual: actualVersion });
  }

  private async findDuplicateAppend(streamId: string, events: NewEvent[], err: unknown): Promise<AppendResult | null> {
    const isConflict = err instanceof AppError && err.code === "CONFLICT";
    const isDuplicateId = (err as pg.DatabaseError)?.code === "23505" && (err as pg.DatabaseError).constraint === "events_event_id_key";
    if (!isConflict && !isDuplicateId) return null;
    const retried = await this.retriedAppend(streamId, events);
    if (retried) return retried;
    if (isDuplicateId) throw new AppError("CONFLICT", "some of these event ids are already recorded with other events", { streamId });
    return null;
  }

  /** The append these events were, when every one of them carries an id recorded in this stream: a retry. */
  private async retriedAppend(streamId: string, events: NewEvent[]): Promise<AppendResult | null> {
    const ids = events.map((e) => e.eventId);
    if (ids.some((id) => !id)) return null;
    const found = await this.pool.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE event_id = ANY($1::uuid[]) ORDER BY version`, [
      ids,
    ]);
    if (found.rowCount !== ids.length || found.rows.some((r) => r.stream_id !== streamId)) return null;
    const recorded = found.rows.map((r) => this.toRecorded(r));
    return { streamId, version: recorded.at(-1)!.version, events: recorded, duplicate: true };
  }

  /**
   * Creates `childId` as a fork of `parentId` at `atVersion`: O(1), nothing is copied.
   * The child reads the parent's events up to `atVersion`, then its own.
   */
  async fork(input: ForkInput): Promise<AppendResult> {
    return withTransaction(this.pool, (tx) => this.forkInTx(tx, input));
  }

  /** The fork, in the caller's transaction (a bake-off's contenders are created in the confirm's). */
  async forkInTx(tx: Tx, input: ForkInput): Promise<AppendResult> {
    const parent = await tx.query<{ version: number; type: string }>("SELECT version, type FROM streams WHERE id = $1", [input.parentId]);
    const parentRow = parent.rows[0];
    if (!parentRow) throw new AppError("NOT_FOUND", `cannot fork: stream ${input.parentId} does not exist`);
    if (!Number.isInteger(input.atVersion) || input.atVersion < 1 || input.atVersion > parentRow.version) {
      throw new AppError("INVALID_INPUT", `cannot fork ${input.parentId} at ${input.atVersion}: it has events 1..${parentRow.version}`);
    }
    const created = await tx.query(
      `INSERT INTO streams (id, type, version, parent_id, fork_version) VALUES ($1, $2, $3, $4, $3) ON CONFLICT (id) DO NOTHING`,
      [input.childId, parentRow.type, input.atVersion, input.parentId],
    );
    if (created.rowCount !== 1) throw new AppError("CONFLICT", `stream ${input.childId} already exists`);
    return this.appendInTx(tx, input.childId, input.atVersion, Array.isArray(input.event) ? input.event : [input.event], input.metadata);
  }

  /**
   * A stream's events in order, including inherited ones from its fork ancestors; with
   * `types`, only events of those types (a reader that folds a few types of a long stream).
   */
  async readStream(
    streamId: string,
    options: { fromVersion?: number; toVersion?: number; types?: readonly string[]; db?: Queryable } = {},
  ): Promise<RecordedEvent[]> {
    const db = options.db ?? this.pool;
    const range = [streamId, options.fromVersion ?? 1, options.toVersion ?? LATEST_VERSION];
    const rows = await db.query<EventRow>(
      options.types
        ? { name: "catcafe_read_stream_of_types", text: READ_STREAM_OF_TYPES_SQL, values: [...range, options.types] }
        : { name: "catcafe_read_stream", text: READ_STREAM_SQL, values: range },
    );
    if (rows.rowCount === 0) {
      const exists = await db.query("SELECT 1 FROM streams WHERE id = $1", [streamId]);
      if (exists.rowCount === 0) throw new AppError("NOT_FOUND", `stream ${streamId} does not exist`);
    }
    return rows.rows.map((r) => this.toRecorded(r));
  }

  async streamVersion(streamId: string, db: Queryable = this.pool): Promise<number | null> {
    const r = await db.query<{ version: number }>("SELECT version FROM streams WHERE id = $1", [streamId]);
    return r.rows[0]?.version ?? null;
  }

  /**
   * Events in the global order after `checkpoint`. Only events of transactions older than
   * the oldest still-running one are returned, so an event that commits late with a lower
   * position is never skipped: it is simply not visible to the reader yet.
   */
  async readAll(checkpoint: GlobalCheckpoint, limit = 1000): Promise<{ events: RecordedEvent[]; checkpoint: GlobalCheckpoint }> {
    const rows = await this.pool.query<EventRow>({
      name: "catcafe_read_all",
      text: `SELECT ${EVENT_COLUMNS} FROM events
             WHERE (tx_id, position) > ($1::bigint, $2::bigint)
               AND tx_id < (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint
             ORDER BY tx_id, position
             LIMIT $3`,
      values: [checkpoint.txId, checkpoint.position, limit],
    });
    const events = rows.rows.map((r) => this.toRecorded(r));
    const last = events.at(-1);
    return { events, checkpoint: last ? { txId: last.txId, position: last.position } : checkpoint };
  }

  /**
   * Replays a stream up to `version` (inclusive). Never runs anything. Given a StreamFold,
   * the lean read from the nearest snapshot (fold-read.ts); given any `evolve`, every event
   * read whole and decoded.
   */
  async stateAt<S>(streamId: string, version: number, fold: StreamFold<S>): Promise<S>;
  async stateAt<S>(streamId: string, version: number, evolve: (state: S, event: RecordedEvent) => S, initial: S): Promise<S>;
  async stateAt<S>(
    streamId: string,
    version: number,
    evolve: StreamFold<S> | ((state: S, event: RecordedEvent) => S),
    initial?: S,
  ): Promise<S> {
    if (typeof evolve !== "function") return foldStreamAt({ pool: this.pool, registry: this.registry }, evolve, streamId, version);
    const events = await this.readStream(streamId, { toVersion: version });
    return events.reduce(evolve, initial as S);
  }

  /** A row as a recorded event, its data decoded (upcast and validated) unless `decode` is false. */
  toRecorded(row: EventRow, decode = true): RecordedEvent {
    const metadata = recordedMetadata(row.metadata, row.event_id);
    return {
      position: Number(row.position),
      txId: Number(row.tx_id),
      eventId: row.event_id,
      streamId: row.stream_id,
      version: row.version,
      type: row.type,
      data: decode ? this.registry.decode(row.type, row.data, metadata.schemaVersion) : row.data,
      metadata,
      recordedAt: row.recorded_at.toISOString(),
    };
  }
}
