// Keyset paging: links to the newer and older neighbours of the page shown, the page size,
// and the keyboard hint.
import { ShortcutsToggle } from "../keyboard-shortcuts";
import { Kbd } from "../panel";

export function Pager({
  shown,
  matching,
  newerHref,
  olderHref,
  firstHref,
  sizes,
}: {
  shown: number;
  matching: number;
  newerHref: string | null;
  olderHref: string | null;
  firstHref: string | null;
  sizes: Array<{ size: number; href: string; current: boolean }>;
}) {
  const link =
    "rounded-md px-2 py-1 text-zinc-800 ring-1 ring-inset ring-zinc-300 dark:text-zinc-200 hover:bg-zinc-50 hover:text-zinc-900 dark:ring-zinc-800 dark:hover:bg-zinc-800/60 dark:hover:text-zinc-100";
  const off = "rounded-md px-2 py-1 text-zinc-500 ring-1 ring-inset ring-zinc-100 dark:text-zinc-400 dark:ring-zinc-800/60";
  return (
    <footer className="flex flex-wrap items-center gap-3 border-t border-zinc-200 px-4 py-2 text-xs text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
      <span className="tabular-nums">
        {shown.toLocaleString("en-US")} shown of {matching.toLocaleString("en-US")}
      </span>
      <span className="hidden items-center gap-1 md:flex">
        <Kbd>j</Kbd>
        <Kbd>k</Kbd> move · <Kbd>enter</Kbd> open · <Kbd>/</Kbd> search
      </span>
      <ShortcutsToggle />
      <div className="ml-auto flex items-center gap-1.5">
        <span className="mr-1 flex items-center gap-1">
          {sizes.map((s) =>
            s.current ? (
              <span key={s.size} className="rounded px-1.5 py-0.5 font-mono text-zinc-900 dark:text-zinc-100">
                {s.size}
              </span>
            ) : (
              <a key={s.size} href={s.href} className="rounded px-1.5 py-0.5 font-mono hover:text-zinc-900 dark:hover:text-zinc-100">
                {s.size}
              </a>
            ),
          )}
          <span>per page</span>
        </span>
        {firstHref ? (
          <a href={firstHref} className={link}>
            ⇤ Newest
          </a>
        ) : null}
        {newerHref ? (
          <a href={newerHref} className={link} rel="prev">
            ← Newer
          </a>
        ) : (
          <span className={off} aria-disabled="true">
            ← Newer
          </span>
        )}
        {olderHref ? (
          <a href={olderHref} className={link} rel="next" data-testid="older-page">
            Older →
          </a>
        ) : (
          <span className={off} aria-disabled="true">
            Older →
          </span>
        )}
      </div>
    </footer>
  );
}
