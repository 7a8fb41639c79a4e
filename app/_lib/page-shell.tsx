// The frame every signed-in page shares: the header (navigation, health, the visitor) and
// the main column. Health is read here, so each page shows whether the database and the
// runners are up without asking for it; `ReadFailure` is what a page shows in the frame
// when its read (app/_lib/page-context.ts) failed. A "Skip to content" link comes first, so
// a keyboard or screen-reader user need not pass the navigation on every page. Operators and
// admins also see, on every page, which live runners run agents without the sandbox.
import type { ReactNode } from "react";
import { AppHeader } from "@/components/app-header";
import { DatabaseDown } from "@/components/database-down";
import { Panel } from "@/components/panel";
import { SandboxWarning, type UnsandboxedRunner } from "@/components/sandbox-warning";
import { hasRole } from "@/lib/roles";
import type { CurrentUser } from "@/server/auth/request";
import { getWebPool } from "@/server/db/web-pool";
import { logger } from "@/server/log";
import { countLiveRunners, listRunners } from "@/server/runner/liveness";
import { countInbox } from "@/server/sessions/inbox";
import { APP_VERSION } from "@/server/version";
import type { PageRead } from "./page-context";

export async function PageShell({
  user,
  path,
  wide = false,
  liveRunners: known,
  children,
}: {
  user: CurrentUser | null;
  /** The page's pathname: the header marks the navigation item it is. */
  path: string;
  wide?: boolean;
  /** The live runners, when the page has just counted them (no second read). */
  liveRunners?: number;
  children: ReactNode;
}) {
  let liveRunners: number | null = known ?? null;
  let dbOk = true;
  let inboxCount: number | null = null;
  if (known === undefined) {
    try {
      liveRunners = await countLiveRunners(getWebPool());
    } catch (err) {
      dbOk = false;
      logger.warn({ err }, "page header: could not count live runners");
    }
  }
  if (user && dbOk) {
    try {
      inboxCount = await countInbox(getWebPool());
    } catch (err) {
      logger.warn({ err }, "page header: could not count the inbox");
    }
  }
  const unsandboxed = user && dbOk && hasRole(user.role, "operator") ? await unsandboxedRunners() : [];
  return (
    <>
      <a
        href="#main"
        data-testid="skip-link"
        className="sr-only rounded-md bg-zinc-900 px-3 py-2 text-sm font-medium text-white focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50 dark:bg-zinc-100 dark:text-zinc-900"
      >
        Skip to content
      </a>
      <AppHeader
        version={APP_VERSION}
        dbOk={dbOk}
        liveRunners={liveRunners}
        user={user ? { name: user.name, email: user.email, role: user.role } : null}
        path={path}
        inboxCount={inboxCount}
      />
      <main id="main" tabIndex={-1} className={`mx-auto space-y-4 px-5 py-5 outline-none ${wide ? "max-w-[1600px]" : "max-w-[1400px]"}`}>
        <SandboxWarning runners={unsandboxed} />
        {children}
      </main>
    </>
  );
}

/** Live runners whose agents run outside the sandbox (docs/operations.md, "The sandbox"). */
async function unsandboxedRunners(): Promise<UnsandboxedRunner[]> {
  try {
    const { runners } = await listRunners(getWebPool(), { liveOnly: true });
    return runners.flatMap((r) => (r.sandbox && !r.sandbox.on ? [{ id: r.id, host: r.host, reason: r.sandbox.reason }] : []));
  } catch (err) {
    logger.warn({ err }, "page shell: could not read the runners' sandbox state");
    return [];
  }
}

/** A failed page read: the database is down, or the procedure refused (its message). */
export function ReadFailure({ failure }: { failure: Extract<PageRead<unknown>, { ok: false }> }) {
  if (failure.code === null) return <DatabaseDown message={failure.message} />;
  return (
    <Panel title="Not shown">
      <p className="p-4 text-sm text-zinc-600 dark:text-zinc-300" data-testid="read-refused">
        {failure.message}
      </p>
    </Panel>
  );
}
