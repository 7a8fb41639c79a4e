// Replay reads that trust the write (docs/architecture.md, "Reads trust the write"): every
// event was validated by the registry when it was appended, so a fold needs neither the
// columns it never reads nor a second validation. The lean read fetches a stream's
// version, type, data, schema version and time (not metadata, summary, ids or positions),
// runs the registry's decode (upcast, then validate) only for events stored under an older
// schema version, and makes the time an ISO string only when the fold asks for it.
// `foldStreamAt` starts from the nearest snapshot (snapshots.ts) and keeps the snapshot
// versions it folds past that have none (a bounded number of them, spread over the range: a
// read of the head leaves the middle for a fork to start from).
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import { logger } from "../log";
import { LINEAGE_CTE } from "./lineage";
import type { EventRegistry } from "./registry";
import { findSnapshot, MAX_SNAPSHOTS_PER_READ, saveSnapshots, SNAPSHOT_EVERY, snapshotKey, type StreamFold } from "./snapshots";
import type { FoldEvent } from "./types";
import { MAX_VERSION } from "./versions";

/** Versions `$2..$3` of a stream through its lineage, per member by index (as store.ts READ_STREAM_SQL). */
const READ_FOLD_EVENTS_SQL = `WITH RECURSIVE ${LINEAGE_CTE}
  SELECT e.* FROM lineage l CROSS JOIN LATERAL (
    SELECT version, type, data, COALESCE((metadata->>'schemaVersion')::int, 1) AS schema_version,
           (extract(epoch FROM recorded_at) * 1000)::float8 AS recorded_ms
    FROM events
    WHERE stream_id = l.id AND version >= $2 AND version <= LEAST($3, COALESCE(l.cap, $3))
    OFFSET 0
  ) e
  ORDER BY e.version`;

interface FoldRow {
  version: number;
  type: string;
  data: unknown;
  schema_version: number;
  recorded_ms: number;
}

/** An event as a fold sees it; its ISO time is made on first use (most folds never read it). */
class LeanEvent implements FoldEvent {
  constructor(
    readonly version: number,
    readonly type: string,
    readonly data: unknown,
    private readonly recordedMs: number,
  ) {}

  get recordedAt(): string {
    // A Date keeps milliseconds, truncated: the same value node-pg's timestamp parser gives.
    return new Date(this.recordedMs).toISOString();
  }
}

export interface FoldReadDeps {
  pool: Queryable;
  registry: EventRegistry;
}

/**
 * A stream's events `fromVersion..toVersion` (inherited ones included) for a fold. Events at
 * their type's current schema version are returned as stored; older ones are upcast and
 * validated. NOT_FOUND when the stream does not exist.
 */
export async function readFoldEvents(
  deps: FoldReadDeps,
  streamId: string,
  fromVersion: number,
  toVersion: number,
  options: { exists?: boolean } = {},
): Promise<FoldEvent[]> {
  const rows = await deps.pool.query<FoldRow>({
    name: "catcafe_read_fold_events",
    text: READ_FOLD_EVENTS_SQL,
    values: [streamId, fromVersion, toVersion],
  });
  // `exists`: the caller found the stream already (its snapshot): none after it is no error.
  if (rows.rowCount === 0 && !options.exists) {
    const exists = await deps.pool.query("SELECT 1 FROM streams WHERE id = $1", [streamId]);
    if (exists.rowCount === 0) throw new AppError("NOT_FOUND", `stream ${streamId} does not exist`);
  }
  return rows.rows.map((r) => {
    const current = deps.registry.definition(r.type).version;
    const data = r.schema_version === current ? r.data : deps.registry.decode(r.type, r.data, r.schema_version);
    return new LeanEvent(r.version, r.type, data, r.recorded_ms);
  });
}

/** A version past every stream's last (versions are PostgreSQL integers): "up to the latest". */
export const LATEST_VERSION = MAX_VERSION;

export interface FoldAtOptions {
  /** false: fold from the first event, and keep no snapshot (for comparisons). */
  snapshots?: boolean;
  /** Snapshot spacing (tests use small ones). */
  every?: number;
  /**
   * The read runs inside a transaction (`deps.pool` is its client): a snapshot is kept under a
   * savepoint, so that a failed write cannot abort the caller's transaction.
   */
  inTransaction?: boolean;
  /** A read of the head outside a transaction keeps the head's state once it folded this many events past a kept one. */
  headAfter?: number;
}

