// Sessions, newest first: title, project, workflow and mode, state, iteration, who started
// it, age, last change, event count. Each row links to its session (and to its replay and
// fork tree, always shown: touch has no hover); rows carry data attributes the keyboard navigation (j/k, enter) uses.
import type { ReactNode } from "react";
import { formatAge, formatAgo, formatTimestamp } from "@/lib/format-time";
import { EmptyState } from "./panel";
import { forgeStatusOf } from "@/lib/outcomes";
import { StateBadge } from "./state-badge";
import { ForkIcon } from "./tree/fork-icon";

export interface SessionRow {
  id: string;
  title: string;
  workflow: string;
  state: string;
  mode: string | null;
  iteration: number | null;
  outcome: string | null;
  projectId: string | null;
  projectName: string | null;
  parentId: string | null;
  forkVersion: number | null;
  createdBy: string;
  /** The starter's display name (or the actor label for agents and the system). */
  startedBy: string;
  mine: boolean;
  createdAt: Date;
  version: number;
  updatedAt: Date;
}

/** Columns shown from md up: a phone gets the session and its state. */
const WIDE = "hidden md:table-column";
const WIDE_CELL = "hidden md:table-cell";

export function SessionsTable({ sessions, now, empty }: { sessions: SessionRow[]; now: Date; empty?: ReactNode }) {
  if (sessions.length === 0) {
    return (
      <EmptyState
        title="No sessions match"
        hint={empty ?? "A session appears here as soon as it is created, with its workflow, state and event count."}
      />
    );
  }
  return (
    <div className="overflow-x-auto">
      <table className="w-full table-fixed text-left text-sm md:min-w-[880px]">
        <colgroup>
          {/* On a phone: the session and its state; the other columns from md up. */}
          <col />
          <col className={`w-28 ${WIDE}`} />
          <col className="w-40 md:w-56" />
          <col className={`w-12 ${WIDE}`} />
          <col className={`w-32 ${WIDE}`} />
          <col className={`w-16 ${WIDE}`} />
          <col className={`w-20 ${WIDE}`} />
          <col className={`w-14 ${WIDE}`} />
        </colgroup>
        <thead>
          <tr className="border-b border-zinc-200 text-xs tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400">
            <th className="px-4 py-2 font-medium">Session</th>
            <th className={`${WIDE_CELL} px-3 py-2 font-medium`}>Workflow</th>
            <th className="px-3 py-2 font-medium">State</th>
            <th className={`${WIDE_CELL} px-2 py-2 text-right font-medium`} title="Iteration of the review loop">
              Iter
            </th>
            <th className={`${WIDE_CELL} px-3 py-2 font-medium`}>Started by</th>
            <th className={`${WIDE_CELL} px-2 py-2 text-right font-medium`} title="Time since the session was created">
              Age
            </th>
            <th className={`${WIDE_CELL} px-3 py-2 text-right font-medium`}>Updated</th>
            <th className={`${WIDE_CELL} px-4 py-2 text-right font-medium`} title="Events in the session's own stream">
              Ev
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70" data-session-rows>
          {sessions.map((s) => (
            <tr
              key={s.id}
              data-session-row
              data-href={`/sessions/${s.id}`}
              className="group hover:bg-zinc-50 data-[selected]:bg-sky-50 data-[selected]:shadow-[inset_2px_0_0_0_var(--color-sky-500)] dark:hover:bg-zinc-800/40 dark:data-[selected]:bg-sky-500/10"
            >
              <td className="px-4 py-1.5">
                <div className="flex min-w-0 items-baseline gap-2">
                  <a
                    href={`/sessions/${s.id}`}
                    className="truncate font-medium text-zinc-900 hover:underline dark:text-zinc-100"
                    title={s.title}
                  >
                    {s.title}
                  </a>
                  <span className="ml-auto flex shrink-0 gap-2 text-xs">
                    <a href={`/sessions/${s.id}/replay`} className="text-sky-700 hover:underline dark:text-sky-400">
                      replay
                    </a>
                    <a href={`/sessions/${s.id}/tree`} className="text-violet-700 hover:underline dark:text-violet-400">
                      tree
                    </a>
                  </span>
                </div>
                <div className="flex min-w-0 gap-2 truncate font-mono text-xs text-zinc-500 dark:text-zinc-400">
                  <span>{s.id}</span>
                  {s.projectName ? (
                    <span className="truncate text-zinc-500 dark:text-zinc-400" title={`project ${s.projectId}`}>
                      {s.projectId}
                    </span>
                  ) : null}
                  {s.parentId ? (
                    <a
                      href={`/sessions/${s.id}/tree`}
                      className="inline-flex items-center gap-1 truncate text-violet-600 hover:underline dark:text-violet-400"
                      title={`forked from ${s.parentId} at event ${s.forkVersion}`}
                    >
                      <ForkIcon className="size-2.5" />
                      {s.parentId}@{s.forkVersion}
                    </a>
                  ) : null}
                </div>
              </td>
              <td className={`${WIDE_CELL} px-3 py-1.5`}>
                <div className="truncate font-mono text-xs text-zinc-700 dark:text-zinc-300" title={s.workflow}>
                  {s.workflow}
                </div>
                <div className="truncate text-xs text-zinc-500 dark:text-zinc-400">{s.mode ?? "—"}</div>
              </td>
              <td className="px-3 py-1.5">
                <StateBadge state={s.state} />
                {s.outcome && s.outcome !== s.state ? (
                  <div className="mt-0.5 truncate font-mono text-xs text-zinc-500 dark:text-zinc-400">outcome {s.outcome}</div>
                ) : null}
                {s.workflow === "forge" ? (
                  <div data-testid="forge-status" className="mt-0.5 truncate text-xs text-zinc-600 dark:text-zinc-400">
                    Forge: {forgeStatusOf(s.outcome)}
                  </div>
                ) : null}
              </td>
              <td className={`${WIDE_CELL} px-2 py-1.5 text-right font-mono text-xs tabular-nums text-zinc-600 dark:text-zinc-300`}>
                {s.iteration ?? "—"}
              </td>
              <td className={`${WIDE_CELL} truncate px-3 py-1.5 text-xs text-zinc-600 dark:text-zinc-300`} title={s.startedBy}>
                {s.startedBy}
                {s.mine ? <span className="ml-1 text-xs text-zinc-500 dark:text-zinc-400">(you)</span> : null}
              </td>
              <td
                className={`${WIDE_CELL} px-2 py-1.5 text-right text-xs whitespace-nowrap text-zinc-500 tabular-nums dark:text-zinc-400`}
                title={`created ${formatTimestamp(s.createdAt)}`}
              >
                {formatAge(now.getTime() - s.createdAt.getTime())}
              </td>
              <td
                className={`${WIDE_CELL} px-3 py-1.5 text-right text-xs whitespace-nowrap text-zinc-500 tabular-nums dark:text-zinc-400`}
                title={formatTimestamp(s.updatedAt)}
              >
                {formatAgo(s.updatedAt, now)}
              </td>
              <td className={`${WIDE_CELL} px-4 py-1.5 text-right font-mono text-xs tabular-nums text-zinc-600 dark:text-zinc-300`}>
                {s.version}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
