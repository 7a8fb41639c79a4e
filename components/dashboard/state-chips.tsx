// Counts by state under the current filters, as links that set (or clear) the state filter.
import { stateLabel } from "@/lib/state-labels";
import { stateTone, TONE_ORDER } from "@/lib/state-tone";
import { TONE_FILL } from "../tone-classes";

export function StateChips({
  counts,
  active,
  hrefFor,
}: {
  counts: Array<{ state: string; count: number }>;
  active?: string;
  hrefFor: (state: string | undefined) => string;
}) {
  const total = counts.reduce((n, c) => n + c.count, 0);
  const ordered = [...counts].sort(
    (a, b) => TONE_ORDER.indexOf(stateTone(a.state)) - TONE_ORDER.indexOf(stateTone(b.state)) || b.count - a.count,
  );
  const chip = (selected: boolean) =>
    `inline-flex items-center gap-1.5 rounded-md px-2 py-1 text-xs whitespace-nowrap ring-1 ring-inset transition ${
      selected
        ? "bg-zinc-900 text-white ring-zinc-900 dark:bg-zinc-100 dark:text-zinc-900 dark:ring-zinc-100"
        : "text-zinc-600 ring-zinc-200 hover:bg-zinc-50 hover:text-zinc-900 dark:text-zinc-300 dark:ring-zinc-800 dark:hover:bg-zinc-800/60 dark:hover:text-zinc-100"
    }`;
  return (
    <nav aria-label="Sessions by state" className="flex gap-1.5 overflow-x-auto border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
      <a href={hrefFor(undefined)} className={chip(!active)} aria-current={!active ? "true" : undefined}>
        All
        <span className="font-mono tabular-nums opacity-70">{total.toLocaleString("en-US")}</span>
      </a>
      {ordered.map((c) => (
        <a
          key={c.state}
          href={hrefFor(c.state)}
          className={chip(active === c.state)}
          aria-current={active === c.state ? "true" : undefined}
        >
          <span className={`size-1.5 rounded-full ${TONE_FILL[stateTone(c.state)]}`} aria-hidden />
          <span title={c.state}>{stateLabel(c.state)}</span>
          <span className="font-mono tabular-nums opacity-70">{c.count.toLocaleString("en-US")}</span>
        </a>
      ))}
      {active && !counts.some((c) => c.state === active) ? (
        <span className={chip(true)}>
          <span title={active}>{stateLabel(active)}</span>
          <span className="font-mono tabular-nums opacity-70">0</span>
        </span>
      ) : null}
    </nav>
  );
}
