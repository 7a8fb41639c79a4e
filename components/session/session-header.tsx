"use client";
// The session's header: title, live state, the facts that frame it (workflow, mode,
// iteration against its cap, outcome, who started it, lineage both ways, the conversation a
// `/task` started it from) and the ways out
// (Replay, Fork tree, Export). The state is a polite live region: a screen reader hears it
// change, and the view moves focus to it after an action (Confirm, Cancel).
import { AppLink } from "@/components/app-link";
import type { ReactNode, RefObject } from "react";
import { LiveDot } from "@/components/live-dot";
import { StateBadge } from "@/components/state-badge";
import type { SessionHeader as Header } from "@/server/sessions/view/load";
import type { SessionStatus } from "@/server/sessions/view/progress";
import { formatTimestamp } from "@/lib/format-time";
import { actorName } from "./format";
import { DownloadIcon, ForkIcon, ReplayIcon } from "./icons";
import type { Connection } from "./use-live-session";

const LINK =
  "inline-flex items-center gap-1.5 rounded-md border border-zinc-200 bg-white px-2.5 py-1 text-xs font-medium text-zinc-700 shadow-sm hover:bg-zinc-50 hover:text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-300 dark:hover:bg-zinc-800 dark:hover:text-zinc-100";

export function SessionHeader({
  header,
  status,
  names,
  connection,
  eventCount,
  stateRef,
}: {
  header: Header;
  status: SessionStatus;
  names: Record<string, string>;
  connection: Connection;
  eventCount: number;
  /** Where focus goes after an action, so the new state is what is read next. */
  stateRef?: RefObject<HTMLSpanElement | null>;
}) {
  return (
    <section className="rounded-lg border border-zinc-200 bg-white px-5 py-4 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60 dark:shadow-none">
      {/* On a narrow screen the title keeps the whole width (wrapping, never cut to "D.") and the actions go under it. */}
      <div className="flex flex-col gap-3 md:flex-row md:items-start md:gap-x-4">
        <div className="min-w-0 flex-1">
          <div className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1">
            <h1 className="min-w-0 text-lg font-semibold tracking-tight break-words text-zinc-900 dark:text-zinc-50" title={header.title}>
              {header.title}
            </h1>
            <span
              ref={stateRef}
              id="session-state"
              data-testid="state-badge"
              data-state={status.state}
              role="status"
              aria-live="polite"
              aria-atomic="true"
              tabIndex={-1}
              className="rounded-full outline-none focus-visible:ring-2 focus-visible:ring-zinc-400"
            >
              <span className="sr-only">Session state: </span>
              <StateBadge state={status.state} />
            </span>
            <LiveIndicator connection={connection} finished={status.status !== "active"} />
          </div>
          <p className="mt-0.5 font-mono text-xs text-zinc-500 dark:text-zinc-400">{header.id}</p>
        </div>
        <nav className="flex flex-wrap items-center gap-1.5" aria-label="Session pages">
          <AppLink href={`/sessions/${header.id}/replay`} className={LINK} data-testid="replay-link">
            <ReplayIcon /> Replay
          </AppLink>
          <AppLink href={`/sessions/${header.id}/tree`} className={LINK} data-testid="tree-link">
            <ForkIcon /> Fork tree
          </AppLink>
          <a href={`/api/sessions/${header.id}/export`} download className={LINK} data-testid="export-link">
            <DownloadIcon /> Export
          </a>
        </nav>
      </div>
      <dl className="mt-3 grid grid-cols-2 gap-x-6 gap-y-2 border-t border-zinc-100 pt-3 text-xs sm:grid-cols-4 xl:grid-cols-7 dark:border-zinc-800">
        <Fact label="Workflow" mono>
          {status.workflow ?? header.workflow}
        </Fact>
        <Fact label="Mode">{status.mode ?? "—"}</Fact>
        <Fact label="Iteration" mono testId="iteration">
          {status.iteration || "—"}
          {status.maxIterations ? <span className="text-zinc-500 dark:text-zinc-400"> / {status.maxIterations}</span> : null}
        </Fact>
        <Fact label="Outcome" testId="outcome">
          {status.outcome ? (
            <StateBadge state={status.outcome} />
          ) : (
            <span className="text-zinc-500 dark:text-zinc-400">{status.status === "active" ? "in progress" : "—"}</span>
          )}
        </Fact>
        <Fact label="Started by">
          <span title={`${header.createdBy} · ${formatTimestamp(new Date(header.createdAt))}`}>{actorName(header.createdBy, names)}</span>
        </Fact>
        <Fact label="Project" title={header.project ?? undefined}>
          {header.project ?? "—"}
        </Fact>
        <Fact label="Events" mono>
          {eventCount}
        </Fact>
      </dl>
      {header.conversation ? (
        <p
          className="mt-3 border-t border-zinc-100 pt-2.5 text-xs text-zinc-600 dark:border-zinc-800 dark:text-zinc-300"
          data-testid="from-conversation"
        >
          Started by <code className="font-mono">/task</code> in the conversation{" "}
          <AppLink
            href={`/conversations/${header.conversation.id}#entry-${header.conversation.version}`}
            className="font-medium text-sky-700 hover:underline dark:text-sky-400"
            data-testid="conversation-link"
          >
            {header.conversation.title}
          </AppLink>
        </p>
      ) : null}
      {header.parent || header.children.length ? (
        <div
          className="mt-3 flex flex-wrap items-center gap-x-4 gap-y-1 border-t border-zinc-100 pt-2.5 text-xs text-zinc-600 dark:border-zinc-800 dark:text-zinc-300"
          data-testid="lineage"
        >
          {header.parent ? (
            <span>
              <span className="inline-flex items-center gap-1 text-violet-600 dark:text-violet-400">
                <ForkIcon /> fork of
              </span>{" "}
              <AppLink href={`/sessions/${header.parent.id}`} className="font-medium hover:underline">
                {header.parent.title}
              </AppLink>{" "}
              <span className="text-zinc-500 dark:text-zinc-400">
                at event {header.parent.atVersion}
                {header.parent.reason ? ` (${header.parent.reason})` : ""}
              </span>
            </span>
          ) : null}
          {header.children.length ? (
            <span className="flex min-w-0 flex-wrap items-center gap-x-2">
              <span className="text-zinc-500 dark:text-zinc-400">
                {header.children.length} fork{header.children.length === 1 ? "" : "s"}:
              </span>
              {header.children.map((c) => (
                <AppLink key={c.id} href={`/sessions/${c.id}`} className="inline-flex items-center gap-1 hover:underline" title={c.title}>
                  <span className="font-mono text-xs">{c.id}</span>
                  <StateBadge state={c.state} />
                </AppLink>
              ))}
            </span>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

function Fact({
  label,
  children,
  mono = false,
  testId,
  title,
}: {
  label: string;
  children: ReactNode;
  mono?: boolean;
  testId?: string;
  title?: string;
}) {
  return (
    <div className="min-w-0">
      <dt className="text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">{label}</dt>
      <dd
        data-testid={testId}
        title={title}
        className={`mt-0.5 truncate text-zinc-800 dark:text-zinc-200 ${mono ? "font-mono text-xs" : ""}`}
      >
        {children}
      </dd>
    </div>
  );
}

/** A finished session has nothing left to follow: no green "live" dot for it. */
function LiveIndicator({ connection, finished }: { connection: Connection; finished: boolean }) {
  const look = {
    live: finished ? { dot: "bg-zinc-400", text: "finished", ping: false } : { dot: "bg-emerald-500", text: "live", ping: true },
    connecting: { dot: "bg-zinc-400", text: "connecting", ping: false },
    reconnecting: { dot: "bg-amber-500", text: "reconnecting", ping: false },
    closed: { dot: "bg-rose-500", text: "not live", ping: false },
  }[connection];
  return (
    <span
      data-testid="live-indicator"
      data-connection={connection}
      className="inline-flex items-center gap-1.5 text-xs text-zinc-500 dark:text-zinc-400"
      title="Updates arrive as the session records them (Server-Sent Events)"
    >
      <LiveDot color={look.dot} ping={look.ping} size="size-1.5" />
      {look.text}
    </span>
  );
}
