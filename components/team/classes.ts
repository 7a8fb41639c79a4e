// The buttons and table cells of the team's settings pages (users, invitations, tokens).
export const BUTTON_CLASS =
  "shrink-0 rounded-md px-3 py-1.5 text-xs font-medium text-zinc-700 ring-1 ring-zinc-300 ring-inset hover:bg-zinc-50 disabled:opacity-60 dark:text-zinc-200 dark:ring-zinc-700 dark:hover:bg-zinc-800/60";
export const PRIMARY_BUTTON_CLASS =
  "shrink-0 rounded-md bg-zinc-900 px-3 py-2 text-sm font-medium text-white shadow-sm hover:bg-zinc-800 disabled:opacity-60 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-white";
export const DANGER_BUTTON_CLASS =
  "shrink-0 rounded-md px-3 py-1.5 text-xs font-medium text-rose-700 ring-1 ring-rose-300 ring-inset hover:bg-rose-50 disabled:opacity-60 dark:text-rose-300 dark:ring-rose-900 dark:hover:bg-rose-950/40";
export const TH_CLASS = "px-3 py-2 font-medium first:pl-4 last:pr-4";
export const TD_CLASS = "px-3 py-2 align-top first:pl-4 last:pr-4";
export const THEAD_ROW_CLASS =
  "border-b border-zinc-200 text-xs tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400";
export const TBODY_CLASS = "divide-y divide-zinc-100 dark:divide-zinc-800/70";
export const MUTED_CLASS = "text-xs text-zinc-500 dark:text-zinc-400";
