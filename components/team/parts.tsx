// Small pieces of the team's settings pages: a refusal line and a time.
import type { ReactNode } from "react";
import { formatTimestamp } from "@/lib/format-time";

export function ErrorLine({ children }: { children: ReactNode }) {
  return (
    <p role="alert" className="text-xs text-rose-700 dark:text-rose-400">
      {children}
    </p>
  );
}

/** A time as UTC (the same on the server and in the browser), or `none`. */
export function When({ at, none }: { at: string | null; none: string }) {
  if (!at) return <span className="text-zinc-500 dark:text-zinc-400">{none}</span>;
  return <time dateTime={at}>{formatTimestamp(new Date(at)).replace(/:\d\d UTC$/, " UTC")}</time>;
}
