// Layout of the pages used before anyone is signed in (/signin, /setup): one centred card
// under the product mark, in the dashboard's visual language.
import type { ReactNode } from "react";
import { APP_VERSION } from "@/server/version";

export default function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <main className="relative flex min-h-screen flex-col items-center justify-center px-4 py-12">
      <div
        aria-hidden
        className="pointer-events-none absolute inset-0 bg-[radial-gradient(circle_at_50%_0%,rgba(24,24,27,0.06),transparent_60%)] dark:bg-[radial-gradient(circle_at_50%_0%,rgba(244,244,245,0.06),transparent_60%)]"
      />
      <div className="relative w-full max-w-[400px]">
        <div className="mb-6 flex flex-col items-center gap-3 text-center">
          <CatMark />
          <div>
            <p className="text-sm font-semibold tracking-tight text-zinc-900 dark:text-zinc-100">Cat Cafe</p>
            <p className="text-xs text-zinc-500 dark:text-zinc-400">AI coding agents, under human control</p>
          </div>
        </div>
        {children}
        <p className="mt-6 text-center font-mono text-xs text-zinc-500 dark:text-zinc-400">self-hosted · v{APP_VERSION}</p>
      </div>
    </main>
  );
}

function CatMark() {
  return (
    <svg viewBox="0 0 24 24" className="size-10 drop-shadow-sm" aria-hidden>
      <rect width="24" height="24" rx="6" className="fill-zinc-900 dark:fill-zinc-100" />
      <path d="M6.5 17.5V8l3 2.5h5L17.5 8v9.5a1.5 1.5 0 0 1-1.5 1.5H8a1.5 1.5 0 0 1-1.5-1.5Z" className="fill-white dark:fill-zinc-900" />
      <circle cx="10" cy="14" r="1" className="fill-zinc-900 dark:fill-zinc-100" />
      <circle cx="14" cy="14" r="1" className="fill-zinc-900 dark:fill-zinc-100" />
    </svg>
  );
}
