// Snapshots of folded stream state (table stream_snapshots): a fold's state at every
// SNAPSHOT_EVERY-th version, so a replay folds only the events after the nearest one.
//
// A cache, not truth: rows are rebuildable from the log and deleting any or all of them
// changes nothing but speed. That is why they are written lazily, by the reader that just
// folded past a version with no snapshot (fold-read.ts), and never by an append: an inline
// projection would run in the append's transaction (slower appends, and a failed write
// would fail the append), and an asynchronous projection would need a process of its own
// that folds every session, read or not. A reader writes the snapshot versions it folded
// past (at most MAX_SNAPSHOTS_PER_READ rows, in one statement after its read: a read of a
// session's head leaves the states a fork in its middle starts from); a failure to write is
// ignored. A read of a session's latest state outside a transaction also keeps the head's
// own state once it folded HEAD_SNAPSHOT_AFTER events past a kept one (fold-read.ts), in
// place of the stream's earlier head row: the latest state is one row and a short tail.
//
// Validity:
// - The log is append-only, so a stream's state at version v never changes: a snapshot at
//   v stays right for good.
// - A fork at version f inherits its parent's events 1..f: the parent's state at v ≤ f is
//   the child's. The lookup walks the stream's lineage and takes, from each ancestor, only
//   snapshots at or below the version the child inherits from it.
// - `fold` is the key of the fold's code: its name, the version its author bumps when the
//   fold's behaviour or state shape changes, and a hash of the registry's event schema
//   versions (a new upcaster changes what old events fold to). Rows under another key are
//   ignored (and may be deleted at any time).
import crypto from "node:crypto";
import type { Queryable } from "../db/pool";
import { LINEAGE_CTE } from "./lineage";
import type { EventRegistry } from "./registry";
import type { FoldEvent } from "./types";

/** One snapshot per this many versions of a stream. */
export const SNAPSHOT_EVERY = 1000;
/** At most this many snapshots kept by one read (fold-read.ts snapshotVersions spreads them). */
export const MAX_SNAPSHOTS_PER_READ = 16;

/** A fold that replay may start from a snapshot: pure, JSON-serializable state. */
export interface StreamFold<S> {
  /** Names the fold in its snapshots' key. */
  name: string;
  /** Bump when `evolve`'s behaviour or the state's shape changes: older snapshots are then ignored. */
  version: number;
  initial: S;
  /** Reads only version, type, data and recordedAt: that is all the lean read fetches. */
  evolve(state: S, event: FoldEvent): S;
}

const registryHashes = new WeakMap<EventRegistry, string>();

/** The current schema version of every event type, hashed: part of each snapshot's key. */
function registryHash(registry: EventRegistry): string {
  let hash = registryHashes.get(registry);
  if (!hash) {
    const versions = Object.entries(registry.catalog)
      .map(([type, def]) => `${type}:${def.version}`)
      .sort();
    hash = crypto.createHash("sha256").update(versions.join("\n")).digest("hex").slice(0, 12);
    registryHashes.set(registry, hash);
  }
  return hash;
}

/** The key under which `fold`'s snapshots are stored and found. */
export function snapshotKey(fold: StreamFold<unknown>, registry: EventRegistry): string {
  return `${fold.name}@${fold.version}/${registryHash(registry)}`;
}

/**
 * The stream's latest snapshot under `key` at or below `atMost`, its own or an ancestor's
 * within what the stream inherits. The best row is chosen by version first, then only its
 * state is read (a state may be large).
 */
export async function findSnapshot<S>(
  db: Queryable,
  streamId: string,
  key: string,
  atMost: number,
): Promise<{ version: number; state: S } | null> {
  const r = await db.query<{ version: number; state: S }>({
    name: "catcafe_find_snapshot",
    text: `WITH RECURSIVE ${LINEAGE_CTE},
           best AS (
             SELECT s.stream_id, s.version FROM lineage l CROSS JOIN LATERAL (
               SELECT stream_id, version FROM stream_snapshots
               WHERE stream_id = l.id AND fold = $2 AND version <= LEAST($3, COALESCE(l.cap, $3))
               ORDER BY version DESC LIMIT 1) s
             ORDER BY s.version DESC LIMIT 1)
           SELECT best.version, snap.state FROM best
           JOIN stream_snapshots snap ON snap.stream_id = best.stream_id AND snap.fold = $2 AND snap.version = best.version`,
    values: [streamId, key, atMost],
  });
  return r.rows[0] ?? null;
}

/**
 * Keeps each state as the stream's state at its version, in one statement (a concurrent
 * writer's equal row wins). `replacing`: the stream's rows off the `every` spacing below
 * `below` (an earlier head's) are deleted in the same statement.
 */
export async function saveSnapshots(
  db: Queryable,
  streamId: string,
  key: string,
  kept: { version: number; state: unknown }[],
  replacing?: { every: number; below: number },
): Promise<void> {
  await db.query({
    name: "catcafe_save_snapshots",
    text: `WITH gone AS (
             DELETE FROM stream_snapshots
             WHERE stream_id = $1 AND fold = $2 AND $5::int IS NOT NULL AND version < $5 AND version % $6 <> 0)
           INSERT INTO stream_snapshots (stream_id, fold, version, state)
           SELECT $1, $2, s.version, s.state FROM unnest($3::int[], $4::json[]) AS s(version, state)
           ON CONFLICT DO NOTHING`,
    values: [
      streamId,
      key,
      kept.map((k) => k.version),
      kept.map((k) => JSON.stringify(k.state)),
      replacing?.below ?? null,
      replacing?.every ?? 1,
    ],
  });
}

/** Keeps `state` as the stream's state at `version` (a concurrent writer's equal row wins). */
export function saveSnapshot(db: Queryable, streamId: string, key: string, version: number, state: unknown): Promise<void> {
  return saveSnapshots(db, streamId, key, [{ version, state }]);
}
