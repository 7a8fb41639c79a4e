// The bordered surface every dashboard section sits on, with a title row.
import type { ReactNode } from "react";

export function Panel({
  title,
  meta,
  children,
  className = "",
}: {
  title: string;
  meta?: ReactNode;
  children: ReactNode;
  className?: string;
}) {
  return (
    <section
      className={`overflow-hidden rounded-lg border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60 dark:shadow-none ${className}`}
    >
      <header className="flex h-10 items-center justify-between gap-3 border-b border-zinc-200 px-4 dark:border-zinc-800">
        <h2 className="text-xs font-semibold tracking-wide text-zinc-500 uppercase dark:text-zinc-400">{title}</h2>
        {meta ? <div className="text-xs text-zinc-500 dark:text-zinc-400">{meta}</div> : null}
      </header>
      {children}
    </section>
  );
}

export function EmptyState({ title, hint }: { title: string; hint: ReactNode }) {
  return (
    <div className="flex flex-col items-center justify-center gap-1.5 px-6 py-12 text-center">
      <p className="text-sm font-medium text-zinc-700 dark:text-zinc-300">{title}</p>
      <p className="max-w-sm text-xs leading-relaxed text-zinc-500 dark:text-zinc-400">{hint}</p>
    </div>
  );
}

export function Kbd({ children }: { children: ReactNode }) {
  return (
    <code className="rounded border border-zinc-200 bg-zinc-50 px-1.5 py-0.5 font-mono text-xs text-zinc-700 dark:border-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
      {children}
    </code>
  );
}
