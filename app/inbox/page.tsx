// `/inbox`: the sessions that need a person — waiting for a confirm, escalated at the loop
// limit, failed — that nobody has acknowledged yet; live, filterable by project and "mine"
// (URL parameters, shareable). Operators acknowledge; viewers read. Below, the issues a
// project's intake held rather than started (docs/intake.md), for an operator to start or dismiss.
import type { Metadata } from "next";
import { InboxList } from "@/components/inbox";
import { IntakeHeldList } from "@/components/intake-held";
import { Panel } from "@/components/panel";
import { hasRole } from "@/lib/roles";
import { readPage } from "../_lib/page-context";
import { PageShell, ReadFailure } from "../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Inbox" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function InboxPage({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const projectId = typeof params.project === "string" && params.project ? params.project : undefined;
  const mine = params.mine === "1";
  const filters = { ...(projectId ? { projectId } : {}), ...(mine ? { mine: true } : {}) };
  const read = await readPage("/inbox", "/inbox", async ({ caller }) => ({
    inbox: await caller.inbox.list(filters),
    projects: await caller.projects.list(),
    held: await caller.intake.held(projectId ? { projectId } : {}),
  }));
  if (!read.ok)
    return (
      <PageShell user={read.user} path="/inbox">
        <ReadFailure failure={read} />
      </PageShell>
    );
  const { user, data } = read;
  const link = (next: { project?: string; mine?: boolean }) => {
    const q = new URLSearchParams();
    if (next.project) q.set("project", next.project);
    if (next.mine) q.set("mine", "1");
    return `/inbox${q.size ? `?${q}` : ""}`;
  };
  const chip = (active: boolean) =>
    `rounded-md px-2 py-1 text-xs ${active ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"}`;
  return (
    <PageShell user={user} path="/inbox">
      <div className="mx-auto max-w-4xl space-y-4">
        <div>
          <h1 className="text-lg font-semibold text-zinc-900 dark:text-zinc-100">Inbox</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Sessions that need a person: waiting for a confirm, escalated at the loop limit, or failed. Acknowledge one to take it off the
            list; it comes back when it needs someone again.
          </p>
        </div>
        <nav aria-label="Inbox filters" className="flex flex-wrap items-center gap-1">
          <a href={link({ mine })} className={chip(!projectId)} aria-current={!projectId ? "true" : undefined}>
            All projects
          </a>
          {data.projects.map((p) => (
            <a
              key={p.id}
              href={link({ project: p.id, mine })}
              className={chip(projectId === p.id)}
              aria-current={projectId === p.id ? "true" : undefined}
            >
              {p.name}
            </a>
          ))}
          <span className="mx-2 h-4 w-px bg-zinc-200 dark:bg-zinc-700" />
          <a href={link({ project: projectId, mine: !mine })} className={chip(mine)} aria-current={mine ? "true" : undefined}>
            Mine
          </a>
        </nav>
        <Panel title="Needs a person">
          <InboxList initial={data.inbox} filters={filters} canAcknowledge={hasRole(user.role, "operator")} />
        </Panel>
        <Panel title="Issues not started" meta={<span className="normal-case">{data.held.length} held · docs/intake.md</span>}>
          <IntakeHeldList items={data.held} canAct={hasRole(user.role, "operator")} />
        </Panel>
      </div>
    </PageShell>
  );
}
