// The classes of a form's inputs and labels, shared by the dashboard's forms.
export const FIELD_CLASS =
  "w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm text-zinc-900 shadow-sm outline-none focus:border-sky-600 focus:ring-2 focus:ring-sky-600 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100";
export const LABEL_CLASS = "mb-1 block text-xs font-semibold tracking-wide text-zinc-700 uppercase dark:text-zinc-300";

/** The settings pages' compact fields (a role picker, delivery, Add project): smaller, and marking an invalid value. */
export const SETTINGS_FIELD_CLASS =
  "w-full rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm text-zinc-900 outline-none focus:border-sky-500 focus:ring-2 focus:ring-sky-500 disabled:bg-zinc-50 aria-[invalid=true]:border-rose-500 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100";
export const SETTINGS_LABEL_CLASS = "mb-1 block text-xs font-medium text-zinc-700 dark:text-zinc-300";
/** A settings form's button; the caller adds its colours. */
export const SETTINGS_BUTTON_CLASS =
  "rounded-md px-3 py-1.5 text-sm font-medium shadow-sm disabled:cursor-not-allowed disabled:opacity-60 focus:outline-none focus:ring-2 focus:ring-sky-500";
