"use client";
// The attention inbox in the browser: the header's count and the /inbox list, both live
// (the `inbox.live` subscription, over Server-Sent Events, pushes the inbox whenever it
// changes). Operators acknowledge an item; everyone signed in sees the list.
import { useMutation } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import { TRPCReactProvider, useTRPC } from "@/lib/trpc/client";
import type { Inbox, InboxItem } from "@/server/sessions/inbox";

const LABELS: Record<InboxItem["attention"], { label: string; tone: string }> = {
  waiting: { label: "waits for a confirm", tone: "bg-sky-100 text-sky-900 dark:bg-sky-950 dark:text-sky-200" },
  escalated: { label: "escalated", tone: "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200" },
  failed: { label: "failed", tone: "bg-rose-100 text-rose-900 dark:bg-rose-950 dark:text-rose-200" },
};

function useLiveInbox(initial: Inbox, filters: { projectId?: string; mine?: boolean; countOnly?: boolean }) {
  const trpc = useTRPC();
  const [inbox, setInbox] = useState(initial);
  const subscription = useSubscription(trpc.inbox.live.subscriptionOptions(filters, { onData: (data) => setInbox(data) }));
  return { inbox, live: subscription.status === "pending" };
}

function Count({ initial }: { initial: number }) {
  // Every page has it: the count only, never the items.
  const { inbox } = useLiveInbox({ count: initial, items: [] }, { countOnly: true });
  if (inbox.count === 0) return null;
  return (
    <span
      data-testid="inbox-count"
      aria-label={`${inbox.count} need a person`}
      className="ml-1 rounded-full bg-rose-700 px-1.5 py-px font-mono text-xs font-semibold text-white"
    >
      {inbox.count}
    </span>
  );
}

/** The header's live count of sessions that need a person. */
export function InboxCount({ initial }: { initial: number }) {
  return (
    <TRPCReactProvider>
      <Count initial={initial} />
    </TRPCReactProvider>
  );
}

function List({
  initial,
  filters,
  canAcknowledge,
}: {
  initial: Inbox;
  filters: { projectId?: string; mine?: boolean };
  canAcknowledge: boolean;
}) {
  const trpc = useTRPC();
  const { inbox, live } = useLiveInbox(initial, filters);
  const ack = useMutation(trpc.inbox.acknowledge.mutationOptions());
  return (
    <div>
      <p className="px-4 pt-3 text-xs text-zinc-600 dark:text-zinc-400" data-testid="inbox-connection" data-live={live}>
        {inbox.count} session{inbox.count === 1 ? "" : "s"} need{inbox.count === 1 ? "s" : ""} a person · {live ? "live" : "connecting…"}
      </p>
      {ack.error ? (
        <p role="alert" className="px-4 pt-2 text-xs text-rose-700 dark:text-rose-400">
          {ack.error.message}
        </p>
      ) : null}
      {inbox.items.length === 0 ? (
        <p className="p-4 text-sm text-zinc-600 dark:text-zinc-400">Nothing needs a person right now.</p>
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="inbox-items">
          {inbox.items.map((item) => (
            <li
              key={item.sessionId}
              data-testid="inbox-item"
              data-session={item.sessionId}
              className="flex flex-wrap items-center gap-x-3 gap-y-1 px-4 py-2.5"
            >
              <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${LABELS[item.attention].tone}`}>
                {LABELS[item.attention].label}
              </span>
              <a
                href={`/sessions/${item.sessionId}`}
                className="min-w-0 flex-1 truncate text-sm text-zinc-900 hover:underline dark:text-zinc-100"
              >
                {item.title}
              </a>
              <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">
                {item.projectId ?? "–"} · {item.outcome ?? item.state} · {new Date(item.since).toLocaleString()}
              </span>
              {canAcknowledge ? (
                <button
                  type="button"
                  onClick={() => ack.mutate({ sessionId: item.sessionId })}
                  className="rounded border border-zinc-300 px-2 py-0.5 text-xs text-zinc-800 hover:bg-zinc-50 dark:border-zinc-700 dark:text-zinc-200 dark:hover:bg-zinc-800"
                >
                  Acknowledge
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The /inbox page's list, live. */
export function InboxList(props: { initial: Inbox; filters: { projectId?: string; mine?: boolean }; canAcknowledge: boolean }) {
  return (
    <TRPCReactProvider>
      <List {...props} />
    </TRPCReactProvider>
  );
}
