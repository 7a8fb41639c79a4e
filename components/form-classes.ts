// The classes of a form's inputs and labels, shared by the dashboard's forms.
export const FIELD_CLASS =
  "w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm text-zinc-900 shadow-sm outline-none focus:border-sky-600 focus:ring-2 focus:ring-sky-600 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-100";
export const LABEL_CLASS = "mb-1 block text-xs font-semibold tracking-wide text-zinc-700 uppercase dark:text-zinc-300";
