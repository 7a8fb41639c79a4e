// Sessions by state: a stacked bar plus a legend with counts.
import { stateTone, TONE_ORDER } from "@/lib/state-tone";
import { EmptyState, Panel } from "./panel";
import { StateBadge } from "./state-badge";
import { TONE_FILL } from "./tone-classes";

export function StateBreakdown({ counts, total }: { counts: Array<{ state: string; count: number }>; total: number }) {
  const ordered = [...counts].sort(
    (a, b) => TONE_ORDER.indexOf(stateTone(a.state)) - TONE_ORDER.indexOf(stateTone(b.state)) || b.count - a.count,
  );
  return (
    <Panel title="Sessions by state" meta={`${total.toLocaleString("en-US")} total`}>
      {total === 0 ? (
        <EmptyState title="No sessions" hint="States appear here once sessions exist." />
      ) : (
        <div className="space-y-3 p-4">
          <div className="flex h-2 w-full gap-px overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800">
            {ordered.map((c) => (
              <div
                key={c.state}
                className={TONE_FILL[stateTone(c.state)]}
                style={{ width: `${(c.count / total) * 100}%` }}
                title={`${c.state}: ${c.count}`}
              />
            ))}
          </div>
          <ul className="grid grid-cols-1 gap-x-4 gap-y-1.5 sm:grid-cols-2">
            {ordered.map((c) => (
              <li key={c.state} className="flex min-w-0 items-center justify-between gap-2 text-xs">
                <span className="min-w-0">
                  <StateBadge state={c.state} />
                </span>
                <span className="shrink-0 font-mono tabular-nums text-zinc-600 dark:text-zinc-300">
                  {c.count.toLocaleString("en-US")}
                  <span className="ml-1.5 text-zinc-500 dark:text-zinc-400">{Math.round((c.count / total) * 100)}%</span>
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </Panel>
  );
}
