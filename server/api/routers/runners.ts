// Runner processes: every one heard from in the last day, each marked live or not (the
// rule is server/runner/liveness.ts's, judged by the database clock), and the live ones
// with that clock for pages that show heartbeat ages.
import { listRunners, RUNNER_LIVENESS_MS, type RunnerInfo } from "../../runner/liveness";
import { router, viewerProcedure } from "../trpc";

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

function toItem(r: RunnerInfo): RunnerListItem {
  return {
    ...r,
    startedAt: r.startedAt.toISOString(),
    heartbeatAt: r.heartbeatAt.toISOString(),
    shellsDetectedAt: r.shellsDetectedAt?.toISOString() ?? null,
  };
}

export const runnersRouter = router({
  list: viewerProcedure.query(async ({ ctx }): Promise<RunnerListItem[]> => (await listRunners(ctx.pool)).runners.map(toItem)),
  /** The live runners, the database clock they were judged by, and the liveness window. */
  live: viewerProcedure.query(async ({ ctx }) => {
    const { now, runners } = await listRunners(ctx.pool, { liveOnly: true });
    return { now: now.toISOString(), livenessMs: RUNNER_LIVENESS_MS, runners: runners.map(toItem) };
  }),
});
