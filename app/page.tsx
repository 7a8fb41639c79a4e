// `/`: the team dashboard. Server-rendered on every request from the sessions projection
// and the runners table (see app/_lib/dashboard.ts). Filters, search and the page position
// are URL parameters (shareable); the client parts are small: the filter bar, j/k/enter
// row navigation and a periodic refresh that keeps states and runners live.
import type { Metadata } from "next";
import { AutoRefresh } from "@/components/dashboard/auto-refresh";
import { Pager } from "@/components/dashboard/pager";
import { RowKeys } from "@/components/dashboard/row-keys";
import { SessionFilters } from "@/components/dashboard/session-filters";
import { StateChips } from "@/components/dashboard/state-chips";
import { Panel } from "@/components/panel";
import { RunnersPanel } from "@/components/runners-panel";
import { SessionsTable } from "@/components/sessions-table";
import { StateBreakdown } from "@/components/state-breakdown";
import { StatTiles } from "@/components/stat-tiles";
import { formatTimestamp } from "@/lib/format-time";
import { NEW_TASK_PATH } from "@/lib/nav";
import { stateTone } from "@/lib/state-tone";
import { DEFAULT_SESSION_PAGE_SIZE, SESSION_PAGE_SIZES } from "@/server/sessions/list";
import { dashboardHref, hasFilters, loadDashboard, parseDashboardQuery } from "./_lib/dashboard";
import { readPage } from "./_lib/page-context";
import { PageShell, ReadFailure } from "./_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Dashboard" };

const REFRESH_MS = 5_000;

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function DashboardPage({ searchParams }: { searchParams: SearchParams }) {
  const query = parseDashboardQuery(await searchParams);
  const read = await readPage(dashboardHref(query), "/", ({ user, caller }) => loadDashboard(caller, query, user));
  if (!read.ok)
    return (
      <PageShell user={read.user} path="/">
        <ReadFailure failure={read} />
      </PageShell>
    );

  const { user, data: dashboard } = read;
  const { now, stateCounts, totalSessions, totalEvents, liveRunners, livenessMs, sessions } = dashboard;
  const countTone = (tone: ReturnType<typeof stateTone>) =>
    stateCounts.filter((c) => stateTone(c.state) === tone).reduce((n, c) => n + c.count, 0);
  const first = sessions[0];
  const last = sessions.at(-1);
  const filtered = hasFilters(query);
  const states = [...new Set([...dashboard.stateCounts.map((c) => c.state), ...(query.state ? [query.state] : [])])].sort();

  return (
    <PageShell user={user} path="/" liveRunners={liveRunners.length}>
      <AutoRefresh intervalMs={REFRESH_MS} />
      <RowKeys />
      <div className="flex items-end justify-between gap-4">
        <div>
          <h1 className="text-lg font-semibold tracking-tight">Dashboard</h1>
          <p className="text-xs text-zinc-500 dark:text-zinc-400">
            Sessions across projects, their state, and the runners executing their steps.
          </p>
        </div>
        <p className="font-mono text-xs text-zinc-500 dark:text-zinc-400" title={`refreshes every ${REFRESH_MS / 1000}s`}>
          live · as of {formatTimestamp(now)}
        </p>
      </div>
      <StatTiles
        tiles={[
          { label: "Sessions", value: totalSessions, detail: plural(stateCounts.length, "distinct state") },
          { label: "In flight", value: countTone("active") + countTone("waiting"), detail: `${countTone("waiting")} waiting on someone` },
          { label: "Events", value: totalEvents, detail: "across session streams" },
          {
            label: "Live runners",
            value: liveRunners.length,
            detail: liveRunners.length ? plural(new Set(liveRunners.map((r) => r.host)).size, "host", "on ") : "none heartbeating",
          },
        ]}
      />
      {/* The table gets the width first: the side panels go below it until the window is 1440 px wide. */}
      <div className="grid grid-cols-1 items-start gap-4 min-[1440px]:grid-cols-[minmax(0,1fr)_360px]">
        <Panel
          title="Sessions"
          meta={
            <span className="tabular-nums" data-testid="matching-count">
              {filtered ? `${dashboard.matching.toLocaleString("en-US")} matching` : `${totalSessions.toLocaleString("en-US")} total`}
            </span>
          }
        >
          <SessionFilters
            key={JSON.stringify([query.q, query.state, query.project, query.workflow, query.mine, query.limit])}
            values={{
              q: query.q,
              state: query.state,
              project: query.project,
              workflow: query.workflow,
              mine: query.mine,
              limit: query.limit,
            }}
            states={states}
            projects={dashboard.projects}
            workflows={dashboard.workflows}
            pageSizes={SESSION_PAGE_SIZES}
            defaultPageSize={DEFAULT_SESSION_PAGE_SIZE}
          />
          <StateChips counts={dashboard.filteredStateCounts} active={query.state} hrefFor={(state) => dashboardHref(query, { state })} />
          <SessionsTable
            sessions={sessions}
            now={now}
            empty={
              filtered ? (
                <>
                  Nothing matches these filters.{" "}
                  <a href="/" className="underline">
                    Clear them
                  </a>{" "}
                  to see every session.
                </>
              ) : (
                <>
                  Start one with{" "}
                  <a href={NEW_TASK_PATH} className="font-medium text-sky-700 underline dark:text-sky-300">
                    New task
                  </a>
                  ; it appears here with its state.
                </>
              )
            }
          />
          <Pager
            shown={sessions.length}
            matching={dashboard.matching}
            newerHref={dashboard.hasNewer && first ? dashboardHref(query, { before: first.id, after: undefined }) : null}
            olderHref={dashboard.hasOlder && last ? dashboardHref(query, { after: last.id, before: undefined }) : null}
            firstHref={query.after || query.before ? dashboardHref(query, { after: undefined, before: undefined }) : null}
            sizes={SESSION_PAGE_SIZES.map((size) => ({ size, href: dashboardHref(query, { limit: size }), current: size === query.limit }))}
          />
        </Panel>
        <div className="grid grid-cols-1 items-start gap-4 md:grid-cols-2 min-[1440px]:grid-cols-1">
          <RunnersPanel runners={liveRunners} now={now} livenessMs={livenessMs} />
          <StateBreakdown counts={stateCounts} total={totalSessions} />
        </div>
      </div>
    </PageShell>
  );
}

function plural(n: number, noun: string, prefix = ""): string {
  return `${prefix}${n} ${noun}${n === 1 ? "" : "s"}`;
}
