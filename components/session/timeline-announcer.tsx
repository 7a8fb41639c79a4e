"use client";
// What a screen reader hears of the timeline as it grows: a polite live region that says
// what was newly recorded, at most once every few seconds, and only for entries a reader
// sees (no step bookkeeping, no streamed chunks; state changes are the header's to say).
// Entries already there when the page opened, and older ones loaded on demand, stay silent.
import { useEffect, useRef, useState } from "react";
import type { SessionEntry } from "@/server/sessions/view/entries";
import { isBookkeeping } from "./timeline";

/** The least time between two announcements. */
export const ANNOUNCE_EVERY_MS = 5_000;

function announceable(entry: SessionEntry): boolean {
  return !isBookkeeping(entry) && entry.detail.kind !== "state_changed";
}

/** One sentence for the entries recorded since the last announcement; null when none is worth saying. */
export function describeNewEntries(entries: SessionEntry[], afterVersion: number): string | null {
  const fresh = entries.filter((e) => e.version > afterVersion && announceable(e));
  const last = fresh.at(-1);
  if (!last) return null;
  return fresh.length === 1 ? `New in the timeline: ${last.summary}` : `${fresh.length} new in the timeline; the latest: ${last.summary}`;
}

export function TimelineAnnouncer({ entries }: { entries: SessionEntry[] }) {
  const latest = entries.at(-1)?.version ?? 0;
  // What was announced (or there at first paint) up to; the time of the last announcement.
  const said = useRef(latest);
  const saidAt = useRef(0);
  const current = useRef(entries);
  const [text, setText] = useState("");

  useEffect(() => {
    current.current = entries;
  }, [entries]);

  useEffect(() => {
    if (latest <= said.current) return;
    const announce = () => {
      const all = current.current;
      const sentence = describeNewEntries(all, said.current);
      said.current = all.at(-1)?.version ?? said.current;
      if (!sentence) return;
      saidAt.current = Date.now();
      setText(sentence);
    };
    const wait = saidAt.current + ANNOUNCE_EVERY_MS - Date.now();
    if (wait <= 0) {
      announce();
      return;
    }
    const timer = setTimeout(announce, wait);
    return () => clearTimeout(timer);
  }, [latest]);

  return (
    <div
      role="log"
      aria-live="polite"
      aria-atomic="true"

      className="sr-only"
      data-testid="timeline-announcer"
    >
      {text}
    </div>
  );
}
