// `/sessions/[id]/tree`: the session's fork lineage — its root ancestor and every
// descendant (reruns; later modify and revert forks) — from `lineage.tree`.
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Panel } from "@/components/panel";
import { SessionCrumbs } from "@/components/replay/session-crumbs";
import { ForkPoints } from "@/components/tree/fork-points";
import { ForkTree } from "@/components/tree/fork-tree";
import { readPage } from "../../../_lib/page-context";
import { PageShell, ReadFailure } from "../../../_lib/page-shell";

export const dynamic = "force-dynamic";

type Params = Promise<{ id: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Fork tree ${id}` };
}

export default async function ForkTreePage({ params }: { params: Params }) {
  const { id } = await params;
  const path = `/sessions/${encodeURIComponent(id)}/tree`;
  const read = await readPage(path, "/sessions/[id]/tree", ({ caller }) => caller.lineage.tree({ sessionId: id }));
  if (!read.ok) {
    if (read.code === "NOT_FOUND" || read.code === "BAD_REQUEST") notFound();
    return (
      <PageShell user={read.user} path={path} wide>
        <ReadFailure failure={read} />
      </PageShell>
    );
  }
  const { user, data: tree } = read;
  const now = new Date(tree.asOf);
  const focus = tree.nodes.find((n) => n.id === tree.focusId);
  const forks = tree.nodes.length - 1;
  const depth = Math.max(...tree.nodes.map((n) => n.depth));
  const reasons = tree.nodes.reduce<Record<string, number>>(
    (acc, n) => (n.forkReason ? { ...acc, [n.forkReason]: (acc[n.forkReason] ?? 0) + 1 } : acc),
    {},
  );
  return (
    <PageShell user={user} path={path} wide>
      <SessionCrumbs sessionId={id} title={focus?.title ?? id} view="tree">
        <p className="mt-0.5 text-xs text-zinc-500 dark:text-zinc-400">
          Every fork inherits its parent&apos;s events up to the fork point without copying them; the parent is never changed.
        </p>
      </SessionCrumbs>
      <Panel
        title="Lineage"
        meta={
          <span className="tabular-nums" data-testid="fork-tree-summary">
            {tree.nodes.length} session{tree.nodes.length === 1 ? "" : "s"} · {forks} fork{forks === 1 ? "" : "s"}
            {Object.keys(reasons).length
              ? ` (${Object.entries(reasons)
                  .map(([r, n]) => `${n} ${r}`)
                  .join(", ")})`
              : ""}{" "}
            · depth {depth}
            {tree.truncated ? " · truncated" : ""}
          </span>
        }
      >
        <ForkTree tree={tree} now={now} starters={tree.names} />
        <ForkPoints nodes={tree.nodes} now={now} />
        {forks === 0 ? (
          <p className="border-t border-zinc-200 px-5 py-3 text-xs text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
            No forks yet. Use <strong className="font-medium text-zinc-800 dark:text-zinc-200">Rerun</strong> on the{" "}
            <a className="text-sky-700 underline dark:text-sky-300" href={`/sessions/${id}`}>
              session&apos;s page
            </a>
            , fork it at any event from its{" "}
            <a className="text-sky-700 underline dark:text-sky-300" href={`/sessions/${id}/replay`}>
              replay
            </a>
            , or describe a change there once it has finished: each fork appears here.
          </p>
        ) : null}
      </Panel>
    </PageShell>
  );
}
