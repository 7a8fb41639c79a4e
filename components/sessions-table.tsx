// The most recent sessions, densest first: title, workflow, state, event count, last change.
import { formatAgo, formatTimestamp } from "@/lib/format-time";
import { EmptyState, Panel } from "./panel";
import { StateBadge } from "./state-badge";

export interface SessionRow {
  id: string;
  title: string;
  workflow: string;
  state: string;
  version: number;
  parentId: string | null;
  updatedAt: Date;
}

export function SessionsTable({ sessions, now, limit }: { sessions: SessionRow[]; now: Date; limit: number }) {
  return (
    <Panel title="Recent sessions" meta={sessions.length === limit ? `latest ${limit}` : `${sessions.length} shown`}>
      {sessions.length === 0 ? (
        <EmptyState
          title="No sessions yet"
          hint="A session appears here as soon as it is created, with its workflow, state and event count."
        />
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full table-fixed text-left text-sm">
            <colgroup>
              <col />
              <col className="w-36" />
              <col className="w-40" />
              <col className="w-14" />
              <col className="w-24" />
            </colgroup>
            <thead>
              <tr className="border-b border-zinc-200 text-[11px] tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400">
                <th className="px-4 py-2 font-medium">Session</th>
                <th className="px-3 py-2 font-medium">Workflow</th>
                <th className="px-3 py-2 font-medium">State</th>
                <th className="px-3 py-2 text-right font-medium" title="Events in the session's stream">Ver</th>
                <th className="px-4 py-2 text-right font-medium">Updated</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
              {sessions.map((s) => (
                <tr key={s.id} className="hover:bg-zinc-50 dark:hover:bg-zinc-800/40">
                  <td className="px-4 py-1.5">
                    <div className="truncate font-medium text-zinc-900 dark:text-zinc-100" title={s.title}>
                      {s.title}
                    </div>
                    <div className="truncate font-mono text-[11px] text-zinc-400 dark:text-zinc-500">
                      {s.id}
                      {s.parentId ? (
                        <span className="ml-2 text-violet-600 dark:text-violet-400" title={`forked from ${s.parentId}`}>
                          fork of {s.parentId}
                        </span>
                      ) : null}
                    </div>
                  </td>
                  <td className="truncate px-3 py-1.5 font-mono text-xs text-zinc-600 dark:text-zinc-300" title={s.workflow}>
                    {s.workflow}
                  </td>
                  <td className="px-3 py-1.5">
                    <StateBadge state={s.state} />
                  </td>
                  <td className="px-3 py-1.5 text-right font-mono text-xs tabular-nums text-zinc-600 dark:text-zinc-300">{s.version}</td>
                  <td className="px-4 py-1.5 text-right whitespace-nowrap text-xs text-zinc-500 tabular-nums dark:text-zinc-400" title={formatTimestamp(s.updatedAt)}>
                    {formatAgo(s.updatedAt, now)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Panel>
  );
}
