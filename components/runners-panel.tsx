// Live runner processes: identity, where they run, how fresh their heartbeat is, their labels
// and the projects each cannot serve, with why (docs/scaling.md, "Which runner runs a step").
import { formatAge, formatAgo, formatTimestamp } from "@/lib/format-time";
import { EmptyState, Kbd, Panel } from "./panel";

export interface RunnerRow {
  id: string;
  host: string;
  /** null when the viewer may not see it. */
  pid: number | null;
  version: string;
  startedAt: Date;
  heartbeatAt: Date;
  labels: string[];
  /** null: not reported; reason null when the viewer may not see paths. */
  unservedProjects: Array<{ projectId: string; reason: string | null }> | null;
}

export function RunnersPanel({ runners, now, livenessMs }: { runners: RunnerRow[]; now: Date; livenessMs: number }) {
  return (
    <Panel title="Live runners" meta={`heartbeat < ${Math.round(livenessMs / 1000)}s`}>
      {runners.length === 0 ? (
        <EmptyState
          title="No live runners"
          hint={
            <>
              Steps wait in the queue until a runner claims them. Start one with <Kbd>npm run runner</Kbd>.
            </>
          }
        />
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
          {runners.map((r) => {
            const age = now.getTime() - r.heartbeatAt.getTime();
            const lagging = age > livenessMs / 2;
            return (
              <li key={r.id} className="flex items-start gap-3 px-4 py-2.5">
                <span className={`mt-1.5 size-2 shrink-0 rounded-full ${lagging ? "bg-amber-500" : "bg-emerald-500"}`} aria-hidden />
                <div className="min-w-0 flex-1">
                  <div className="truncate font-mono text-xs font-medium text-zinc-900 dark:text-zinc-100" title={r.id}>
                    {r.id}
                  </div>
                  <div className="mt-0.5 flex flex-wrap gap-x-3 text-xs text-zinc-500 dark:text-zinc-400">
                    <span>{r.host}</span>
                    {r.pid !== null && <span className="font-mono">pid {r.pid}</span>}
                    <span className="font-mono">v{r.version}</span>
                    <span title={`started ${formatTimestamp(r.startedAt)}`}>up {formatAge(now.getTime() - r.startedAt.getTime())}</span>
                  </div>
                  {r.labels.length > 0 && (
                    <ul className="mt-1 flex flex-wrap gap-1" aria-label={`labels of runner ${r.id}`} data-testid="runner-labels">
                      {r.labels.map((label) => (
                        <li
                          key={label}
                          className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-xs text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300"
                        >
                          {label}
                        </li>
                      ))}
                    </ul>
                  )}
                  {r.unservedProjects && r.unservedProjects.length > 0 && (
                    <div className="mt-1 text-xs text-amber-800 dark:text-amber-300" data-testid="runner-unserved">
                      <div className="font-medium">Cannot serve</div>
                      <ul aria-label={`projects runner ${r.id} cannot serve`}>
                        {r.unservedProjects.map((u) => (
                          <li key={u.projectId} className="break-words">
                            <span className="font-mono">{u.projectId}</span>
                            {u.reason && <span>: {u.reason}</span>}
                          </li>
                        ))}
                      </ul>
                    </div>
                  )}
                </div>
                <div
                  className="shrink-0 text-right text-xs tabular-nums text-zinc-500 dark:text-zinc-400"
                  title={formatTimestamp(r.heartbeatAt)}
                >
                  <div className={lagging ? "text-amber-700 dark:text-amber-400" : ""}>{formatAgo(r.heartbeatAt, now)}</div>
                  <div className="text-zinc-500 dark:text-zinc-400">heartbeat</div>
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </Panel>
  );
}
