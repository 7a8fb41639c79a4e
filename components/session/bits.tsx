"use client";
// Small presentational pieces the session view's cards share: a tag, a card frame with
// a kind label, and text that stays short until asked.
import { useState, type ReactNode } from "react";

type TagTone = "zinc" | "sky" | "amber" | "emerald" | "rose" | "violet";

const TAG_TONES: Record<TagTone, string> = {
  zinc: "bg-zinc-500/10 text-zinc-600 ring-zinc-500/20 dark:text-zinc-400 dark:ring-zinc-400/20",
  sky: "bg-sky-500/10 text-sky-700 ring-sky-600/20 dark:text-sky-300 dark:ring-sky-400/25",
  amber: "bg-amber-500/10 text-amber-800 ring-amber-600/25 dark:text-amber-300 dark:ring-amber-400/30",
  emerald: "bg-emerald-500/10 text-emerald-700 ring-emerald-600/20 dark:text-emerald-300 dark:ring-emerald-400/25",
  rose: "bg-rose-500/10 text-rose-700 ring-rose-600/20 dark:text-rose-300 dark:ring-rose-400/30",
  violet: "bg-violet-500/10 text-violet-700 ring-violet-600/20 dark:text-violet-300 dark:ring-violet-400/25",
};

export function Tag({ tone = "zinc", children, title }: { tone?: TagTone; children: ReactNode; title?: string }) {
  return (
    <span
      title={title}
      className={`inline-flex shrink-0 items-center rounded px-1.5 py-px font-mono text-xs font-medium tracking-wide uppercase ring-1 ring-inset ${TAG_TONES[tone]}`}
    >
      {children}
    </span>
  );
}

const CARD_ACCENTS = {
  zinc: "border-zinc-200 dark:border-zinc-800",
  emerald: "border-emerald-300/80 dark:border-emerald-800/80",
  amber: "border-amber-300/80 dark:border-amber-800/80",
  rose: "border-rose-300/80 dark:border-rose-900/80",
  sky: "border-sky-200 dark:border-sky-900/70",
} as const;

/** A bordered card with a header row: kind label, title, and anything on the right. */
export function Card({
  accent = "zinc",
  kind,
  title,
  right,
  children,
  testId,
}: {
  accent?: keyof typeof CARD_ACCENTS;
  kind: ReactNode;
  title?: ReactNode;
  right?: ReactNode;
  children?: ReactNode;
  testId?: string;
}) {
  return (
    <div data-testid={testId} className={`overflow-hidden rounded-md border bg-white dark:bg-zinc-900/70 ${CARD_ACCENTS[accent]}`}>
      <div className="flex min-h-8 flex-wrap items-center gap-x-2 gap-y-1 border-b border-inherit px-3 py-1.5">
        {kind}
        {title ? <div className="min-w-0 text-xs font-medium text-zinc-800 dark:text-zinc-200">{title}</div> : null}
        {right ? <div className="ml-auto flex items-center gap-2 text-xs text-zinc-500 dark:text-zinc-400">{right}</div> : null}
      </div>
      {children ? <div className="space-y-2 px-3 py-2">{children}</div> : null}
    </div>
  );
}

const CLAMP_CHARS = 700;
const CLAMP_LINES = 10;

/** Prose that shows its first lines, with "Show more" when it is long. */
export function ClampedText({ text, className = "" }: { text: string; className?: string }) {
  const long = text.length > CLAMP_CHARS || text.split("\n").length > CLAMP_LINES;
  const [open, setOpen] = useState(false);
  const shown = !long || open ? text : `${text.split("\n").slice(0, CLAMP_LINES).join("\n").slice(0, CLAMP_CHARS).trimEnd()}…`;
  return (
    <div className={className}>
      <p className="break-words whitespace-pre-wrap">{shown}</p>
      {long ? (
        <button
          type="button"
          onClick={() => setOpen(!open)}
          className="mt-1 text-xs font-medium text-zinc-500 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100"
        >
          {open ? "Show less" : "Show more"}
        </button>
      ) : null}
    </div>
  );
}
