// `/usage` (docs/delivery.md, "Usage and cost"): the tokens agents reported and their cost, per project and per day over
// the last days (URL parameters `days` and `project`, shareable), priced with settings.json's
// table. Every signed-in person may read it.
import type { Metadata } from "next";
import { Panel } from "@/components/panel";
import { cachedLine, formatCost, formatTokens, type UsageFiguresView } from "@/lib/usage";
import { readPage } from "../_lib/page-context";
import { PageShell, ReadFailure } from "../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Usage" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

const PERIODS = [1, 7, 30, 90] as const;

interface UsageRow {
  key: string;
  name: string;
  u: UsageFiguresView;
}

function UsageTable({ label, rows, currency }: { label: string; rows: UsageRow[]; currency: string }) {
  return (
    // Scrolls sideways on a narrow screen: focusable, so a keyboard can scroll it too.
    <div className="overflow-x-auto" tabIndex={0} role="region" aria-label={`Usage by ${label.toLowerCase()}`}>
      <table className="w-full min-w-[38rem] text-left text-xs tabular-nums">
        <thead className="text-xs tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
          <tr>
            <th className="px-4 py-1.5 font-medium">{label}</th>
            <th className="px-4 py-1.5 text-right font-medium">Calls</th>
            <th className="px-4 py-1.5 text-right font-medium">Tokens in</th>
            <th className="px-4 py-1.5 text-right font-medium">Cached in</th>
            <th className="px-4 py-1.5 text-right font-medium">Tokens out</th>
            <th className="px-4 py-1.5 text-right font-medium">Cost</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 text-zinc-800 dark:divide-zinc-800 dark:text-zinc-200">
          {rows.map(({ key, name, u }) => (
            <tr key={key} data-testid="usage-row">
              <td className="px-4 py-1.5">{name}</td>
              <td className="px-4 py-1.5 text-right">{u.calls}</td>
              <td className="px-4 py-1.5 text-right">{formatTokens(u.inputTokens)}</td>
              <td className="px-4 py-1.5 text-right" data-testid="usage-cached">
                {formatTokens(u.cachedInputTokens)}
                {u.cacheCreationInputTokens ? (
                  <span className="block text-zinc-600 dark:text-zinc-400">+ {formatTokens(u.cacheCreationInputTokens)} written</span>
                ) : null}
              </td>
              <td className="px-4 py-1.5 text-right">{formatTokens(u.outputTokens)}</td>
              <td className="px-4 py-1.5 text-right" data-testid="usage-cost">
                {formatCost(u.cost, currency)}
                {u.unpriced.length ? <span className="text-zinc-600 dark:text-zinc-400"> + unpriced</span> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default async function UsagePage({ searchParams }: { searchParams: SearchParams }) {
  const params = await searchParams;
  const asked = Number(typeof params.days === "string" ? params.days : "");
  const days = (PERIODS as readonly number[]).includes(asked) ? asked : 30;
  const projectId = typeof params.project === "string" && params.project ? params.project : undefined;
  const read = await readPage("/usage", "/usage", async ({ caller }) => ({
    report: await caller.usage.report({ days, ...(projectId ? { projectId } : {}) }),
    projects: await caller.projects.list(),
  }));
  if (!read.ok)
    return (
      <PageShell user={read.user} path="/usage">
        <ReadFailure failure={read} />
      </PageShell>
    );
  const { user, data } = read;
  const { report } = data;
  const link = (next: { days: number; project?: string }) => {
    const q = new URLSearchParams({ days: String(next.days) });
    if (next.project) q.set("project", next.project);
    return `/usage?${q}`;
  };
  const chip = (active: boolean) =>
    `rounded-md px-2 py-1 text-xs ${active ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"}`;
  const unpriced = report.total.unpriced;
  return (
    <PageShell user={user} path="/usage">
      <div className="mx-auto max-w-4xl space-y-4">
        <div>
          <h1 className="text-lg font-semibold text-zinc-900 dark:text-zinc-100">Usage</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Tokens the agents reported since {report.since} (UTC), and what they cost with the prices in settings.json. Cached input (read
            from a provider&apos;s prompt cache, or written to it) is part of the input, priced at the cache rates. Which agent does best on
            a project: the{" "}
            <a
              href={`/usage/agents${projectId ? `?project=${encodeURIComponent(projectId)}` : ""}`}
              className="text-sky-700 underline dark:text-sky-400"
            >
              agent record
            </a>
            .
          </p>
        </div>
        <nav aria-label="Usage filters" className="flex flex-wrap items-center gap-1">
          {PERIODS.map((d) => (
            <a
              key={d}
              href={link({ days: d, project: projectId })}
              className={chip(days === d)}
              aria-current={days === d ? "true" : undefined}
            >
              {d === 1 ? "Today" : `${d} days`}
            </a>
          ))}
          <span className="mx-2 h-4 w-px bg-zinc-200 dark:bg-zinc-700" />
          <a href={link({ days })} className={chip(!projectId)} aria-current={!projectId ? "true" : undefined}>
            All projects
          </a>
          {data.projects.map((p) => (
            <a
              key={p.id}
              href={link({ days, project: p.id })}
              className={chip(projectId === p.id)}
              aria-current={projectId === p.id ? "true" : undefined}
            >
              {p.name}
            </a>
          ))}
        </nav>
        <Panel title="In all" meta={<span className="tabular-nums">{formatCost(report.total.cost, report.currency)}</span>}>
          <dl className="grid grid-cols-2 gap-x-4 gap-y-1.5 px-4 py-3 text-xs sm:grid-cols-5" data-testid="usage-total">
            {[
              ["Calls", String(report.total.calls)],
              ["Tokens in", formatTokens(report.total.inputTokens)],
              ["Cached in", cachedLine(report.total) || "0"],
              ["Tokens out", formatTokens(report.total.outputTokens)],
              ["Cost", formatCost(report.total.cost, report.currency)],
            ].map(([label, value]) => (
              <div key={label}>
                <dt className="text-zinc-600 dark:text-zinc-400">{label}</dt>
                <dd className="font-medium text-zinc-900 tabular-nums dark:text-zinc-100">{value}</dd>
              </div>
            ))}
          </dl>
          {unpriced.length ? (
            <p className="px-4 pb-3 text-xs text-zinc-600 dark:text-zinc-400" data-testid="usage-unpriced">
              No price for {unpriced.join(", ")}: their tokens are counted, their cost is not. Add them to{" "}
              <span className="font-mono">pricing.models</span> in settings.json.
            </p>
          ) : null}
        </Panel>
        {report.total.calls === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">No agent reported usage in this period.</p>
        ) : (
          <>
            <Panel title="Per project">
              <UsageTable
                label="Project"
                currency={report.currency}
                rows={report.byProject.map((p) => ({
                  key: p.projectId ?? "-",
                  name: p.projectName ?? p.projectId ?? "(no project)",
                  u: p,
                }))}
              />
            </Panel>
            <Panel title="Per day">
              <UsageTable
                label="Day (UTC)"
                currency={report.currency}
                rows={report.byDay.map((d) => ({ key: d.day, name: d.day, u: d }))}
              />
            </Panel>
          </>
        )}
      </div>
    </PageShell>
  );
}
