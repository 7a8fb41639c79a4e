// `/settings/agents`: per project, the agent playing each role — from the admin's project
// record and from the repository's `.catcafe/agents.json` — with its kind, whether it is
// simulated, its model, shell and brain, and its manifest (capabilities, allowed files).
import type { Metadata } from "next";
import { EmptyState, Panel } from "@/components/panel";
import { Chips, YesNo } from "@/components/settings/argv";
import { NeedsRole, SettingsFrame } from "@/components/settings/settings-frame";
import type { AgentOverview } from "@/server/projects/overview";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Agents · Settings" };

const ROLE_ORDER = ["planner", "coder", "executor", "reviewer", "tester"];

export default async function AgentsSettingsPage() {
  const path = "/settings/agents";
  const read = await readPage(path, path, ({ caller }) => caller.settings.projects());
  // A role that may not read the section sees why (FORBIDDEN), inside the settings frame.
  if (!read.ok && read.code !== "FORBIDDEN")
    return (
      <PageShell user={read.user} path={path}>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const projects = read.ok ? read.data : null;
  const forbidden = !read.ok;
  return (
    <PageShell user={read.user} path={path}>
      <SettingsFrame
        active="agents"
        title="Agents"
        description={
          <>
            Who plays each role of a workflow. A .catcafe/ agent takes the role over the project record&apos;s one (highest priority first).
            How each coder did on a project&apos;s tasks and bake-offs:{" "}
            <a href="/usage/agents" className="text-sky-700 underline dark:text-sky-400">
              the agent record
            </a>
            .
          </>
        }
      >
        {forbidden ? <NeedsRole role="operator" what="Agent configuration" /> : null}
        {projects?.map((p) => (
          <Panel
            key={p.id}
            title={p.id}
            meta={
              <>
                {`${p.agents.length} agent${p.agents.length === 1 ? "" : "s"} · `}
                <a href={`/usage/agents?project=${encodeURIComponent(p.id)}`} className="text-sky-700 underline dark:text-sky-400">
                  record
                </a>
              </>
            }
          >
            {p.agents.length === 0 ? (
              <EmptyState title="No agents" hint="This project has no agent for any role yet." />
            ) : (
              <AgentsTable agents={p.agents} />
            )}
          </Panel>
        ))}
      </SettingsFrame>
    </PageShell>
  );
}

function AgentsTable({ agents }: { agents: AgentOverview[] }) {
  const sorted = [...agents].sort(
    (a, b) =>
      ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role) || a.source.localeCompare(b.source) || (b.priority ?? 0) - (a.priority ?? 0),
  );
  return (
    <div className="overflow-x-auto">
      <table className="w-full min-w-[760px] text-left text-xs">
        <thead>
          <tr className="border-b border-zinc-200 text-xs tracking-wide text-zinc-500 uppercase dark:border-zinc-800 dark:text-zinc-400">
            <th className="px-4 py-2 font-medium">Role</th>
            <th className="px-3 py-2 font-medium">Agent</th>
            <th className="px-3 py-2 font-medium">Kind</th>
            <th className="px-3 py-2 font-medium">Simulated</th>
            <th className="px-3 py-2 font-medium">Shell · brain</th>
            <th className="px-3 py-2 font-medium">Manifest</th>
            <th className="px-4 py-2 font-medium">Source</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
          {sorted.map((a) => (
            <tr key={`${a.source}-${a.role}-${a.id}`} className="align-top">
              <td className="px-4 py-2 font-medium capitalize">{a.role}</td>
              <td className="px-3 py-2">
                <div className="font-mono text-zinc-900 dark:text-zinc-100">{a.id}</div>
                {a.name ? <div className="text-xs text-zinc-500 dark:text-zinc-400">{a.name}</div> : null}
                {a.invalid ? <div className="text-xs text-rose-700">invalid: {a.invalid}</div> : null}
              </td>
              <td className="px-3 py-2">
                <span className="font-mono">{a.kind}</span>
                {a.model ? <div className="font-mono text-xs text-zinc-500 dark:text-zinc-400">{a.model}</div> : null}
              </td>
              <td className="px-3 py-2">
                <YesNo value={a.simulated} yes="simulated" no="real" />
              </td>
              <td className="px-3 py-2 font-mono text-xs text-zinc-600 dark:text-zinc-300">
                {a.shell ?? "—"} · {a.brain ?? "—"}
                {a.priority !== null ? <div className="text-zinc-500 dark:text-zinc-400">priority {a.priority}</div> : null}
                {a.fsm ? <div className="text-zinc-500 dark:text-zinc-400">fsm {a.fsm}</div> : null}
              </td>
              <td className="px-3 py-2">
                {a.manifest ? (
                  <div className="space-y-1">
                    <Chips items={a.manifest.capabilities} empty="no capabilities listed" />
                    <div className="font-mono text-xs text-zinc-500 dark:text-zinc-400">
                      files: {a.manifest.allowedFiles ? a.manifest.allowedFiles.join(", ") : "any"}
                      {a.manifest.outputFormat ? ` · output ${a.manifest.outputFormat}` : ""}
                    </div>
                  </div>
                ) : (
                  <span className="text-zinc-500 dark:text-zinc-400">none (no file restriction)</span>
                )}
              </td>
              <td className="px-4 py-2">
                <span
                  className={`rounded px-1.5 py-px font-mono text-xs ${a.source === "config" ? "bg-violet-500/10 text-violet-700 dark:text-violet-300" : "bg-zinc-100 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300"}`}
                >
                  {a.source === "config" ? ".catcafe/agents.json" : "project record"}
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
