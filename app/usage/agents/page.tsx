// `/usage/agents` (docs/bake-off.md, "The agent record: how it is computed"): the project's
// agent record — per coder agent and model, tasks, approval rate, median iterations to
// approval, median wall time, median cost per approved task, bake-offs and how often chosen —
// over a period (URL parameters `project` and `since`, shareable), with its JSON to download.
// Every signed-in person may read it.
import type { Metadata } from "next";
import { Panel } from "@/components/panel";
import { formatAge } from "@/lib/format-time";
import { instantOf } from "@/lib/time-window";
import { formatCost } from "@/lib/usage";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Agent record" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

const PERIODS = [
  { id: "7d", label: "7 days" },
  { id: "30d", label: "30 days" },
  { id: "90d", label: "90 days" },
  { id: "all", label: "All time" },
] as const;

const percent = (n: number | null) => (n === null ? "–" : `${Math.round(n * 100)}%`);
const num = (n: number | null) => (n === null ? "–" : Number.isInteger(n) ? String(n) : n.toFixed(1));

export default async function AgentRecordPage({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const asked = typeof params.since === "string" ? params.since : "30d";
  const period = PERIODS.find((p) => p.id === asked)?.id ?? "30d";
  const since = period === "all" ? undefined : instantOf(period, new Date());
  const wanted = typeof params.project === "string" && params.project ? params.project : undefined;
  const path = `/usage/agents`;
  const read = await readPage(path, path, async ({ caller }) => {
    const projects = await caller.projects.list();
    const projectId = wanted ?? projects[0]?.id;
    return { projects, record: projectId ? await caller.agentRecord.stats({ projectId, ...(since ? { since } : {}) }) : null };
  });
  if (!read.ok)
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const { user, data } = read;
  const { record } = data;
  const link = (next: { since: string; project?: string }) => {
    const q = new URLSearchParams({ since: next.since });
    if (next.project) q.set("project", next.project);
    return `/usage/agents?${q}`;
  };
  const chip = (active: boolean) =>
    `rounded-md px-2 py-1 text-xs ${active ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"}`;
  const json = record
    ? `/api/projects/${encodeURIComponent(record.projectId)}/agent-record${record.since ? `?since=${encodeURIComponent(record.since)}` : ""}`
    : null;
  return (
    <PageShell user={user} path={path}>
      <div className="mx-auto max-w-5xl space-y-4">
        <div>
          <nav aria-label="Breadcrumb" className="text-xs text-zinc-600 dark:text-zinc-400">
            <a href="/usage" className="hover:text-zinc-900 dark:hover:text-zinc-100">
              Usage
            </a>{" "}
            / Agent record
          </nav>
          <h1 className="text-lg font-semibold text-zinc-900 dark:text-zinc-100">Agent record</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            How each coder agent and model did on this project&apos;s tasks and bake-offs, computed from the sessions&apos; events
            {record?.since ? ` since ${record.since.slice(0, 10)}` : ""}.
          </p>
        </div>
        <nav aria-label="Agent record filters" className="flex flex-wrap items-center gap-1">
          {PERIODS.map((p) => (
            <a
              key={p.id}
              href={link({ since: p.id, project: record?.projectId })}
              className={chip(period === p.id)}
              aria-current={period === p.id ? "true" : undefined}
            >
              {p.label}
            </a>
          ))}
          <span className="mx-2 h-4 w-px bg-zinc-200 dark:bg-zinc-700" />
          {data.projects.map((p) => (
            <a
              key={p.id}
              href={link({ since: period, project: p.id })}
              className={chip(record?.projectId === p.id)}
              aria-current={record?.projectId === p.id ? "true" : undefined}
            >
              {p.name}
            </a>
          ))}
        </nav>
        {!record ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">No project yet: register one in Settings → Projects.</p>
        ) : (
          <Panel
            title="Per agent and model"
            meta={
              <span className="flex items-center gap-2 whitespace-nowrap">
                <span data-testid="agent-record-counts">
                  {record.sessions} session{record.sessions === 1 ? "" : "s"} · {record.bakeOffs} bake-off{record.bakeOffs === 1 ? "" : "s"}
                </span>
                {json ? (
                  <a href={json} className="text-sky-700 underline dark:text-sky-400" data-testid="agent-record-json">
                    JSON
                  </a>
                ) : null}
              </span>
            }
          >
            {record.agents.length === 0 ? (
              <p className="px-4 py-6 text-sm text-zinc-600 dark:text-zinc-400">No coder ran a task in this period.</p>
            ) : (
              // Scrolls sideways on a phone: focusable, so a keyboard can scroll it too.
              <div className="overflow-x-auto" tabIndex={0} role="region" aria-label="Agent record per agent and model">
                <table className="w-full min-w-[48rem] text-left text-xs tabular-nums" data-testid="agent-record">
                  <thead className="text-xs tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
                    <tr>
                      <th className="px-4 py-1.5 font-medium">Agent</th>
                      <th className="px-4 py-1.5 font-medium">Model</th>
                      <th className="px-4 py-1.5 text-right font-medium">Tasks</th>
                      <th className="px-4 py-1.5 text-right font-medium">Approved</th>
                      <th className="px-4 py-1.5 text-right font-medium">Median iterations</th>
                      <th className="px-4 py-1.5 text-right font-medium">Median wall time</th>
                      <th className="px-4 py-1.5 text-right font-medium">Median cost / approved</th>
                      <th className="px-4 py-1.5 text-right font-medium">Bake-offs</th>
                      <th className="px-4 py-1.5 text-right font-medium">Chosen</th>
                    </tr>
                  </thead>
                  <tbody className="divide-y divide-zinc-100 text-zinc-800 dark:divide-zinc-800 dark:text-zinc-200">
                    {record.agents.map((a) => (
                      <tr
                        key={`${a.agentId}/${a.model ?? ""}`}
                        data-testid="agent-record-row"
                        data-agent={a.agentId}
                        data-model={a.model ?? ""}
                      >
                        <td className="px-4 py-1.5 font-medium whitespace-nowrap">{a.agentId}</td>
                        <td className="px-4 py-1.5 whitespace-nowrap">{a.model ?? "unknown"}</td>
                        <td className="px-4 py-1.5 text-right">{a.tasks}</td>
                        <td className="px-4 py-1.5 text-right" title={`${a.approved} of ${a.finished} finished`}>
                          {percent(a.approvalRate)}{" "}
                          <span className="text-zinc-600 dark:text-zinc-400">
                            ({a.approved}/{a.finished})
                          </span>
                        </td>
                        <td className="px-4 py-1.5 text-right">{num(a.medianIterationsToApproval)}</td>
                        <td className="px-4 py-1.5 text-right">{a.medianWallMs === null ? "–" : formatAge(a.medianWallMs)}</td>
                        <td className="px-4 py-1.5 text-right">
                          {a.medianCostPerApprovedTask === null ? "–" : formatCost(a.medianCostPerApprovedTask, record.currency)}
                          {a.medianCostPerApprovedTask !== null && a.unpriced.length ? (
                            <span className="text-zinc-600 dark:text-zinc-400"> + unpriced</span>
                          ) : null}
                        </td>
                        <td className="px-4 py-1.5 text-right">{a.bakeOffs}</td>
                        <td className="px-4 py-1.5 text-right">{a.chosen}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Panel>
        )}
      </div>
    </PageShell>
  );
}
