// The top bar: product name, version, where you are (lib/nav.ts decides which item the
// page is), the health of what the page depends on, and who is signed in (with sign-out).
// Below `lg` the navigation, health and account fold into a Menu (components/header-menu.tsx).
import { currentNavHref, NAV_ITEMS } from "@/lib/nav";
import { HeaderMenu } from "./header-menu";
import { LiveDot } from "./live-dot";
import { InboxCount } from "./inbox";
import { SignOutButton } from "./sign-out-button";

export interface HeaderUser {
  name: string;
  email: string;
  role: string;
}

/**
 * `path` is the page's pathname; `liveRunners` is null when it could not be read; `user` is
 * null on pages shown signed out.
 */
export function AppHeader({
  version,
  dbOk,
  liveRunners,
  user = null,
  path,
  inboxCount = null,
}: {
  version: string;
  dbOk: boolean;
  liveRunners: number | null;
  user?: HeaderUser | null;
  path: string;
  /** Sessions that need a person (null: not read, e.g. signed out); kept live in the browser. */
  inboxCount?: number | null;
}) {
  const current = currentNavHref(path);
  const runners =
    liveRunners === null
      ? { ok: false, label: "runners unknown" }
      : { ok: liveRunners > 0, label: `${liveRunners} runner${liveRunners === 1 ? "" : "s"} live` };
  return (
    <header className="sticky top-0 z-20 border-b border-zinc-200 bg-white/85 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/85">
      <div className="relative mx-auto flex h-12 max-w-[1400px] items-center gap-3 px-4 lg:gap-4 lg:px-5">
        <a href="/" className="flex shrink-0 items-center gap-2.5">
          <CatMark />
          <span className="text-sm font-semibold tracking-tight text-zinc-900 dark:text-zinc-100">Cat Cafe</span>
          <span className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-xs text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300">
            v{version}
          </span>
        </a>
        {/* Narrow screens: the health as dots beside the menu (the words are in the menu). */}
        <span className="ml-auto flex items-center gap-2 lg:hidden" aria-hidden>
          <Dot ok={dbOk} title={dbOk ? "database ok" : "database down"} />
          <Dot ok={runners.ok} warn title={runners.label} />
        </span>
        <HeaderMenu>
          <nav className="flex flex-col gap-1 text-sm lg:ml-4 lg:flex-row lg:items-center lg:text-xs" aria-label="Main">
            {NAV_ITEMS.map((item) => (
              <a
                key={item.href}
                href={item.href}
                className={`rounded-md px-2.5 py-2 lg:py-1 ${
                  item.href === current
                    ? "bg-zinc-100 font-medium text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100"
                    : "text-zinc-600 hover:bg-zinc-100 hover:text-zinc-900 dark:text-zinc-300 dark:hover:bg-zinc-800/70 dark:hover:text-zinc-100"
                }`}
                aria-current={item.href === current ? "page" : undefined}
              >
                {item.label}
                {item.href === "/inbox" && inboxCount !== null ? <InboxCount initial={inboxCount} /> : null}
              </a>
            ))}
          </nav>
          <div className="flex flex-wrap items-center gap-x-4 gap-y-2 border-t border-zinc-200 pt-3 text-xs text-zinc-600 lg:ml-auto lg:flex-nowrap lg:border-0 lg:pt-0 dark:border-zinc-800 dark:text-zinc-300">
            <Status ok={dbOk} label={dbOk ? "database ok" : "database down"} />
            <Status ok={runners.ok} warn label={runners.label} />
            <a href="/api/health" className="font-mono hover:text-zinc-900 lg:hidden xl:inline dark:hover:text-zinc-100">
              /api/health
            </a>
            {user ? <UserChip user={user} /> : null}
          </div>
        </HeaderMenu>
      </div>
    </header>
  );
}

function Dot({ ok, warn = false, title }: { ok: boolean; warn?: boolean; title: string }) {
  return (
    <span title={title} className={`inline-flex size-2 rounded-full ${ok ? "bg-emerald-500" : warn ? "bg-amber-500" : "bg-rose-500"}`} />
  );
}

function UserChip({ user }: { user: HeaderUser }) {
  const initials =
    user.name
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 2)
      .map((w) => w[0]!.toUpperCase())
      .join("") || user.email.slice(0, 1).toUpperCase();
  return (
    <div className="flex items-center gap-2 lg:border-l lg:border-zinc-200 lg:pl-4 dark:lg:border-zinc-800" data-testid="signed-in-user">
      <span
        className="flex size-6 items-center justify-center rounded-full bg-zinc-900 text-xs font-semibold text-white dark:bg-zinc-100 dark:text-zinc-900"
        aria-hidden
      >
        {initials}
      </span>
      <span className="flex flex-col leading-tight">
        <span className="max-w-40 truncate font-medium text-zinc-800 dark:text-zinc-200" title={user.email}>
          {user.name}
        </span>
        <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{user.role}</span>
      </span>
      <SignOutButton />
    </div>
  );
}

function Status({ ok, warn = false, label }: { ok: boolean; warn?: boolean; label: string }) {
  const color = ok ? "bg-emerald-500" : warn ? "bg-amber-500" : "bg-rose-500";
  return (
    <span className="flex items-center gap-1.5">
      <LiveDot color={color} ping={ok} />
      {label}
    </span>
  );
}

function CatMark() {
  return (
    <svg viewBox="0 0 24 24" className="size-6" aria-hidden>
      <rect width="24" height="24" rx="6" className="fill-zinc-900 dark:fill-zinc-100" />
      <path d="M6.5 17.5V8l3 2.5h5L17.5 8v9.5a1.5 1.5 0 0 1-1.5 1.5H8a1.5 1.5 0 0 1-1.5-1.5Z" className="fill-white dark:fill-zinc-900" />
      <circle cx="10" cy="14" r="1" className="fill-zinc-900 dark:fill-zinc-100" />
      <circle cx="14" cy="14" r="1" className="fill-zinc-900 dark:fill-zinc-100" />
    </svg>
  );
}
