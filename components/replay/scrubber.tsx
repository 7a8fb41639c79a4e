"use client";
// The replay scrubber: a range over the session's event positions with its landmarks
// (state changes, confirm, iterations, the end) marked on the track, buttons, and the
// keyboard: ← / → one event, Shift+← / Shift+→ (or [ / ]) the previous / next landmark,
// Home / End the first / latest event. The position lives in the URL (`?at=`), so every
// view is shareable; the page re-renders on the server for each position, never re-running
// anything. Rapid key presses move the thumb at once and navigate once they pause.
import { usePathname, useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState, useTransition } from "react";
import { stateTone } from "@/lib/state-tone";
import { isSingleCharacterKey, singleKeyShortcutsOn } from "../keyboard-shortcuts";
import { TONE_FILL } from "../tone-classes";

export interface ScrubberMark {
  version: number;
  type: string;
  label: string;
}

const NAVIGATE_AFTER_MS = 140;

export function ReplayScrubber({
  version,
  head,
  marks,
  forkVersion,
}: {
  version: number;
  head: number;
  marks: ScrubberMark[];
  forkVersion: number | null;
}) {
  const router = useRouter();
  const pathname = usePathname();
  const [position, setPosition] = useState(version);
  const [pending, startTransition] = useTransition();
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const latest = useRef(version);

  // The server answered for a new position (or someone navigated): follow it, and keep
  // the event at the position in view in the event list.
  useEffect(() => {
    setPosition(version);
    latest.current = version;
    const list = document.querySelector<HTMLElement>("[data-testid=replay-events]");
    const current = list?.querySelector<HTMLElement>("[data-current-event]");
    if (list && current) {
      // Scroll the list only, never the page.
      const top = current.offsetTop; // the list is the offset parent (position: relative)
      if (top < list.scrollTop || top + current.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 2 + current.offsetHeight / 2);
      }
    }
  }, [version]);

  const go = useCallback(
    (target: number, immediate = false) => {
      const next = Math.max(1, Math.min(head, Math.round(target)));
      latest.current = next;
      setPosition(next);
      if (timer.current) clearTimeout(timer.current);
      const navigate = () => startTransition(() => router.replace(`${pathname}?at=${next}`, { scroll: false }));
      if (immediate) navigate();
      else timer.current = setTimeout(navigate, NAVIGATE_AFTER_MS);
    },
    [head, pathname, router],
  );

  // A link followed in this tab while a move of the thumb waits to navigate (an event of the
  // list, a round): the link's position is where the person goes, so the waiting move is
  // dropped — else it would land after the link's page and take the person back. A link opened
  // elsewhere (a modifier, another button, another target) leaves the move to go on.
  useEffect(() => {
    const onClick = (e: MouseEvent) => {
      if (!timer.current || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const link = e.target instanceof Element ? e.target.closest("a[href]") : null;
      if (link && !link.getAttribute("target")) {
        clearTimeout(timer.current);
        timer.current = null;
      }
    };
    document.addEventListener("click", onClick, true);
    return () => {
      document.removeEventListener("click", onClick, true);
      if (timer.current) clearTimeout(timer.current);
    };
  }, []);

  const landmarks = marks.filter((m) => m.type !== "SessionCreated");
  const prevMark = (from: number) => [...landmarks].reverse().find((m) => m.version < from)?.version ?? 1;
  const nextMark = (from: number) => landmarks.find((m) => m.version > from)?.version ?? head;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      const target = e.target as HTMLElement | null;
      const isRange = target instanceof HTMLInputElement && target.type === "range";
      if (!isRange && target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
      if (isSingleCharacterKey(e) && !singleKeyShortcutsOn()) return;
      const at = latest.current;
      let next: number | null = null;
      if (e.key === "ArrowLeft") next = e.shiftKey ? prevMark(at) : at - 1;
      else if (e.key === "ArrowRight") next = e.shiftKey ? nextMark(at) : at + 1;
      else if (e.key === "[") next = prevMark(at);
      else if (e.key === "]") next = nextMark(at);
      else if (e.key === "Home") next = 1;
      else if (e.key === "End") next = head;
      if (next === null) return;
      e.preventDefault();
      go(next);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  });

  const percent = (v: number) => (head <= 1 ? 0 : ((v - 1) / (head - 1)) * 100);
  const button =
    "inline-flex h-7 min-w-7 items-center justify-center gap-1 rounded-md px-2 text-xs text-zinc-600 ring-1 ring-inset ring-zinc-200 hover:bg-zinc-50 hover:text-zinc-900 disabled:opacity-40 dark:text-zinc-300 dark:ring-zinc-700 dark:hover:bg-zinc-800 dark:hover:text-zinc-100";

  return (
    <div className="space-y-3 px-4 py-3" data-testid="replay-scrubber">
      <div className="flex flex-wrap items-center gap-2">
        <button type="button" className={button} onClick={() => go(1, true)} disabled={position <= 1} title="First event (Home)">
          ⇤
        </button>
        <button
          type="button"
          className={button}
          onClick={() => go(prevMark(position), true)}
          disabled={position <= 1}
          title="Previous landmark (Shift+←)"
        >
          ⟪
        </button>
        <button type="button" className={button} onClick={() => go(position - 1, true)} disabled={position <= 1} title="Previous event (←)">
          ←
        </button>
        <div className="min-w-36 px-1 text-center font-mono text-xs tabular-nums">
          <span className="text-zinc-500 dark:text-zinc-400">event </span>
          <span className="text-sm font-semibold text-zinc-900 dark:text-zinc-100" data-testid="replay-position">
            {position}
          </span>
          <span className="text-zinc-500 dark:text-zinc-400"> / {head}</span>
        </div>
        <button type="button" className={button} onClick={() => go(position + 1, true)} disabled={position >= head} title="Next event (→)">
          →
        </button>
        <button
          type="button"
          className={button}
          onClick={() => go(nextMark(position), true)}
          disabled={position >= head}
          title="Next landmark (Shift+→)"
        >
          ⟫
        </button>
        <button type="button" className={button} onClick={() => go(head, true)} disabled={position >= head} title="Latest event (End)">
          ⇥
        </button>
        <span
          className={`ml-1 size-3 rounded-full border-2 border-sky-500 border-t-transparent ${pending || position !== version ? "animate-spin" : "invisible"}`}
          aria-hidden
        />
        <span className="ml-auto hidden items-center gap-1.5 text-xs text-zinc-500 md:flex dark:text-zinc-400">
          <Key>←</Key>
          <Key>→</Key> step · <Key>⇧</Key>+<Key>←</Key>
          <Key>→</Key> landmark · <Key>Home</Key>
          <Key>End</Key>
        </span>
      </div>
      <div className="relative pt-1 pb-5">
        {forkVersion !== null && head > 1 ? (
          <div
            className="absolute top-1 left-0 h-1.5 rounded-full bg-violet-400/30"
            style={{ width: `${percent(forkVersion)}%` }}
            title={`events 1–${forkVersion} are inherited from the parent session`}
          />
        ) : null}
        <input
          type="range"
          min={1}
          max={Math.max(1, head)}
          step={1}
          value={position}
          aria-label="Event position"
          aria-valuetext={`event ${position} of ${head}`}
          onChange={(e) => go(Number(e.currentTarget.value))}
          className="relative block h-1.5 w-full cursor-pointer accent-sky-600"
        />
        {/* Each landmark says what it is on hover and goes there on a click or a tap (the
            keyboard has ⇧+←/→ for the same); the strip itself lets clicks through to the slider. */}
        <div className="pointer-events-none absolute inset-x-0 top-4 h-4">
          {landmarks.map((m) => (
            <button
              key={`${m.version}-${m.type}`}
              type="button"
              tabIndex={-1}
              data-testid="replay-landmark"
              className="pointer-events-auto absolute top-0 flex h-4 w-3 -translate-x-1/2 cursor-pointer justify-center"
              style={{ left: `${percent(m.version)}%` }}
              title={`${m.version}: ${m.label}`}
              aria-label={`go to event ${m.version}: ${m.label}`}
              onClick={() => go(m.version)}
            >
              <span className={`h-2.5 w-0.5 rounded-full ${markColor(m)}`} />
            </button>
          ))}
        </div>
      </div>
    </div>
  );
}

function markColor(m: ScrubberMark): string {
  if (m.type === "OperatorConfirmed") return "bg-amber-500";
  if (m.type === "IterationStarted") return "bg-zinc-400";
  if (m.type === "SessionForked") return "bg-violet-500";
  return TONE_FILL[stateTone(m.label)];
}

function Key({ children }: { children: string }) {
  return <kbd className="rounded border border-zinc-200 px-1 font-mono text-xs dark:border-zinc-700">{children}</kbd>;
}
