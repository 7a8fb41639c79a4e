// The dashboard's read model: what `/` shows, read through the visitor's tRPC caller (the
// same procedures the API serves): `sessions.list` (server/sessions/list.ts, the query the
// benchmark measures), `sessions.counts`, `projects.list` and `runners.live`. Filters,
// search and the page position live in the URL so a view can be shared; times are relative
// to the database clock, the clock that decides runner liveness.
import type { RunnerRow } from "@/components/runners-panel";
import type { SessionRow } from "@/components/sessions-table";
import { DEFAULT_SESSION_PAGE_SIZE, SESSION_PAGE_SIZES, ZSessionFilters, type SessionFilters } from "@/server/sessions/list";
import { BUILTIN_WORKFLOWS } from "@/server/task-engine";
import type { PageCaller } from "./page-context";

/** The shapes the dashboard components render. */
export type DashboardSession = SessionRow;
export type DashboardRunner = RunnerRow;

type SearchParams = Record<string, string | string[] | undefined>;

/** The dashboard's URL state: `?state=&project=&workflow=&mine=1&q=&after=|before=&limit=`. */
export interface DashboardQuery {
  state?: string;
  project?: string;
  workflow?: string;
  mine: boolean;
  q?: string;
  after?: string;
  before?: string;
  limit: number;
}

const first = (v: string | string[] | undefined): string | undefined => {
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s.slice(0, 200) : undefined;
};

export function parseDashboardQuery(params: SearchParams): DashboardQuery {
  const limit = Number(first(params.limit));
  return {
    state: first(params.state),
    project: first(params.project),
    workflow: first(params.workflow),
    mine: ["1", "true", "yes"].includes(first(params.mine) ?? ""),
    q: first(params.q),
    after: first(params.after),
    before: first(params.before),
    limit: (SESSION_PAGE_SIZES as readonly number[]).includes(limit) ? limit : DEFAULT_SESSION_PAGE_SIZE,
  };
}

/** `/` with `query` changed by `change`; a filter change starts again at the first page. */
export function dashboardHref(query: DashboardQuery, change: Partial<DashboardQuery> = {}): string {
  const next: DashboardQuery = { ...query, ...change };
  const filterChanged = (["state", "project", "workflow", "mine", "q", "limit"] as const).some(
    (k) => k in change && change[k] !== query[k],
  );
  if (filterChanged) {
    next.after = undefined;
    next.before = undefined;
  }
  const params = new URLSearchParams();
  if (next.q) params.set("q", next.q);
  if (next.state) params.set("state", next.state);
  if (next.project) params.set("project", next.project);
  if (next.workflow) params.set("workflow", next.workflow);
  if (next.mine) params.set("mine", "1");
  if (next.limit !== DEFAULT_SESSION_PAGE_SIZE) params.set("limit", String(next.limit));
  if (next.after) params.set("after", next.after);
  else if (next.before) params.set("before", next.before);
  const qs = params.toString();
  return qs ? `/?${qs}` : "/";
}

export function hasFilters(query: DashboardQuery): boolean {
  return Boolean(query.state || query.project || query.workflow || query.mine || query.q);
}

export interface Dashboard {
  /** The database's clock when the page was read. */
  now: Date;
  query: DashboardQuery;
  totalSessions: number;
  totalEvents: number;
  /** Every session by state (the tiles and the breakdown). */
  stateCounts: Array<{ state: string; count: number }>;
  /** By state under the current filters except the state filter (the state chips). */
  filteredStateCounts: Array<{ state: string; count: number }>;
  /** Sessions matching every filter. */
  matching: number;
  sessions: DashboardSession[];
  hasNewer: boolean;
  hasOlder: boolean;
  projects: Array<{ id: string; name: string }>;
  workflows: string[];
  liveRunners: DashboardRunner[];
  /** A runner is live while its heartbeat is younger than this. */
  livenessMs: number;
}

export function sessionFilters(query: DashboardQuery, userId: string): SessionFilters {
  return ZSessionFilters.parse({
    state: query.state,
    projectId: query.project,
    workflow: query.workflow,
    createdBy: query.mine ? `user:${userId}` : undefined,
    q: query.q,
  });
}

export async function loadDashboard(caller: PageCaller, query: DashboardQuery, user: { id: string }): Promise<Dashboard> {
  const filters = sessionFilters(query, user.id);
  const [live, counts, page, projects] = await Promise.all([
    caller.runners.live(),
    caller.sessions.counts(filters),
    caller.sessions.list({ ...filters, after: query.after, before: query.before, limit: query.limit }),
    caller.projects.list(),
  ]);
  const projectNames = new Map(projects.map((p) => [p.id, p.name]));
  return {
    now: new Date(live.now),
    query,
    totalSessions: counts.total,
    totalEvents: counts.events,
    stateCounts: counts.byState,
    filteredStateCounts: counts.filteredByState,
    matching: counts.matching,
    sessions: page.items.map((r) => ({
      ...r,
      createdAt: new Date(r.createdAt),
      updatedAt: new Date(r.updatedAt),
      projectName: r.projectId ? (projectNames.get(r.projectId) ?? r.projectId) : null,
      startedBy: page.names[r.createdBy] ?? r.createdBy,
      mine: r.createdBy === `user:${user.id}`,
    })),
    hasNewer: page.hasNewer,
    hasOlder: page.hasOlder,
    projects,
    workflows: [...new Set([...Object.keys(BUILTIN_WORKFLOWS), ...(query.workflow ? [query.workflow] : [])])],
    liveRunners: live.runners.map((r) => ({ ...r, startedAt: new Date(r.startedAt), heartbeatAt: new Date(r.heartbeatAt) })),
    livenessMs: live.livenessMs,
  };
}
