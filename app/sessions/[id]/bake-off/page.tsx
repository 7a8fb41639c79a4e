// `/sessions/[id]/bake-off`: a bake-off's contenders side by side, live (docs/bake-off.md,
// "The comparison page"). `id` is the parent session or any of its contenders. The server
// renders the first view through `bakeOffView.comparison`; the client part follows it.
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ComparisonView } from "@/components/bake-off/comparison-view";
import { SessionCrumbs } from "@/components/replay/session-crumbs";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { readPage } from "../../../_lib/page-context";
import { PageShell, ReadFailure } from "../../../_lib/page-shell";

export const dynamic = "force-dynamic";

type Params = Promise<{ id: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Bake-off ${id}` };
}

export default async function BakeOffPage({ params }: { params: Params }) {
  const { id } = await params;
  const path = `/sessions/${encodeURIComponent(id)}/bake-off`;
  const read = await readPage(path, "/sessions/[id]/bake-off", ({ caller }) => caller.bakeOffView.comparison({ sessionId: id }));
  if (!read.ok) {
    if (read.code === "NOT_FOUND" || read.code === "BAD_REQUEST") notFound();
    return (
      <PageShell user={read.user} path={path} wide>
        <ReadFailure failure={read} />
      </PageShell>
    );
  }
  const { user, data } = read;
  return (
    <PageShell user={user} path={path} wide>
      <SessionCrumbs sessionId={data.parentSessionId} title={data.title} view="bake-off">
        <p className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400">
          {data.contenders.length} contenders on the same confirmed task, through the same review and test gates.
        </p>
      </SessionCrumbs>
      <TRPCReactProvider>
        <ComparisonView initial={data} canOperate={hasRole(user.role, "operator")} />
      </TRPCReactProvider>
    </PageShell>
  );
}
