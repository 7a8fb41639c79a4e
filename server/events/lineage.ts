// SQL for a stream's fork lineage: the stream itself (no cap) and each ancestor with the
// highest version the descendant inherits from it. `$1` is the stream id.
export const LINEAGE_CTE = `lineage AS (
  SELECT id, parent_id, fork_version, NULL::int AS cap FROM streams WHERE id = $1
  UNION ALL
  SELECT p.id, p.parent_id, p.fork_version, LEAST(l.cap, l.fork_version)
  FROM streams p JOIN lineage l ON p.id = l.parent_id)`;
