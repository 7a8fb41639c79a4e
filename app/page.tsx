// `/`: the dashboard. Server-rendered on every request from the sessions projection and
// the runners table (see app/_lib/dashboard.ts); no client JavaScript.
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { AppHeader } from "@/components/app-header";
import { DatabaseDown } from "@/components/database-down";
import { RunnersPanel } from "@/components/runners-panel";
import { SessionsTable } from "@/components/sessions-table";
import { StateBreakdown } from "@/components/state-breakdown";
import { StatTiles } from "@/components/stat-tiles";
import { formatTimestamp } from "@/lib/format-time";
import { stateTone } from "@/lib/state-tone";
import { currentUser } from "@/server/api/web";
import { SIGN_IN_PATH } from "@/server/auth/options";
import { getPrisma } from "@/server/db/prisma";
import { describeDbError } from "@/server/health";
import { logger } from "@/server/log";
import { RUNNER_LIVENESS_MS } from "@/server/runner/runner";
import { APP_VERSION } from "@/server/version";
import { loadDashboard, RECENT_SESSIONS_LIMIT, type Dashboard } from "./_lib/dashboard";

export const dynamic = "force-dynamic";

export default async function DashboardPage() {
  let dashboard: Dashboard | null = null;
  try {
    // Signed-in team members only; the user is read from the database like the data below.
    if (await currentUser()) dashboard = await loadDashboard(getPrisma());
  } catch (err) {
    logger.error({ err, route: "/" }, "dashboard: database read failed");
    return (
      <Shell dbOk={false} liveRunners={null}>
        <DatabaseDown message={describeDbError(err)} />
      </Shell>
    );
  }
  if (!dashboard) redirect(`${SIGN_IN_PATH}?callbackUrl=%2F`);

  const { now, stateCounts, totalSessions, totalEvents, recentSessions, liveRunners } = dashboard;
  const countTone = (tone: ReturnType<typeof stateTone>) =>
    stateCounts.filter((c) => stateTone(c.state) === tone).reduce((n, c) => n + c.count, 0);

  return (
    <Shell dbOk liveRunners={liveRunners.length}>
      <div className="flex items-end justify-between gap-4">
        <div>
          <h1 className="text-lg font-semibold tracking-tight">Dashboard</h1>
          <p className="text-xs text-zinc-500 dark:text-zinc-400">Sessions, their state, and the runners executing their steps.</p>
        </div>
        <p className="font-mono text-[11px] text-zinc-400 dark:text-zinc-500">as of {formatTimestamp(now)}</p>
      </div>
      <StatTiles
        tiles={[
          { label: "Sessions", value: totalSessions, detail: plural(stateCounts.length, "distinct state") },
          { label: "In flight", value: countTone("active") + countTone("waiting"), detail: `${countTone("waiting")} waiting` },
          { label: "Events", value: totalEvents, detail: "across session streams" },
          { label: "Live runners", value: liveRunners.length, detail: liveRunners.length ? plural(new Set(liveRunners.map((r) => r.host)).size, "host", "on ") : "none heartbeating" },
        ]}
      />
      <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-[minmax(0,1fr)_380px]">
        <SessionsTable sessions={recentSessions} now={now} limit={RECENT_SESSIONS_LIMIT} />
        <div className="space-y-4">
          <StateBreakdown counts={stateCounts} total={totalSessions} />
          <RunnersPanel runners={liveRunners} now={now} livenessMs={RUNNER_LIVENESS_MS} />
        </div>
      </div>
    </Shell>
  );
}

function plural(n: number, noun: string, prefix = ""): string {
  return `${prefix}${n} ${noun}${n === 1 ? "" : "s"}`;
}

function Shell({ dbOk, liveRunners, children }: { dbOk: boolean; liveRunners: number | null; children: ReactNode }) {
  return (
    <>
      <AppHeader version={APP_VERSION} dbOk={dbOk} liveRunners={liveRunners} />
      <main className="mx-auto max-w-[1400px] space-y-4 px-5 py-5">{children}</main>
    </>
  );
}
