"use client";
// Whether a step waiting for a runner waits in vain: no runner has been alive for a while
// (a runner counts as live for 15 s after its last heartbeat, server/runner/liveness.ts).
// The count is read again every few seconds, only while a step waits for one.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc/client";

/** How long a step waits before the page says no runner is there to take it. */
export const RUNNER_DOWN_AFTER_MS = 15_000;
const POLL_MS = 5_000;

export const START_RUNNER_HINT = "No runner is alive — start one with `npm run runner`";

/** True once the step has waited `RUNNER_DOWN_AFTER_MS` and the latest count says no runner is live. */
export function runnerDown(waitedMs: number | null, liveRunners: number | null): boolean {
  return waitedMs !== null && waitedMs >= RUNNER_DOWN_AFTER_MS && liveRunners === 0;
}

/** The live runners while `waiting` (null when not asked or not known). */
export function useLiveRunnerCount(waiting: boolean): number | null {
  const trpc = useTRPC();
  const live = useQuery(
    trpc.runners.live.queryOptions(undefined, { enabled: waiting, refetchInterval: waiting ? POLL_MS : false, staleTime: 0 }),
  );
  return waiting && live.data ? live.data.runners.length : null;
}
