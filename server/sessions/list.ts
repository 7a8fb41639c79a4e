// The team's session list (the dashboard's query, also measured by `npm run bench`): the
// sessions projection filtered by state, project, workflow and starter, searched by title
// and prompt, newest first, one keyset page at a time. Keyset on (created_at, id) keeps
// every page as cheap as the first however deep it is; the search is `ILIKE '%text%'`,
// served by the trigram indexes of title and prompt (pg_trgm).
import { z } from "zod";
import type { Queryable } from "../db/pool";

export const SESSION_PAGE_SIZES = [25, 50, 100] as const;
export const DEFAULT_SESSION_PAGE_SIZE = 50;

const ZFilterText = z.string().trim().min(1).max(200);

/** Filters shared by the list and the counts. */
export const ZSessionFilters = z.object({
  state: ZFilterText.optional(),
  projectId: ZFilterText.optional(),
  workflow: ZFilterText.optional(),
  /** An actor label as stored on the session (`user:<id>`): "mine" is the caller's. */
  createdBy: ZFilterText.optional(),
  /** Text searched in titles and prompts (case-insensitive substring). */
  q: z.string().trim().min(1).max(200).optional(),
});
export type SessionFilters = z.infer<typeof ZSessionFilters>;

export const ZSessionPage = z.object({
  /** Rows older than this session (the last row of the current page). */
  after: z.string().min(1).max(100).optional(),
  /** Rows newer than this session (the first row of the current page). */
  before: z.string().min(1).max(100).optional(),
  limit: z.number().int().min(1).max(200).default(DEFAULT_SESSION_PAGE_SIZE),
});
export type SessionPageInput = z.input<typeof ZSessionPage>;

export interface SessionListRow {
  id: string;
  title: string;
  workflow: string;
  state: string;
  projectId: string | null;
  mode: string | null;
  iteration: number | null;
  outcome: string | null;
  parentId: string | null;
  forkVersion: number | null;
  createdBy: string;
  createdAt: Date;
  /** Events in the session's own stream (inherited ones not counted). */
  version: number;
  updatedAt: Date;
}

export interface SessionListPage {
  rows: SessionListRow[];
  /** Whether a page of newer / older sessions exists (cursors: first / last row id). */
  hasNewer: boolean;
  hasOlder: boolean;
}

/** `%text%` for ILIKE, with the user's own %, _ and \ matched literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The WHERE clause of `filters` with its parameters, numbered from `first`. */
function whereClause(filters: SessionFilters, first = 1): { sql: string; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${first + values.length - 1}`;
  };
  if (filters.state) parts.push(`s.state = ${param(filters.state)}`);
  if (filters.projectId) parts.push(`s.project_id = ${param(filters.projectId)}`);
  if (filters.workflow) parts.push(`s.workflow = ${param(filters.workflow)}`);
  if (filters.createdBy) parts.push(`s.created_by = ${param(filters.createdBy)}`);
  if (filters.q) {
    const p = param(containsPattern(filters.q));
    parts.push(`(s.title ILIKE ${p} OR s.prompt ILIKE ${p})`);
  }
  return { sql: parts.length ? parts.join(" AND ") : "TRUE", values };
}

interface Row {
  id: string;
  title: string;
  workflow: string;
  state: string;
  project_id: string | null;
  mode: string | null;
  iteration: number | null;
  outcome: string | null;
  parent_id: string | null;
  fork_version: number | null;
  created_by: string;
  created_at: Date;
  version: number;
  updated_at: Date;
}

const LIST_COLUMNS = `s.id, s.title, s.workflow, s.state, s.project_id, s.mode, s.iteration, s.outcome, s.parent_id,
  s.fork_version, s.created_by, s.created_at, st.version, st.updated_at`;

/** One page of sessions, newest first. `after` / `before` page towards older / newer rows. */
export async function listSessions(db: Queryable, filters: SessionFilters, pageInput: SessionPageInput = {}): Promise<SessionListPage> {
  const page = ZSessionPage.parse(pageInput);
  const where = whereClause(filters);
  const values = [...where.values];
  const cursorId = page.before ?? page.after;
  let keyset = "";
  if (cursorId) {
    values.push(cursorId);
    const n = values.length;
    // The cursor row's own (created_at, id), compared in SQL: microseconds are never rounded.
    keyset = ` AND (s.created_at, s.id) ${page.before ? ">" : "<"} (SELECT c.created_at, c.id FROM sessions c WHERE c.id = $${n})`;
  }
  values.push(page.limit + 1);
  const order = page.before ? "ASC" : "DESC";
  const result = await db.query<Row>(
    `SELECT ${LIST_COLUMNS}
     FROM sessions s JOIN streams st ON st.id = s.id
     WHERE ${where.sql}${keyset}
     ORDER BY s.created_at ${order}, s.id ${order}
     LIMIT $${values.length}`,
    values,
  );
  const more = result.rows.length > page.limit;
  const rows = result.rows.slice(0, page.limit).map(toListRow);
  if (page.before) rows.reverse();
  return {
    rows,
    hasNewer: page.before ? more : Boolean(page.after),
    hasOlder: page.before ? true : more,
  };
}

function toListRow(r: Row): SessionListRow {
  return {
    id: r.id,
    title: r.title,
    workflow: r.workflow,
    state: r.state,
    projectId: r.project_id,
    mode: r.mode,
    iteration: r.iteration,
    outcome: r.outcome,
    parentId: r.parent_id,
    forkVersion: r.fork_version,
    createdBy: r.created_by,
    createdAt: r.created_at,
    version: r.version,
    updatedAt: r.updated_at,
  };
}

/** Sessions per state under every filter but the state one (the state chips show them). */
export async function countSessionsByState(db: Queryable, filters: SessionFilters): Promise<Array<{ state: string; count: number }>> {
  const { state: _state, ...rest } = filters;
  const where = whereClause(rest);
  const result = await db.query<{ state: string; count: string }>(
    `SELECT s.state, count(*) AS count FROM sessions s WHERE ${where.sql} GROUP BY s.state`,
    where.values,
  );
  return result.rows
    .map((r) => ({ state: r.state, count: Number(r.count) }))
    .sort((a, b) => b.count - a.count || a.state.localeCompare(b.state));
}

/** `user:<uuid>` → the user's display name, for the "started by" column. */
export async function starterNames(db: Queryable, labels: readonly string[]): Promise<Map<string, string>> {
  const ids = [...new Set(labels.flatMap((l) => (/^user:[0-9a-f-]{36}$/i.test(l) ? [l.slice(5)] : [])))];
  const names = new Map<string, string>();
  if (ids.length === 0) return names;
  const r = await db.query<{ id: string; name: string }>("SELECT id::text AS id, name FROM users WHERE id = ANY($1::uuid[])", [ids]);
  for (const row of r.rows) names.set(`user:${row.id}`, row.name);
  return names;
}
