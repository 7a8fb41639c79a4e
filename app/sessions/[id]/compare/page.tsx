// `/sessions/[id]/compare?with=<other>`: two branches of a fork tree side by side — where
// they diverged, each one's state, verdict and tests, their artifacts and their code
// (`sessions.compare`). Without `with`, the fork tree is where to pick the other one.
import type { Metadata } from "next";
import { notFound, redirect } from "next/navigation";
import { CompareView } from "@/components/compare/compare-view";
import { SessionCrumbs } from "@/components/replay/session-crumbs";
import { readPage } from "../../../_lib/page-context";
import { PageShell, ReadFailure } from "../../../_lib/page-shell";

export const dynamic = "force-dynamic";

type Params = Promise<{ id: string }>;
type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Compare ${id}` };
}

export default async function ComparePage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const { id } = await params;
  const raw = (await searchParams).with;
  const other = Array.isArray(raw) ? raw[0] : raw;
  if (!other) redirect(`/sessions/${encodeURIComponent(id)}/tree`);
  const path = `/sessions/${encodeURIComponent(id)}/compare?with=${encodeURIComponent(other)}`;
  const read = await readPage(path, "/sessions/[id]/compare", ({ caller }) => caller.sessions.compare({ a: id, b: other }));
  if (!read.ok) {
    if (read.code === "NOT_FOUND") notFound();
    return (
      <PageShell user={read.user} path={path} wide>
        <ReadFailure failure={read} />
      </PageShell>
    );
  }
  const { user, data } = read;
  return (
    <PageShell user={user} path={path} wide>
      <SessionCrumbs sessionId={id} title={data.a.title} view="compare">
        <p className="mt-0.5 text-xs text-zinc-500 dark:text-zinc-400">
          Two branches side by side: their shared history, then what each did on its own.
        </p>
      </SessionCrumbs>
      <CompareView comparison={data} names={data.names} />
    </PageShell>
  );
}
