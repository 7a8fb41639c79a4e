"use client";
// Moving through a long timeline: the page opens at its latest entries (a session with
// earlier pages is scrolled to the end once), "Load older" above the first entry reads the
// page before it from the server, and "Jump to latest" shows while the end is out of view.
import { useEffect, useMemo, useRef, useState, type RefObject } from "react";

export function LoadOlder({
  earlier,
  sessionId,
  loading,
  error,
  onLoad,
}: {
  earlier: number;
  sessionId: string;
  loading: boolean;
  error: string | null;
  onLoad: () => void;
}) {
  if (earlier <= 0) return null;
  return (
    <div
      data-testid="load-older"
      className="flex flex-wrap items-center gap-x-3 gap-y-1 border-b border-zinc-100 px-4 py-1.5 text-xs text-zinc-600 dark:border-zinc-800 dark:text-zinc-300"
    >
      <button
        type="button"
        data-testid="load-older-button"
        onClick={onLoad}
        disabled={loading}
        className="rounded-md border border-zinc-300 bg-white px-2.5 py-1 font-medium text-zinc-800 hover:bg-zinc-50 disabled:opacity-50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-200 dark:hover:bg-zinc-800"
      >
        {loading ? "Loading…" : "Load older"}
      </button>
      <span>
        {earlier} earlier event{earlier === 1 ? "" : "s"};{" "}
        <a className="underline" href={`/sessions/${sessionId}/replay`}>
          Replay
        </a>{" "}
        has the whole history.
      </span>
      {error ? (
        <span role="alert" className="text-rose-700 dark:text-rose-300">
          Could not load them: {error}
        </span>
      ) : null}
    </div>
  );
}

/**
 * Whether arriving entries are followed to `end` (the page's bottom, say): the reader is there —
 * `end` in view or at most `slackPx` below it, kept by an IntersectionObserver, so that a new
 * entry can ask without laying the page out (the observer answers for the frames drawn before
 * it: where the reader was) — or the page is still on its way there: a follow began (`followed`)
 * and the reader has not moved up since. An entry that arrives while the page still scrolls to
 * the one before (a burst of tall ones) is then followed too, although the end is out of view
 * for that moment. Only the reader's own move up (the scroll position going back) ends that.
 */
export function useFollowEnd(end: RefObject<HTMLElement | null>, slackPx = 160): { follows: () => boolean; followed: () => void } {
  const at = useRef(false);
  const underWay = useRef(false);
  useEffect(() => {
    const el = end.current;
    if (!el) return;
    const observer = new IntersectionObserver(([e]) => void (at.current = !!e?.isIntersecting), { rootMargin: `0px 0px ${slackPx}px 0px` });
    observer.observe(el);
    return () => observer.disconnect();
  }, [end, slackPx]);
  useEffect(() => {
    let lastY = window.scrollY;
    const onScroll = () => {
      if (window.scrollY < lastY) underWay.current = false;
      lastY = window.scrollY;
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => window.removeEventListener("scroll", onScroll);
  }, []);
  return useMemo(() => ({ follows: () => at.current || underWay.current, followed: () => void (underWay.current = true) }), []);
}

/** Scrolls to `end` once at first paint when the session is long; true while `end` is out of view. */
export function useTimelineEnd(end: RefObject<HTMLElement | null>, openAtLatest: boolean): boolean {
  const [away, setAway] = useState(false);
  const opened = useRef(false);
  useEffect(() => {
    const el = end.current;
    if (!el) return;
    if (openAtLatest && !opened.current) el.scrollIntoView({ block: "end" });
    opened.current = true;
    const observer = new IntersectionObserver(([e]) => setAway(!!e && !e.isIntersecting && e.boundingClientRect.top > 0));
    observer.observe(el);
    return () => observer.disconnect();
  }, [end, openAtLatest]);
  return away;
}

export function JumpToLatest({ end }: { end: RefObject<HTMLElement | null> }) {
  return (
    <button
      type="button"
      data-testid="jump-to-latest"
      onClick={() => end.current?.scrollIntoView({ block: "end", behavior: "smooth" })}
      className="fixed bottom-5 left-1/2 z-10 -translate-x-1/2 rounded-full border border-zinc-300 bg-white px-3 py-1.5 text-xs font-medium text-zinc-800 shadow-md hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-200 dark:hover:bg-zinc-800"
    >
      Jump to latest ↓
    </button>
  );
}
