// `/sessions/[id]`: one session, live. The server renders the first view (header, status,
// latest entries) for the signed-in user; the client part then follows the session over
// SSE and offers the operator's actions when the user's role allows them.
import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import type { ReactNode } from "react";
import { PageShell } from "@/app/_lib/page-shell";
import { DatabaseDown } from "@/components/database-down";
import { EmptyState, Panel } from "@/components/panel";
import { SessionView } from "@/components/session/session-view";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { currentUser } from "@/server/api/web";
import type { CurrentUser } from "@/server/auth/request";
import { SIGN_IN_PATH } from "@/server/auth/options";
import { getPrisma } from "@/server/db/prisma";
import { getWebPool } from "@/server/db/web-pool";
import { isAppError } from "@/server/errors";
import { createAppEventStore } from "@/server/app-store";
import { describeDbError } from "@/server/health";
import { logger } from "@/server/log";
import { loadSessionView, type SessionView as View } from "@/server/session-view/load";

export const dynamic = "force-dynamic";

type Params = Promise<{ id: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  // The title is the session's only for someone who may read it.
  const title = await currentUser()
    .then((user) => (user ? getPrisma().session.findUnique({ where: { id }, select: { title: true } }) : null))
    .catch(() => null);
  return { title: title?.title ?? id };
}

export default async function SessionPage({ params }: { params: Params }) {
  const { id } = await params;
  const path = `/sessions/${id}`;
  let user: CurrentUser | null = null;
  let view: View | null = null;
  try {
    user = await currentUser();
    if (user) {
      const pool = getWebPool();
      view = await loadSessionView({ pool, prisma: getPrisma(), store: createAppEventStore(pool) }, id).catch((err: unknown) => {
        if (isAppError(err, "NOT_FOUND")) return null;
        throw err;
      });
    }
  } catch (err) {
    logger.error({ err, route: "/sessions/[id]", sessionId: id }, "session view: database read failed");
    return (
      <Shell user={user} id={id}>
        <DatabaseDown message={describeDbError(err)} />
      </Shell>
    );
  }
  if (!user) redirect(`${SIGN_IN_PATH}?callbackUrl=${encodeURIComponent(path)}`);

  return (
    <Shell user={user} id={id}>
      {view ? (
        <TRPCReactProvider>
          <SessionView initial={view} canOperate={hasRole(user.role, "operator")} me={user.name} />
        </TRPCReactProvider>
      ) : (
        <Panel title="Session">
          <EmptyState
            title={`No session ${id}`}
            hint={
              <>
                It may have been mistyped. The{" "}
                <Link className="underline" href="/">
                  dashboard
                </Link>{" "}
                lists every session.
              </>
            }
          />
        </Panel>
      )}
    </Shell>
  );
}

function Shell({ user, id, children }: { user: CurrentUser | null; id: string; children: ReactNode }) {
  return (
    <PageShell user={user} active="sessions">
      <nav aria-label="Breadcrumb" className="flex min-w-0 items-center gap-1.5 text-xs text-zinc-500 dark:text-zinc-400">
        <Link href="/" className="hover:text-zinc-900 dark:hover:text-zinc-100">
          Dashboard
        </Link>
        <span aria-hidden>/</span>
        <span className="truncate font-mono text-zinc-700 dark:text-zinc-300">{id}</span>
      </nav>
      {children}
    </PageShell>
  );
}
