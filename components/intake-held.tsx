"use client";
// The inbox's held deliveries (docs/intake.md, "The inbox"): issues that matched a project's
// intake rule but were not started — the commenter has no write access, the project cannot
// start a task, the hourly cap was reached — each with its reason and a link to the issue.
// An operator starts its task (it then waits for a confirm like any) or dismisses it.
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { TRPCReactProvider, useTRPC } from "@/lib/trpc/client";
import type { HeldItem } from "@/server/intake/inbox";

const REASONS: Record<string, string> = {
  no_permission: "no write access",
  permission_unknown: "write access not checked",
  not_ready: "project not ready",
  rate_limited: "hourly cap reached",
};

function List({ items, canAct }: { items: HeldItem[]; canAct: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const start = useMutation(trpc.intake.startHeld.mutationOptions({ onSuccess: (r) => router.push(`/sessions/${r.sessionId}`) }));
  const dismiss = useMutation(trpc.intake.dismissHeld.mutationOptions({ onSuccess: () => router.refresh() }));
  const error = start.error ?? dismiss.error;
  if (items.length === 0) return <p className="p-4 text-sm text-zinc-600 dark:text-zinc-400">No issue waits to be started.</p>;
  return (
    <div>
      {error ? (
        <p role="alert" className="px-4 pt-2 text-xs text-rose-700 dark:text-rose-400">
          {error.message}
        </p>
      ) : null}
      <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="intake-held">
        {items.map((item) => (
          <li key={`${item.provider}-${item.deliveryId}`} data-testid="intake-held-item" className="space-y-1 px-4 py-2.5">
            <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
              <span className="rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-900 dark:bg-amber-950 dark:text-amber-200">
                {REASONS[item.reason] ?? item.reason}
              </span>
              <a
                href={item.issueUrl}
                rel="noreferrer"
                className="min-w-0 flex-1 truncate text-sm text-zinc-900 underline dark:text-zinc-100"
              >
                {item.repository}#{item.issueNumber} {item.title}
              </a>
              {canAct ? (
                <span className="flex gap-2">
                  <button
                    type="button"
                    disabled={start.isPending}
                    onClick={() => start.mutate({ projectId: item.projectId, deliveryId: item.deliveryId })}
                    className="rounded bg-sky-700 px-2 py-0.5 text-xs font-medium text-white hover:bg-sky-800 disabled:opacity-60"
                  >
                    Start task
                  </button>
                  <button
                    type="button"
                    disabled={dismiss.isPending}
                    onClick={() => dismiss.mutate({ projectId: item.projectId, deliveryId: item.deliveryId })}
                    className="rounded border border-zinc-300 px-2 py-0.5 text-xs text-zinc-800 hover:bg-zinc-50 dark:border-zinc-700 dark:text-zinc-200 dark:hover:bg-zinc-800"
                  >
                    Dismiss
                  </button>
                </span>
              ) : null}
            </div>
            <p className="text-xs text-zinc-600 dark:text-zinc-400">
              {item.detail} · {item.trigger} by <span className="font-mono">{item.sender}</span> · project{" "}
              <span className="font-mono">{item.projectId}</span> · {new Date(item.since).toLocaleString()}
            </p>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The /inbox page's held deliveries. */
export function IntakeHeldList(props: { items: HeldItem[]; canAct: boolean }) {
  return (
    <TRPCReactProvider>
      <List {...props} />
    </TRPCReactProvider>
  );
}
