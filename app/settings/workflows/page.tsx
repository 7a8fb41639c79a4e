// `/settings/workflows`: every workflow definition (built in, and each repository's
// `.catcafe/runtimes.json`) and execution FSM, drawn as a state diagram, with what each
// state runs. Definitions are checked statically before they are listed (req M9).
import type { Metadata } from "next";
import { Panel } from "@/components/panel";
import { NeedsRole, SettingsFrame } from "@/components/settings/settings-frame";
import { WorkflowDiagram } from "@/components/settings/workflow-diagram";
import type { WorkflowGraph } from "@/server/config/graph";
import { readPage } from "../../_lib/page-context";
import { PageShell, ReadFailure } from "../../_lib/page-shell";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Workflows · Settings" };

export default async function WorkflowsSettingsPage() {
  const path = "/settings/workflows";
  const read = await readPage(path, path, ({ caller }) => caller.settings.workflows());
  // A role that may not read the section sees why (FORBIDDEN), inside the settings frame.
  if (!read.ok && read.code !== "FORBIDDEN")
    return (
      <PageShell user={read.user} path={path} wide>
        <ReadFailure failure={read} />
      </PageShell>
    );
  const data = read.ok ? read.data : null;
  const forbidden = !read.ok;
  return (
    <PageShell user={read.user} path={path} wide>
      <SettingsFrame
        active="workflows"
        title="Workflows"
        description="Finite state machines as data: what each state runs, which output or command moves it on, and where loops start a new iteration. Definitions are checked (unknown or unreachable states, no terminal state, triggers that can never fire) before they can run."
      >
        {forbidden ? <NeedsRole role="viewer" what="Workflow definitions" /> : null}
        {data?.problems.map((p) => (
          <div
            key={p.projectId}
            className="rounded-lg border border-rose-300 bg-rose-50 p-3 text-xs text-rose-800 dark:border-rose-900/60 dark:bg-rose-950/30 dark:text-rose-300"
          >
            <p className="font-medium">
              Project <span className="font-mono">{p.projectId}</span>: its .catcafe/ configuration does not load, so its workflows are not
              listed.
            </p>
            <ul className="mt-1 space-y-0.5 font-mono text-xs">
              {p.errors.map((e, i) => (
                <li key={i}>{e}</li>
              ))}
            </ul>
          </div>
        ))}
        <Legend />
        {data?.workflows.map((g) => (
          <GraphPanel key={`${g.source}-${g.id}`} graph={g} />
        ))}
        {data?.fsms.length ? (
          <>
            <h3 className="pt-2 text-sm font-semibold tracking-tight">Execution FSMs</h3>
            <p className="-mt-3 text-xs text-zinc-500 dark:text-zinc-400">
              The life of one agent run (shell + brain), bound to agents in .catcafe/agents.json.
            </p>
            {data.fsms.map((g) => (
              <GraphPanel key={`${g.source}-${g.id}`} graph={g} />
            ))}
          </>
        ) : null}
      </SettingsFrame>
    </PageShell>
  );
}

