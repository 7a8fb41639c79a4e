// The events around the replay position: those up to it (the latest first at the bottom),
// the one at it highlighted, and those after it muted. Each is a link to its position, rendered
// when clicked (AppLink: prefetched, every event in view was a render of the replay at it).
import { AppLink } from "@/components/app-link";
import type { TimelineEntry } from "@/server/events/timeline";
import { Panel } from "../panel";

const TYPE_TONE: Array<[RegExp, string]> = [
  [/Failed|Rejected|Cancel/, "text-rose-700 dark:text-rose-400"],
  [/StateChanged|Finalized|Forked|Created/, "text-sky-700 dark:text-sky-400"],
  [/Confirmed|Operator|SystemReplied/, "text-amber-700 dark:text-amber-400"],
  [/Verdict|TestCommand|TestPlan/, "text-emerald-700 dark:text-emerald-400"],
];

/** Events after the position: one muted colour that still reads at AA (never opacity, which fails contrast). */
const FUTURE_TONE = "text-zinc-500 dark:text-zinc-400";

function typeTone(type: string): string {
  return TYPE_TONE.find(([re]) => re.test(type))?.[1] ?? "text-zinc-600 dark:text-zinc-400";
}

export function EventList({
  past,
  upcoming,
  version,
  head,
  sessionId,
  hrefAt,
}: {
  past: TimelineEntry[];
  upcoming: TimelineEntry[];
  version: number;
  head: number;
  sessionId: string;
  hrefAt: (version: number) => string;
}) {
  const earlier = (past[0]?.version ?? 1) - 1;
  const later = head - (upcoming.at(-1)?.version ?? version);
  const row = (e: TimelineEntry, state: "past" | "current" | "future") => (
    <li key={e.version} data-current-event={state === "current" ? "" : undefined}>
      <AppLink
        href={hrefAt(e.version)}
        scroll={false}
        className={`grid grid-cols-[3rem_minmax(0,1fr)] gap-x-2 px-3 py-1 text-xs ${
          state === "current" ? "bg-sky-500/10 shadow-[inset_2px_0_0_0_var(--color-sky-500)]" : "hover:bg-zinc-50 dark:hover:bg-zinc-800/40"
        } ${state === "future" ? `italic ${FUTURE_TONE}` : ""}`}
      >
        <span
          className={`pt-px text-right font-mono text-xs tabular-nums ${state === "future" ? FUTURE_TONE : "text-zinc-600 dark:text-zinc-400"}`}
        >
          {e.version}
        </span>
        <span className="min-w-0">
          <span className={`font-mono text-xs font-medium ${state === "future" ? FUTURE_TONE : typeTone(e.type)}`}>{e.type}</span>
          {e.streamId !== sessionId ? (
            <span className="ml-1.5 text-xs text-violet-700 dark:text-violet-300" title={`inherited from ${e.streamId}`}>
              inherited
            </span>
          ) : null}
          <span
            className={`block truncate text-xs ${state === "future" ? FUTURE_TONE : "text-zinc-600 dark:text-zinc-400"}`}
            title={e.summary}
          >
            {e.summary}
          </span>
        </span>
      </AppLink>
    </li>
  );
  return (
    <Panel title="Events" meta={`${version} of ${head}`}>
      <ol className="relative max-h-[560px] divide-y divide-zinc-100 overflow-y-auto dark:divide-zinc-800/60" data-testid="replay-events">
        {earlier > 0 ? <li className="px-3 py-1.5 text-center text-xs text-zinc-500 dark:text-zinc-400">{earlier} earlier</li> : null}
        {past.map((e) => row(e, e.version === version ? "current" : "past"))}
        {upcoming.map((e) => row(e, "future"))}
        {later > 0 ? <li className="px-3 py-1.5 text-center text-xs text-zinc-500 dark:text-zinc-400">{later} later</li> : null}
      </ol>
    </Panel>
  );
}
