"use client";
// A finished, unsuccessful session's workspace (req F14; docs/operations.md, "Cleaning up failed
// sessions"): whether its worktree was cleaned up, when and by whom, and for operators the
// "Clean up workspace" button, which asks once more before it removes anything. The events stay:
// replay, forks and export keep working. Read again every second while a runner cleans up.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Panel } from "@/components/panel";
import { SUCCESS_OUTCOMES } from "@/lib/outcomes";
import { formatTimestamp } from "@/lib/format-time";
import { useTRPC } from "@/lib/trpc/client";
import { BUTTON_STYLES } from "./session-actions";

const when = (iso: string) => formatTimestamp(new Date(iso));

/** `version`: the session's latest recorded fact; its clean-up events are among them. */
export function WorkspacePanel({
  sessionId,
  outcome,
  canOperate,
  version,
}: {
  sessionId: string;
  outcome: string | null;
  canOperate: boolean;
  version: number;
}) {
  const trpc = useTRPC();
  const [asking, setAsking] = useState(false);
  const status = useQuery(
    trpc.sessions.cleanUpStatus.queryOptions({ sessionId }, { refetchInterval: (q) => (q.state.data?.status === "asked" ? 1000 : false) }),
  );
  const { refetch } = status;
  useEffect(() => {
    void refetch();
  }, [version, refetch]);
  const cleanUp = useMutation(
    trpc.sessions.cleanUp.mutationOptions({
      onSettled: () => {
        setAsking(false);
        void refetch();
      },
    }),
  );
  if (outcome === null || SUCCESS_OUTCOMES.includes(outcome) || !status.data) return null;
  const s = status.data;
  return (
    <Panel title="Workspace">
      <div className="space-y-2 px-4 py-3 text-xs text-zinc-800 dark:text-zinc-200" data-testid="workspace-panel">
        {s.status === "pruned" ? (
          <p data-testid="workspace-pruned">
            Workspace cleaned up {when(s.prunedAt ?? s.askedAt)} by {s.askedByName}. Its events stay: replay and forks rebuild what they
            need.
          </p>
        ) : s.status === "asked" ? (
          <p data-testid="workspace-pruning">
            Cleaning up (asked {when(s.askedAt)} by {s.askedByName}); a runner removes the worktree…
          </p>
        ) : (
          <>
            {s.status === "failed" ? (
              <p role="alert" className="text-rose-700 dark:text-rose-300">
                The clean-up asked {when(s.askedAt)} by {s.askedByName} failed: {s.message}
              </p>
            ) : asking ? null : (
              <p className="text-zinc-700 dark:text-zinc-300">Its worktree and git refs stay on the runner until they are cleaned up.</p>
            )}
            {canOperate && !asking ? (
              <button type="button" data-testid="clean-up-button" className={BUTTON_STYLES.danger} onClick={() => setAsking(true)}>
                Clean up workspace
              </button>
            ) : null}
            {canOperate && asking ? (
              <div className="space-y-2" role="group" aria-label="Confirm the clean-up">
                <p>Remove this session&apos;s worktree, branch and pins? Its events and replay stay; a fork rebuilds the files.</p>
                <div className="flex gap-2">
                  <button
                    type="button"
                    data-testid="clean-up-confirm"
                    className={BUTTON_STYLES.danger}
                    disabled={cleanUp.isPending}
                    onClick={() => cleanUp.mutate({ sessionId })}
                  >
                    {cleanUp.isPending ? "Cleaning up…" : "Clean up"}
                  </button>
                  <button type="button" className={BUTTON_STYLES.secondary} onClick={() => setAsking(false)}>
                    Keep it
                  </button>
                </div>
              </div>
            ) : null}
          </>
        )}
        {cleanUp.error ? (
          <p role="alert" className="text-rose-700 dark:text-rose-300">
            {cleanUp.error.message}
          </p>
        ) : null}
      </div>
    </Panel>
  );
}
