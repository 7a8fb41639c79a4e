// `/sessions/[id]`: one session, live. The server renders the first view (header, status,
// latest entries) for the signed-in user through `live.session`; the client part then
// follows the session over SSE and offers the operator's actions when the user's role
// allows them. Nothing on the way to the first byte or the end of the HTML reads the whole
// history of a long session (docs/scaling.md, "Long sessions").
import type { Metadata } from "next";
import { AppLink } from "@/components/app-link";
import { notFound, redirect } from "next/navigation";
import { cache, Suspense, type ReactNode } from "react";
import { readPage, visitor } from "@/app/_lib/page-context";
import { PageShell, ReadFailure } from "@/app/_lib/page-shell";
import { RuntimeContextPanel } from "@/components/session/runtime-context";
import { SessionView } from "@/components/session/session-view";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import type { CurrentUser } from "@/server/auth/request";
import { FIRST_PAGE_ENTRY_LIMIT } from "@/server/sessions/view/pages";

export const dynamic = "force-dynamic";

type Params = Promise<{ id: string }>;

/** The first view, read once per request for the page and its title. */
const readSession = cache((id: string) =>
  readPage(`/sessions/${id}`, "/sessions/[id]", ({ caller }) => caller.live.session({ sessionId: id, limit: FIRST_PAGE_ENTRY_LIMIT })),
);

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  // The title is the session's only for someone who may read it (nobody signed in: no read).
  const { user } = await visitor().catch(() => ({ user: null }));
  const read = user ? await readSession(id) : null;
  return { title: read?.ok ? read.data.header.title : id };
}

export default async function SessionPage({ params }: { params: Params }) {
  const { id } = await params;
  const read = await readSession(id);
  // A conversation has its own view.
  if (read.ok && read.data.header.workflow === "conversation") redirect(`/conversations/${id}`);
  // An unknown (or malformed) id is the not-found page, with its 404 status.
  if (!read.ok && (read.code === "NOT_FOUND" || read.code === "BAD_REQUEST")) notFound();
  if (!read.ok)
    return (
      <Shell user={read.user} id={id}>
        <ReadFailure failure={read} />
      </Shell>
    );

  return (
    <Shell user={read.user} id={id}>
      <Suspense fallback={null}>
        <IssueLink id={id} />
      </Suspense>
      <TRPCReactProvider>
        <SessionView initial={read.data} canOperate={hasRole(read.user.role, "operator")} me={read.user.name} />
        {/* Operators also see the runtime execution context (agents, shells, brains, FSMs, limits):
            read when opened, since it reads the session's whole history (docs/scaling.md). */}
        {hasRole(read.user.role, "operator") ? <RuntimeContextPanel sessionId={id} /> : null}
      </TRPCReactProvider>
    </Shell>
  );
}

/** The issue the session was started from (docs/intake.md), as a link; nothing for other sessions. */
async function IssueLink({ id }: { id: string }) {
  const issue = await readPage(`/sessions/${id}`, "/sessions/[id]", ({ caller }) => caller.intake.issueOf({ sessionId: id }));
  if (!issue.ok || !issue.data) return null;
  const { provider, repository, issueNumber, issueUrl, trigger } = issue.data;
  return (
    <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="session-issue">
      Started from {provider === "github" ? "GitHub" : "GitLab"} issue{" "}
      <a href={issueUrl} rel="noreferrer" className="font-mono underline">
        {repository}#{issueNumber}
      </a>{" "}
      ({trigger})
    </p>
  );
}

/** A bake-off's parent or contender leads to the comparison page (docs/bake-off.md). */
async function BakeOffLink({ id }: { id: string }) {
  const read = await readPage(`/sessions/${id}`, "/sessions/[id]", ({ caller }) => caller.bakeOffView.of({ sessionId: id }));
  if (!read.ok || !read.data) return null;
  const { parentSessionId, contenderId, contenders } = read.data;
  return (
    <p
      className="rounded-md border border-sky-200 bg-sky-50 px-3 py-2 text-sm dark:border-sky-900 dark:bg-sky-950/40"
      data-testid="bake-off-link"
    >
      {contenderId
        ? `Contender ${contenderId} of a bake-off of ${contenders}. `
        : `This task was forked into a bake-off of ${contenders} contenders. `}
      <AppLink
        href={`/sessions/${encodeURIComponent(parentSessionId)}/bake-off`}
        className="font-medium text-sky-800 underline dark:text-sky-300"
      >
        Compare the contenders side by side
      </AppLink>
    </p>
  );
}

function Shell({ user, id, children }: { user: CurrentUser | null; id: string; children: ReactNode }) {
  return (
    <PageShell user={user} path={`/sessions/${id}`}>
      <nav aria-label="Breadcrumb" className="flex min-w-0 items-center gap-1.5 text-xs text-zinc-500 dark:text-zinc-400">
        <AppLink href="/" className="hover:text-zinc-900 dark:hover:text-zinc-100">
          Dashboard
        </AppLink>
        <span aria-hidden>/</span>
        <span className="truncate font-mono text-zinc-700 dark:text-zinc-300">{id}</span>
      </nav>
      {user ? (
        <Suspense fallback={null}>
          <BakeOffLink id={id} />
        </Suspense>
      ) : null}
      {children}
    </PageShell>
  );
}
