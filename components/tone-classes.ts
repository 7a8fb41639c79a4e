// Tailwind classes per state tone, spelled out in full so Tailwind's scanner finds them.
import type { StateTone } from "@/lib/state-tone";

export const TONE_BADGE: Record<StateTone, string> = {
  active: "bg-sky-500/10 text-sky-700 ring-sky-600/25 dark:text-sky-300 dark:ring-sky-400/30",
  waiting: "bg-amber-500/10 text-amber-800 ring-amber-600/25 dark:text-amber-300 dark:ring-amber-400/30",
  success: "bg-emerald-500/10 text-emerald-700 ring-emerald-600/25 dark:text-emerald-300 dark:ring-emerald-400/30",
  failure: "bg-rose-500/10 text-rose-700 ring-rose-600/25 dark:text-rose-300 dark:ring-rose-400/30",
  muted: "bg-zinc-500/10 text-zinc-600 ring-zinc-500/25 dark:text-zinc-400 dark:ring-zinc-400/25",
  neutral: "bg-violet-500/10 text-violet-700 ring-violet-600/25 dark:text-violet-300 dark:ring-violet-400/30",
};

export const TONE_FILL: Record<StateTone, string> = {
  active: "bg-sky-500",
  waiting: "bg-amber-500",
  success: "bg-emerald-500",
  failure: "bg-rose-500",
  muted: "bg-zinc-400 dark:bg-zinc-600",
  neutral: "bg-violet-500",
};
