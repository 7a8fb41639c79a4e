// The title row of a session's sub-pages (replay, fork tree, compare, bake-off): where you are, and the way
// to the session itself and to its other views.
import type { ReactNode } from "react";

export type SessionView = "replay" | "tree" | "compare" | "bake-off";

export function SessionCrumbs({
  sessionId,
  title,
  view,
  children,
}: {
  sessionId: string;
  title: string | null;
  view: SessionView;
  children?: ReactNode;
}) {
  const tab = (target: SessionView, label: string) =>
    target === view ? (
      <span className="rounded-md bg-zinc-900 px-2.5 py-1 font-medium text-white dark:bg-zinc-100 dark:text-zinc-900" aria-current="page">
        {label}
      </span>
    ) : (
      <a
        href={`/sessions/${sessionId}/${target}`}
        className="rounded-md px-2.5 py-1 text-zinc-600 ring-1 ring-inset ring-zinc-200 hover:bg-zinc-50 hover:text-zinc-900 dark:text-zinc-300 dark:ring-zinc-800 dark:hover:bg-zinc-800/60 dark:hover:text-zinc-100"
      >
        {label}
      </a>
    );
  return (
    <div className="flex flex-wrap items-end justify-between gap-3">
      <div className="min-w-0">
        <nav className="flex items-center gap-1.5 text-xs text-zinc-500 dark:text-zinc-400" aria-label="Breadcrumb">
          <a href="/" className="hover:text-zinc-900 dark:hover:text-zinc-100">
            Dashboard
          </a>
          <span aria-hidden>/</span>
          <a href={`/sessions/${sessionId}`} className="font-mono hover:text-zinc-900 dark:hover:text-zinc-100">
            {sessionId}
          </a>
          <span aria-hidden>/</span>
          <span className="text-zinc-700 dark:text-zinc-300">
            {view === "replay" ? "Replay" : view === "tree" ? "Fork tree" : view === "bake-off" ? "Bake-off" : "Compare"}
          </span>
        </nav>
        <h1 className="mt-1 text-lg font-semibold tracking-tight break-words" title={title ?? sessionId}>
          {title ?? sessionId}
        </h1>
        {children}
      </div>
      <div className="flex items-center gap-1.5 text-xs">
        <a
          href={`/sessions/${sessionId}`}
          className="rounded-md px-2.5 py-1 text-zinc-600 ring-1 ring-inset ring-zinc-200 hover:bg-zinc-50 hover:text-zinc-900 dark:text-zinc-300 dark:ring-zinc-800 dark:hover:bg-zinc-800/60 dark:hover:text-zinc-100"
        >
          Session
        </a>
        {tab("replay", "Replay")}
        {tab("tree", "Fork tree")}
      </div>
    </div>
  );
}
