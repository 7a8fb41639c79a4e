// `/sessions/[id]/replay?at=<version>`: the session as it was at an event position — its
// state, the round in progress and its outputs — computed from the events up to there by
// `replay.at` (nothing is re-run). The position is in the URL; the scrubber moves it.
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { hasRole } from "@/lib/roles";
import { TRPCReactProvider } from "@/lib/trpc/client";
import { Panel } from "@/components/panel";
import { EventList } from "@/components/replay/event-list";
import { ForkHere } from "@/components/replay/fork-here";
import { RoundPanel } from "@/components/replay/round-panel";
import { ReplayScrubber } from "@/components/replay/scrubber";
import { SessionCrumbs } from "@/components/replay/session-crumbs";
import { StatePanel } from "@/components/replay/state-panel";
import { readPage } from "../../../_lib/page-context";
import { PageShell, ReadFailure } from "../../../_lib/page-shell";

export const dynamic = "force-dynamic";

type Params = Promise<{ id: string }>;
type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Replay ${id}` };
}

function parsePosition(value: string | string[] | undefined): number | undefined {
  const n = Number(Array.isArray(value) ? value[0] : value);
  return Number.isInteger(n) && n >= 1 ? n : undefined;
}

export default async function ReplayPage({ params, searchParams }: { params: Params; searchParams: SearchParams }) {
  const { id } = await params;
  const at = parsePosition((await searchParams).at);
  const path = `/sessions/${encodeURIComponent(id)}/replay`;
  const read = await readPage(at ? `${path}?at=${at}` : path, "/sessions/[id]/replay", ({ caller }) =>
    caller.replay.at({ sessionId: id, version: at, timelineLimit: 80, ahead: 40 }),
  );
  if (!read.ok) {
    if (read.code === "NOT_FOUND" || read.code === "BAD_REQUEST") notFound();
    return (
      <PageShell user={read.user} path={path} wide>
        <ReadFailure failure={read} />
      </PageShell>
    );
  }
  const { user, data: view } = read;
  const hrefAt = (version: number) => `${path}?at=${version}`;
  return (
    <PageShell user={user} path={path} wide>
      <SessionCrumbs sessionId={id} title={view.state.title} view="replay">
        <p className="mt-0.5 text-xs text-zinc-500 dark:text-zinc-400">
          State, round and outputs as of any event, folded from the log; nothing is re-run.
          {view.fork ? (
            <>
              {" "}
              Events 1–{view.fork.forkVersion} are inherited from{" "}
              <a
                href={`/sessions/${view.fork.parentId}/replay?at=${view.fork.forkVersion}`}
                className="font-mono text-violet-600 hover:underline dark:text-violet-400"
              >
                {view.fork.parentId}
              </a>
              .
            </>
          ) : null}
        </p>
      </SessionCrumbs>
      <Panel title="Position" meta={view.event ? <span className="font-mono">{view.event.type}</span> : undefined}>
        <ReplayScrubber version={view.version} head={view.head} marks={view.marks} forkVersion={view.fork?.forkVersion ?? null} />
        {hasRole(user.role, "operator") ? (
          <div className="border-t border-zinc-100 dark:border-zinc-800">
            <TRPCReactProvider>
              <ForkHere sessionId={id} version={view.version} canModify={view.version === view.head && view.state.status === "finished"} />
            </TRPCReactProvider>
          </div>
        ) : null}
      </Panel>
      <div className="grid grid-cols-1 items-start gap-4 lg:grid-cols-[320px_minmax(0,1fr)] xl:grid-cols-[320px_minmax(0,1fr)_360px]">
        <StatePanel view={view} />
        <RoundPanel view={view} hrefAt={hrefAt} />
        <div className="lg:col-span-2 xl:sticky xl:top-16 xl:col-span-1">
          <EventList past={view.timeline} upcoming={view.upcoming} version={view.version} head={view.head} sessionId={id} hrefAt={hrefAt} />
        </div>
      </div>
    </PageShell>
  );
}
