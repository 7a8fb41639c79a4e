"use client";
// Whether a step waiting for a runner waits in vain: no runner has been alive for a while
// (a runner counts as live for 15 s after its last heartbeat, server/runner/liveness.ts).
// The count is first read a poll before that wait is over, then every few seconds while the
// step still waits: a step that a runner takes at once (nearly every one) asks nothing, so no
// request is added to the moment a step starts, for each person watching (docs/scaling.md,
// "First output and live paint").
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc/client";

/** How long a step waits before the page says no runner is there to take it. */
export const RUNNER_DOWN_AFTER_MS = 15_000;
const POLL_MS = 5_000;

export const START_RUNNER_HINT = "No runner is alive — start one with `npm run runner`";

/** Whether a step that has waited `waitedMs` (null: not waiting) needs the live runners' count yet. */
export function asksForRunners(waitedMs: number | null): boolean {
  return waitedMs !== null && waitedMs >= RUNNER_DOWN_AFTER_MS - POLL_MS;
}

/** True once the step has waited `RUNNER_DOWN_AFTER_MS` and the latest count says no runner is live. */
export function runnerDown(waitedMs: number | null, liveRunners: number | null): boolean {
  return waitedMs !== null && waitedMs >= RUNNER_DOWN_AFTER_MS && liveRunners === 0;
}

/** The live runners once a step has waited long enough to ask (`asksForRunners`); null when not asked or not known. */
export function useLiveRunnerCount(waitedMs: number | null): number | null {
  const trpc = useTRPC();
  const asking = asksForRunners(waitedMs);
  const live = useQuery(
    trpc.runners.live.queryOptions(undefined, { enabled: asking, refetchInterval: asking ? POLL_MS : false, staleTime: 0 }),
  );
  return asking && live.data ? live.data.runners.length : null;
}