function GraphPanel({ graph: g }: { graph: WorkflowGraph }) {
  const steps = g.nodes.filter((n) => n.kind === "step");
  const terminals = g.nodes.filter((n) => n.kind === "terminal");
  return (
    <Panel
      title={g.id}
      meta={
        <span className="flex items-center gap-2 normal-case">
          {g.version !== null ? <span className="font-mono">v{g.version}</span> : null}
          <span
            className={`rounded px-1.5 py-px font-mono text-xs ${g.source === "builtin" ? "bg-zinc-100 text-zinc-600 dark:bg-zinc-800 dark:text-zinc-300" : "bg-violet-500/10 text-violet-700 dark:text-violet-300"}`}
          >
            {g.source === "builtin" ? "built in" : `${g.source} · .catcafe/runtimes.json`}
          </span>
        </span>
      }
    >
      <div className="flex flex-wrap items-baseline gap-x-6 gap-y-1 border-b border-zinc-200 px-4 py-2 text-xs dark:border-zinc-800">
        <span className="font-medium text-zinc-800 dark:text-zinc-200">{g.title}</span>
        {g.modes.length ? (
          <span className="text-zinc-500 dark:text-zinc-400">
            modes <span className="font-mono text-zinc-700 dark:text-zinc-300">{g.modes.join(", ")}</span>
          </span>
        ) : null}
        <span className="text-zinc-500 dark:text-zinc-400">
          {g.nodes.length} states · {steps.length} agent steps · {terminals.length} outcomes · {g.edges.length} transitions
        </span>
        {g.maxIterations !== null ? (
          <span className="text-zinc-500 dark:text-zinc-400">
            iteration cap <span className="font-mono text-zinc-700 dark:text-zinc-300">{g.maxIterations}</span> (projects may override)
          </span>
        ) : null}
        {g.problems.length === 0 ? <span className="ml-auto text-emerald-700 dark:text-emerald-400">✓ checks pass</span> : null}
      </div>
      {g.problems.length ? (
        <ul className="border-b border-zinc-200 bg-rose-50 px-4 py-2 font-mono text-xs text-rose-800 dark:border-zinc-800 dark:bg-rose-950/30 dark:text-rose-300">
          {g.problems.map((p, i) => (
            <li key={i}>{p}</li>
          ))}
        </ul>
      ) : null}
      <div className="bg-[radial-gradient(circle,_var(--color-zinc-200)_1px,_transparent_1px)] bg-[length:16px_16px] dark:bg-[radial-gradient(circle,_var(--color-zinc-800)_1px,_transparent_1px)]">
        <WorkflowDiagram graph={g} />
      </div>
      {steps.length ? (
        <details className="border-t border-zinc-200 dark:border-zinc-800">
          <summary className="cursor-pointer px-4 py-2 text-xs text-zinc-500 select-none hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100">
            What each state runs
          </summary>
          <table className="w-full text-left text-xs">
            <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
              {g.nodes.map((n) => (
                <tr key={n.id} className="align-top">
                  <td className="w-56 px-4 py-1.5 font-mono font-medium">{n.id}</td>
                  <td className="w-48 px-3 py-1.5 font-mono text-xs text-zinc-600 dark:text-zinc-300">
                    {n.kind === "step" ? `${n.role} → ${n.output} (${n.phase})` : n.kind === "terminal" ? `outcome ${n.outcome}` : n.kind}
                  </td>
                  <td className="px-4 py-1.5 text-zinc-600 dark:text-zinc-400">{n.description ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
    </Panel>
  );
}

function Legend() {
  const swatch = (cls: string, label: string) => (
    <span className="flex items-center gap-1.5">
      <span className={`h-3 w-5 rounded border ${cls}`} aria-hidden />
      {label}
    </span>
  );
  const line = (color: string, dashed: boolean, label: string) => (
    <span className="flex items-center gap-1.5">
      <svg width="26" height="8" aria-hidden>
        <line x1="0" y1="4" x2="26" y2="4" stroke={color} strokeWidth="1.6" strokeDasharray={dashed ? "4 3" : undefined} />
      </svg>
      {label}
    </span>
  );
  return (
    <div className="flex flex-wrap items-center gap-x-5 gap-y-1.5 rounded-lg border border-zinc-200 bg-white px-4 py-2 text-xs text-zinc-600 shadow-sm dark:border-zinc-800 dark:bg-zinc-900/60 dark:text-zinc-400">
      {swatch("border-amber-300 bg-amber-50 dark:border-amber-700/70 dark:bg-amber-950/40", "waits for a command")}
      {swatch("border-sky-300 bg-sky-50 dark:border-sky-700/70 dark:bg-sky-950/50", "agent or command step")}
      {swatch("border-emerald-300 bg-emerald-50 dark:border-emerald-700/70 dark:bg-emerald-950/40", "success outcome")}
      {swatch("border-rose-300 bg-rose-50 dark:border-rose-700/70 dark:bg-rose-950/40", "failure outcome")}
      {line("#a1a1aa", false, "transition [guard]")}
      {line("#f59e0b", true, "↻ new iteration (counts to the cap)")}
      {line("#f43f5e", true, "global: cancel, step_failed")}
    </div>
  );
}
