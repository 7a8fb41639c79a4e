// A session's fork lineage (req E5) as a tree: up the `parent_id` links of the sessions
// projection to the root ancestor, then down to every descendant (reruns, and later modify
// and revert forks). Each node says where it forked (the parent's event position) and why
// (the SessionForked event's reason, one indexed lookup per fork), and how it stands; with
// the names of the people who started them and the database clock it was read by.
import { z } from "zod";
import { userNames } from "../auth/users";
import type { PrismaClient } from "../db/generated/client";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";

export const ZLineageInput = z.object({ sessionId: z.string().min(1).max(100) });

/** A tree larger than this is cut (deepest-last); `truncated` says so. */
export const LINEAGE_NODE_LIMIT = 500;

export interface LineageNode {
  id: string;
  title: string;
  workflow: string;
  state: string;
  outcome: string | null;
  mode: string | null;
  iteration: number | null;
  parentId: string | null;
  /** The parent's event position this session forked at (its events up to there are inherited). */
  forkVersion: number | null;
  forkReason: string | null;
  /** Why, in the words of the person who forked it. */
  forkNote: string | null;
  createdBy: string;
  createdAt: string;
  /** The session's latest position (inherited events included). */
  version: number;
  updatedAt: string;
  depth: number;
  children: string[];
}

export interface LineageTree {
  rootId: string;
  /** The session asked about. */
  focusId: string;
  /** The root first, then breadth-first, children oldest first. */
  nodes: LineageNode[];
  truncated: boolean;
  /** Display names of the people who started the sessions, by actor label (`user:<id>`). */
  names: Record<string, string>;
  /** The database clock when the tree was read (ages are relative to it). */
  asOf: string;
}

interface Row {
  id: string;
  title: string;
  workflow: string;
  state: string;
  outcome: string | null;
  mode: string | null;
  iteration: number | null;
  parent_id: string | null;
  fork_version: number | null;
  fork_reason: string | null;
  fork_note: string | null;
  created_by: string;
  created_at: Date;
  version: number;
  updated_at: Date;
  depth: number;
  as_of: Date;
}

export async function lineageTree(
  deps: { pool: Queryable; prisma: PrismaClient },
  raw: z.input<typeof ZLineageInput>,
): Promise<LineageTree> {
  const { sessionId } = ZLineageInput.parse(raw);
  const r = await deps.pool.query<Row>({
    name: "catcafe_lineage_tree",
    text: `WITH RECURSIVE up AS (
             SELECT id, parent_id, 0 AS hops FROM sessions WHERE id = $1
             UNION ALL
             SELECT s.id, s.parent_id, up.hops + 1 FROM sessions s JOIN up ON s.id = up.parent_id WHERE up.hops < 1000
           ),
           root AS (SELECT id FROM up ORDER BY hops DESC LIMIT 1),
           down AS (
             SELECT id, 0 AS depth FROM root
             UNION ALL
             SELECT s.id, down.depth + 1 FROM sessions s JOIN down ON s.parent_id = down.id WHERE down.depth < 1000
           )
           SELECT s.id, s.title, s.workflow, s.state, s.outcome, s.mode, s.iteration, s.parent_id, s.fork_version,
                  f.data->>'reason' AS fork_reason, f.data->>'note' AS fork_note, s.created_by, s.created_at, st.version, st.updated_at, down.depth,
                  now() AS as_of
           FROM down
           JOIN sessions s ON s.id = down.id
           JOIN streams st ON st.id = s.id
           LEFT JOIN events f ON f.stream_id = s.id AND f.version = s.fork_version + 1 AND f.type = 'SessionForked'
           ORDER BY down.depth, s.created_at, s.id
           LIMIT $2`,
    values: [sessionId, LINEAGE_NODE_LIMIT + 1],
  });
  if (r.rows.length === 0) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  const rows = r.rows.slice(0, LINEAGE_NODE_LIMIT);
  const nodes = new Map<string, LineageNode>();
  for (const row of rows) {
    nodes.set(row.id, {
      id: row.id,
      title: row.title,
      workflow: row.workflow,
      state: row.state,
      outcome: row.outcome,
      mode: row.mode,
      iteration: row.iteration,
      parentId: row.parent_id,
      forkVersion: row.fork_version,
      forkReason: row.fork_reason,
      forkNote: row.fork_note,
      createdBy: row.created_by,
      createdAt: row.created_at.toISOString(),
      version: row.version,
      updatedAt: row.updated_at.toISOString(),
      depth: row.depth,
      children: [],
    });
  }
  for (const node of nodes.values()) if (node.parentId) nodes.get(node.parentId)?.children.push(node.id);
  return {
    rootId: rows[0]!.id,
    focusId: sessionId,
    nodes: [...nodes.values()],
    truncated: r.rows.length > LINEAGE_NODE_LIMIT,
    names: await userNames(
      deps.prisma,
      rows.map((row) => row.created_by),
    ),
    asOf: rows[0]!.as_of.toISOString(),
  };
}
