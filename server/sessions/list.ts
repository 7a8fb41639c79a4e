// The team's session list, the one query behind `sessions.list` (API and CLI), the
// dashboard and `npm run bench`: the sessions projection filtered by state, project,
// workflow and starter, searched by title and prompt, newest first, one keyset page at a
// time. Keyset on (created_at, id) keeps every page as cheap as the first however deep it
// is; the search is `ILIKE '%text%'`, served by the trigram indexes of title and prompt
// (pg_trgm). Also the counts by state the dashboard's tiles and chips show.
import { z } from "zod";
import { AppError } from "../errors";
import { userNames } from "../auth/users";
import type { PrismaClient } from "../db/generated/client";
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

/** `sessions.list`'s input: the filters and a page (no input at all: the first page). */
export const ZListSessionsInput = ZSessionFilters.extend(ZSessionPage.shape)
  .extend({
    /** The `nextCursor` of the previous page: the same as `after`. */
    cursor: z.string().min(1).max(100).nullish(),
  })
  .prefault({});
export type TListSessionsInput = z.input<typeof ZListSessionsInput>;

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
  // A cursor that names no session compares as NULL and matches nothing: say so, not "no more".
  if (cursorId && result.rows.length === 0) {
    const known = await db.query("SELECT 1 FROM sessions WHERE id = $1", [cursorId]);
    if (known.rowCount === 0)
      throw new AppError("INVALID_INPUT", `unknown cursor ${JSON.stringify(cursorId)}: not a session id from a page of this list`);
  }
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

export interface SessionCounts {
  /** Every session. */
  total: number;
  /** Events in every session's own stream. */
  events: number;
  /** Every session by state, most first. */
  byState: Array<{ state: string; count: number }>;
  /** By state under every filter but the state one (the state chips); `byState` without filters. */
  filteredByState: Array<{ state: string; count: number }>;
  /** Sessions matching every filter. */
  matching: number;
}

export async function countSessions(db: Queryable, filters: SessionFilters): Promise<SessionCounts> {
  const { state: _state, ...others } = filters;
  const filtered = Object.values(others).some((v) => v !== undefined);
  const [byState, filteredCounts, events] = await Promise.all([
    countSessionsByState(db, {}),
    filtered ? countSessionsByState(db, filters) : null,
    db.query<{ n: string | null }>("SELECT sum(version) AS n FROM streams WHERE type = 'session'"),
  ]);
  const filteredByState = filteredCounts ?? byState;
  return {
    total: byState.reduce((n, c) => n + c.count, 0),
    events: Number(events.rows[0]?.n ?? 0),
    byState,
    filteredByState,
    matching: filteredByState.filter((c) => !filters.state || c.state === filters.state).reduce((n, c) => n + c.count, 0),
  };
}

export interface SessionPage extends SessionListPage {
  /** Cursors of the older and the newer page (`after` / `before`), null where there is none. */
  nextCursor: string | null;
  prevCursor: string | null;
  /** Display names of the people who started the listed sessions, by actor label. */
  names: Record<string, string>;
}

/** One page of `sessions.list`: the rows, the cursors on both sides and the starters' names. */
export async function readSessionPage(deps: { pool: Queryable; prisma: PrismaClient }, raw: TListSessionsInput): Promise<SessionPage> {
  const { cursor, after, before, limit, ...filters } = ZListSessionsInput.parse(raw);
  const page = await listSessions(deps.pool, filters, { after: after ?? cursor ?? undefined, before, limit });
  return {
    ...page,
    nextCursor: page.hasOlder ? (page.rows.at(-1)?.id ?? null) : null,
    prevCursor: page.hasNewer ? (page.rows[0]?.id ?? null) : null,
    names: await userNames(
      deps.prisma,
      page.rows.map((r) => r.createdBy),
    ),
  };
}
