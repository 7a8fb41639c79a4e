// Each stream's events reduced to one sha256 (position, id, version, type, summary, data, metadata,
// time; in version order): a backup records them and a restore must come out with the same.
// jsonb's text form is canonical, so the hash does not depend on how the rows were written.
import type pg from "pg";
import type { StreamHash } from "./manifest";

const STREAM_HASHES_SQL = `
  SELECT stream_id AS id, count(*)::int AS events,
         encode(sha256(convert_to(string_agg(
           concat_ws('|', position, event_id, version, type, summary, data::text, metadata::text,
                     (extract(epoch FROM recorded_at) * 1000000)::bigint),
           E'\\n' ORDER BY version), 'UTF8')), 'hex') AS sha256
  FROM events GROUP BY stream_id ORDER BY stream_id`;

export async function streamHashes(db: pg.Pool | pg.ClientBase): Promise<StreamHash[]> {
  const rows = await db.query<StreamHash>(STREAM_HASHES_SQL);
  return rows.rows;
}

/** The streams whose count or hash differ between two lists (missing on either side included). */
export function differingStreams(expected: readonly StreamHash[], actual: readonly StreamHash[]): string[] {
  const got = new Map(actual.map((s) => [s.id, s]));
  const differing = expected.filter((s) => {
    const other = got.get(s.id);
    return !other || other.events !== s.events || other.sha256 !== s.sha256;
  });
  const known = new Set(expected.map((s) => s.id));
  return [...differing.map((s) => s.id), ...actual.filter((s) => !known.has(s.id)).map((s) => s.id)];
}
