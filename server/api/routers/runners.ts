// Runner processes: every one heard from in the last day, each marked live or not (the
// rule is server/runner/liveness.ts's, judged by the database clock), and the live ones
// with that clock for pages that show heartbeat ages. Where runners run (host names, pids,
// the CLIs' paths) is for operators, like the settings pages; a viewer sees each host as a
// stable pseudonym (so "2 hosts" still counts right) and no pid or shells. Whether a runner's
// agents run sandboxed is shown to everyone.
import { createHash } from "node:crypto";
import { hasRole } from "../../../lib/roles";
import { listRunners, RUNNER_LIVENESS_MS, type RunnerInfo, type RunnerSandbox } from "../../runner/liveness";
import { router, viewerProcedure } from "../trpc";

export interface RunnerListItem {
  id: string;
  /** The host name; for a viewer, `host-` and a short hash of it. */
  host: string;
  /** null for a viewer. */
  pid: number | null;
  version: string;
  startedAt: string;
  heartbeatAt: string;
  live: boolean;
  /** Agent CLIs this runner found on its machine at start (null until detected). */
  shells: unknown;
  shellsDetectedAt: string | null;
  /** Whether its agents and test commands run sandboxed, and why not (null: not reported). Everyone sees it. */
  sandbox: RunnerSandbox | null;
  labels: string[];
  /**
   * Registered projects it cannot serve and why (docs/scaling.md, "Which runner runs a step");
   * null: not reported. A viewer sees the project ids, not the paths (reason null).
   */
  unservedProjects: Array<{ projectId: string; repoPath: string | null; reason: string | null }> | null;
}

function toItem(r: RunnerInfo, operator: boolean): RunnerListItem {
  const item = {
    ...r,
    startedAt: r.startedAt.toISOString(),
    heartbeatAt: r.heartbeatAt.toISOString(),
    shellsDetectedAt: r.shellsDetectedAt?.toISOString() ?? null,
  };
  if (operator) return item;
  return {
    ...item,
    host: `host-${createHash("sha256").update(r.host).digest("hex").slice(0, 8)}`,
    pid: null,
    shells: null,
    unservedProjects: r.unservedProjects?.map((u) => ({ projectId: u.projectId, repoPath: null, reason: null })) ?? null,
  };
}

export const runnersRouter = router({
  list: viewerProcedure.query(async ({ ctx }): Promise<RunnerListItem[]> => {
    const operator = hasRole(ctx.user.role, "operator");
    return (await listRunners(ctx.pool)).runners.map((r) => toItem(r, operator));
  }),
  /** The live runners, the database clock they were judged by, and the liveness window. */
  live: viewerProcedure.query(async ({ ctx }) => {
    const operator = hasRole(ctx.user.role, "operator");
    const { now, runners } = await listRunners(ctx.pool, { liveOnly: true });
    return { now: now.toISOString(), livenessMs: RUNNER_LIVENESS_MS, runners: runners.map((r) => toItem(r, operator)) };
  }),
});
