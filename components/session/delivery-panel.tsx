"use client";
// An approved session's deliveries (docs/delivery.md): each with what it did — the pull request's
// link, the merge, the push — or why it could not, and for operators the Deliver button (the
// project's delivery settings say how). Read again every second while one is running.
import { useMutation, useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useEffect } from "react";
import { Panel } from "@/components/panel";
import { useTRPC } from "@/lib/trpc/client";
import type { AppRouter } from "@/server/api/root";
import { BUTTON_STYLES } from "./session-actions";

type Delivery = inferRouterOutputs<AppRouter>["sessions"]["deliveries"][number];

const DELIVERABLE = ["approved", "completed"];

function Outcome({ d }: { d: Delivery }) {
  const o = d.outcome;
  if (!o) return <span className="text-zinc-600 dark:text-zinc-400">running…</span>;
  if (o.type === "DeliveryFailed") {
    return (
      <span className="text-rose-700 dark:text-rose-300" data-testid="delivery-failed">
        failed ({o.errorClass}): {o.message}
        {o.files.length ? ` — ${o.files.join(", ")}` : ""}
      </span>
    );
  }
  if (o.pullRequest) {
    return (
      <a
        href={o.pullRequest.url}
        className="text-sky-800 underline dark:text-sky-300"
        data-testid="pull-request-link"
        rel="noreferrer"
        target="_blank"
      >
        pull request #{o.pullRequest.number} {o.pullRequest.updated ? "(updated)" : ""}
      </a>
    );
  }
  if (o.merged) {
    return (
      <span className="text-emerald-800 dark:text-emerald-300">
        merged into <span className="font-mono">{o.merged.target}</span> ({o.merged.how.replace("_", " ")})
      </span>
    );
  }
  return <span className="text-emerald-800 dark:text-emerald-300">pushed to {o.pushed?.remote}</span>;
}

/**
 * `version`: the session's latest recorded fact; its delivery events are among them, so the list
 * is read again when one is appended, whoever asked (this page, the CLI, auto-delivery).
 */
export function DeliveryPanel({
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
  const deliveries = useQuery(
    trpc.sessions.deliveries.queryOptions(
      { sessionId },
      { refetchInterval: (q) => (q.state.data?.some((d) => d.outcome === null) ? 1000 : false) },
    ),
  );
  const { refetch } = deliveries;
  useEffect(() => {
    void refetch();
  }, [version, refetch]);
  const deliver = useMutation(trpc.sessions.deliver.mutationOptions({ onSettled: () => void deliveries.refetch() }));
  const approvals = useQuery(trpc.sessions.deliveryApprovals.queryOptions({ sessionId }));
  // The last approval needed may deliver at once (delivery on approval): both are read again.
  const approve = useMutation(
    trpc.sessions.approveDelivery.mutationOptions({
      onSettled: () => {
        void approvals.refetch();
        void deliveries.refetch();
      },
    }),
  );
  const needed = approvals.data?.needed ?? 0;
  const approvedBy = approvals.data?.approvedBy ?? [];
  const deliverable = outcome !== null && DELIVERABLE.includes(outcome);
  const list = deliveries.data ?? [];
  if (!deliverable && !list.length) return null;
  const running = list.some((d) => d.outcome === null);
  return (
    <Panel title="Delivery">
      <div className="space-y-2 px-4 py-3 text-xs" data-testid="delivery-panel">
        {list.length ? (
          <ul className="space-y-1.5">
            {list.map((d) => (
              <li key={d.stepId} className="text-zinc-800 dark:text-zinc-200">
                <span className="font-mono">{d.requested.method.replace("_", " ")}</span> of{" "}
                <span className="font-mono">{d.requested.branch}</span> by {d.requested.byName}: <Outcome d={d} />
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-zinc-700 dark:text-zinc-300">
            Its work is on the branch of this session; Deliver gets it out as the project says.
          </p>
        )}
        {deliverable && needed > 0 ? (
          <p className="text-zinc-800 dark:text-zinc-200" data-testid="delivery-approvals">
            Approvals: {approvedBy.length} of {needed}
            {approvedBy.length ? ` (${approvedBy.map((a) => a.name).join(", ")})` : ""}
          </p>
        ) : null}
        {canOperate && deliverable && needed > approvedBy.length ? (
          <button
            type="button"
            data-testid="approve-delivery-button"
            className={BUTTON_STYLES.secondary}
            disabled={approve.isPending}
            onClick={() => approve.mutate({ sessionId })}
          >
            Approve the delivery
          </button>
        ) : null}
        {approve.error ? (
          <p role="alert" className="text-rose-700 dark:text-rose-300">
            {approve.error.message}
          </p>
        ) : null}
        {canOperate && deliverable && needed <= approvedBy.length ? (
          <button
            type="button"
            data-testid="deliver-button"
            className={BUTTON_STYLES.confirm}
            disabled={deliver.isPending || running}
            onClick={() => deliver.mutate({ sessionId })}
          >
            {deliver.isPending || running ? "Delivering…" : list.length ? "Deliver again" : "Deliver"}
          </button>
        ) : null}
        {deliver.error ? (
          <p role="alert" className="text-rose-700 dark:text-rose-300">
            {deliver.error.message}
          </p>
        ) : null}
      </div>
    </Panel>
  );
}
