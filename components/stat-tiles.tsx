// The row of headline numbers at the top of the dashboard.
import type { ReactNode } from "react";

export interface StatTile {
  label: string;
  value: number;
  detail?: ReactNode;
}

export function StatTiles({ tiles }: { tiles: StatTile[] }) {
  return (
    <div className="grid grid-cols-2 overflow-hidden rounded-lg border border-zinc-200 bg-zinc-200 gap-px shadow-sm md:grid-cols-4 dark:border-zinc-800 dark:bg-zinc-800 dark:shadow-none">
      {tiles.map((t) => (
        <div key={t.label} className="bg-white px-4 py-3 dark:bg-zinc-900">
          <div className="text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">{t.label}</div>
          <div className="mt-1 font-mono text-2xl font-semibold tabular-nums text-zinc-900 dark:text-zinc-50">
            {t.value.toLocaleString("en-US")}
          </div>
          {t.detail ? <div className="mt-0.5 truncate text-xs text-zinc-500 dark:text-zinc-400">{t.detail}</div> : null}
        </div>
      ))}
    </div>
  );
}
