// Runner processes that have not stopped and were heard from in the last day (a runner
// killed with -9 never marks itself stopped), with liveness judged by the database clock,
// the clock the runners heartbeat with.
import { RUNNER_LIVENESS_MS } from "../../runner/runner";
import { router, viewerProcedure } from "../trpc";

const LISTED_FOR_MS = 24 * 60 * 60 * 1000;

export interface RunnerListItem {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: string;
  heartbeatAt: string;
  live: boolean;
  /** Agent CLIs this runner found on its machine at start (null until detected). */
  shells: unknown;
  shellsDetectedAt: string | null;
}

export const runnersRouter = router({
  list: viewerProcedure.query(async ({ ctx }): Promise<RunnerListItem[]> => {
    const [{ now } = { now: new Date() }] = await ctx.prisma.$queryRaw<Array<{ now: Date }>>`SELECT now() AS now`;
    const rows = await ctx.prisma.runner.findMany({
      where: { stoppedAt: null, heartbeatAt: { gt: new Date(now.getTime() - LISTED_FOR_MS) } },
      select: { id: true, host: true, pid: true, version: true, startedAt: true, heartbeatAt: true, shells: true, shellsDetectedAt: true },
      orderBy: [{ startedAt: "asc" }, { id: "asc" }],
    });
    return rows.map((r) => ({
      ...r,
      startedAt: r.startedAt.toISOString(),
      heartbeatAt: r.heartbeatAt.toISOString(),
      shells: r.shells ?? null,
      shellsDetectedAt: r.shellsDetectedAt?.toISOString() ?? null,
      live: now.getTime() - r.heartbeatAt.getTime() < RUNNER_LIVENESS_MS,
    }));
  }),
});
