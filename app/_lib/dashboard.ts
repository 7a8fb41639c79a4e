// The dashboard's read model: what `/` shows, read from the sessions projection (with its
// stream's event count and last activity) and the
// runners table with explicit selects. Times are relative to the database clock, the same
// clock that decides runner liveness.
import type { RunnerRow } from "@/components/runners-panel";
import type { SessionRow } from "@/components/sessions-table";
import type { PrismaClient } from "@/server/db/prisma";
import { RUNNER_LIVENESS_MS } from "@/server/runner/runner";

export const RECENT_SESSIONS_LIMIT = 50;

/** The shapes the dashboard components render. */
export type DashboardSession = SessionRow;
export type DashboardRunner = RunnerRow;

export interface Dashboard {
  /** The database's clock when the page was read. */
  now: Date;
  totalSessions: number;
  totalEvents: number;
  stateCounts: Array<{ state: string; count: number }>;
  recentSessions: DashboardSession[];
  liveRunners: DashboardRunner[];
}

export async function loadDashboard(prisma: PrismaClient): Promise<Dashboard> {
  const [{ now } = { now: new Date() }] = await prisma.$queryRaw<Array<{ now: Date }>>`SELECT now() AS now`;
  const liveSince = new Date(now.getTime() - RUNNER_LIVENESS_MS);
  const [byState, totals, recentSessions, liveRunners] = await Promise.all([
    prisma.session.groupBy({ by: ["state"], _count: { _all: true } }),
    prisma.stream.aggregate({ where: { type: "session" }, _count: { _all: true }, _sum: { version: true } }),
    prisma.stream.findMany({
      where: { session: { isNot: null } },
      select: { version: true, updatedAt: true, session: { select: { id: true, title: true, workflow: true, state: true, parentId: true } } },
      orderBy: [{ updatedAt: "desc" }, { id: "asc" }],
      take: RECENT_SESSIONS_LIMIT,
    }),
    prisma.runner.findMany({
      select: { id: true, host: true, pid: true, version: true, startedAt: true, heartbeatAt: true },
      where: { stoppedAt: null, heartbeatAt: { gt: liveSince } },
      orderBy: [{ startedAt: "asc" }, { id: "asc" }],
    }),
  ]);
  return {
    now,
    totalSessions: totals._count._all,
    totalEvents: totals._sum.version ?? 0,
    stateCounts: byState.map((g) => ({ state: g.state, count: g._count._all })).sort((a, b) => b.count - a.count || a.state.localeCompare(b.state)),
    recentSessions: recentSessions.flatMap(({ session, version, updatedAt }) => (session ? [{ ...session, version, updatedAt }] : [])),
    liveRunners,
  };
}