/** See {@link FoldAtOptions.headAfter}: a latest-state read folds fewer events than this past one row. */
export const HEAD_SNAPSHOT_AFTER = 100;

/**
 * The state of `streamId` after its events up to `version` (inclusive), folded by `fold`:
 * the nearest snapshot at or below `version`, then the events after it. When the fold
 * passes multiples of `every` that had no snapshot, their states are kept: the highest, and
 * at most {@link MAX_SNAPSHOTS_PER_READ} in all, evenly spaced below it.
 */
export async function foldStreamAt<S>(
  deps: FoldReadDeps,
  fold: StreamFold<S>,
  streamId: string,
  version: number,
  options: FoldAtOptions = {},
): Promise<S> {
  return (await foldStream(deps, fold, streamId, version, options)).state;
}

/** {@link foldStreamAt}, with the version of the last event folded (0 for a stream with none up to `version`). */
export async function foldStream<S>(
  deps: FoldReadDeps,
  fold: StreamFold<S>,
  streamId: string,
  version: number,
  options: FoldAtOptions = {},
): Promise<{ state: S; version: number }> {
  const useSnapshots = options.snapshots ?? true;
  const every = options.every ?? SNAPSHOT_EVERY;
  const key = snapshotKey(fold, deps.registry);
  const snapshot = useSnapshots ? await findSnapshot<S>(deps.pool, streamId, key, version) : null;
  const from = snapshot?.version ?? 0;
  const events = from < version ? await readFoldEvents(deps, streamId, from + 1, version, { exists: snapshot !== null }) : [];
  const last = events.at(-1)?.version ?? from;
  const keep = useSnapshots ? snapshotVersions(from, last, every) : new Set<number>();
  let state = snapshot?.state ?? fold.initial;
  const kept: { version: number; state: S }[] = [];
  for (const event of events) {
    state = fold.evolve(state, event);
    if (keep.has(event.version)) kept.push({ version: event.version, state });
  }
  // The head's own state, off the spacing, for the next latest-state read: only by a read
  // that reached the stream's end (asked past it) outside a transaction (a command's fold
  // would write a row per decision), and once it folded HEAD_SNAPSHOT_AFTER events past the
  // last state kept. It replaces the stream's earlier off-spacing rows (saveSnapshots).
  const base = Math.max(from, ...keep);
  const atHead = last < version && !options.inTransaction;
  const head = useSnapshots && atHead && last % every !== 0 && last - base >= (options.headAfter ?? HEAD_SNAPSHOT_AFTER);
  if (head) kept.push({ version: last, state });
  if (kept.length > 0)
    await keepSnapshots(deps.pool, streamId, key, kept, options.inTransaction ?? false, head ? { every, below: last } : undefined);
  return { state, version: last };
}

/**
 * The snapshot versions a fold from `from` (exclusive) to `last` keeps: the highest multiple
 * of `every` up to `last`, and below it every k-th multiple down to `from`, k chosen so that
 * at most MAX_SNAPSHOTS_PER_READ are kept (a read of 10,000 events keeps all ten; of 100,000,
 * every seventh: a later fold anywhere starts at most 7 × `every` events from one).
 */
export function snapshotVersions(from: number, last: number, every: number): Set<number> {
  const highest = Math.floor(last / every) * every;
  const passed = highest > from ? (highest - Math.floor(from / every) * every) / every : 0;
  const stride = Math.max(1, Math.ceil(passed / MAX_SNAPSHOTS_PER_READ)) * every;
  const versions = new Set<number>();
  for (let v = highest; v > from && versions.size < MAX_SNAPSHOTS_PER_READ; v -= stride) versions.add(v);
  return versions;
}

/** A cache write: its failure costs the next reader time, never this one its answer (nor its transaction). */
async function keepSnapshots(
  db: Queryable,
  streamId: string,
  key: string,
  kept: { version: number; state: unknown }[],
  inTransaction: boolean,
  replacing?: { every: number; below: number },
) {
  try {
    if (!inTransaction) return await saveSnapshots(db, streamId, key, kept, replacing);
    await db.query("SAVEPOINT keep_snapshot");
    try {
      await saveSnapshots(db, streamId, key, kept, replacing);
      await db.query("RELEASE SAVEPOINT keep_snapshot");
    } catch (err) {
      await db.query("ROLLBACK TO SAVEPOINT keep_snapshot");
      throw err;
    }
  } catch (err) {
    logger.warn({ err, streamId, versions: kept.map((k) => k.version) }, "could not keep replay snapshots");
  }
}
