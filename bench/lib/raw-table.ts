// The raw-INSERT baseline: a scratch table with the row shape and indexes of `events`
// (bigserial key, tx_id default, unique (stream_id, version), unique event_id,
// (tx_id, position)) but no triggers, no stream lock, no projections, no NOTIFY.
import crypto from "node:crypto";
import type { Queryable } from "../../server/db/pool";
import { rawMetadataJson } from "./fixtures";

export const RAW_TABLE = "bench_raw_events";

export async function createRawTable(db: Queryable): Promise<void> {
  await db.query(`DROP TABLE IF EXISTS ${RAW_TABLE}`);
  await db.query(`CREATE TABLE ${RAW_TABLE} (
    position bigserial PRIMARY KEY,
    tx_id bigint NOT NULL DEFAULT ((pg_current_xact_id())::text)::bigint,
    event_id uuid NOT NULL,
    stream_id text NOT NULL,
    version int NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    metadata jsonb NOT NULL,
    recorded_at timestamptz(6) NOT NULL DEFAULT CURRENT_TIMESTAMP)`);
  await db.query(`CREATE UNIQUE INDEX ${RAW_TABLE}_stream_id_version_key ON ${RAW_TABLE} (stream_id, version)`);
  await db.query(`CREATE UNIQUE INDEX ${RAW_TABLE}_event_id_key ON ${RAW_TABLE} (event_id)`);
  await db.query(`CREATE INDEX ${RAW_TABLE}_tx_id_position_idx ON ${RAW_TABLE} (tx_id, position)`);
}

/**
 * One autocommit statement inserting `rows` rows of `streamId` from `firstVersion` on; with
 * `notifyChannel`, the same statement also sends one NOTIFY (the stream id) on that channel,
 * as an append does, to price the NOTIFY alone.
 */
export async function insertRawRows(
  db: Queryable,
  streamId: string,
  firstVersion: number,
  rows: number,
  label: string,
  options: { notifyChannel?: string } = {},
): Promise<void> {
  const values: unknown[] = [];
  const tuples: string[] = [];
  for (let i = 0; i < rows; i++) {
    const b = i * 6;
    tuples.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6})`);
    values.push(
      crypto.randomUUID(),
      streamId,
      firstVersion + i,
      "OperatorMessagePosted",
      JSON.stringify({ text: `${label} message ${i}` }),
      rawMetadataJson(),
    );
  }
  const insert = `INSERT INTO ${RAW_TABLE} (event_id, stream_id, version, type, data, metadata) VALUES ${tuples.join(", ")}`;
  const channel = options.notifyChannel;
  await db.query({
    // Prepared once per row count (and channel), as the store prepares its statements.
    name: channel ? `bench_raw_insert_notify_${rows}_${channel}` : `bench_raw_insert_${rows}`,
    text: channel ? `WITH ins AS (${insert} RETURNING 1) SELECT pg_notify('${channel}', $2) FROM (SELECT 1 FROM ins LIMIT 1) one` : insert,
    values,
  });
}
