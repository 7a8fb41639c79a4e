"use client";
// The runtime execution context of a session (req M6), for operators: the run id and when
// it started, the workflow (and whether it is the repository's own), the configuration it
// came from, the limits in force, its live worktrees (host and path), each role's agent with its shell, brain,
// model and FSM, and each agent step's run through its FSM. Read from the session's events
// when the operator opens it (`tasks.runtimeContext`), not with the page: that read goes
// through the whole history, and a long session's page must not wait for it (docs/scaling.md,
// "Long sessions"). The configuration snapshot never holds a secret (key variables by name only).
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { RouterOutputs } from "@/lib/client";
import { Panel } from "@/components/panel";
import { formatTimestamp } from "@/lib/format-time";
import { useTRPC } from "@/lib/trpc/client";

type Context = NonNullable<RouterOutputs["tasks"]["runtimeContext"]>;

const str = (v: Record<string, unknown> | null | undefined, key: string) => (v && typeof v[key] === "string" ? (v[key] as string) : null);

const ROLE_ORDER = ["planner", "coder", "executor", "reviewer", "tester"];

/** The agents in the order their roles work. */
function byRole<T>(agents: Record<string, T>): Array<[string, T]> {
  const rank = (role: string) => (ROLE_ORDER.includes(role) ? ROLE_ORDER.indexOf(role) : ROLE_ORDER.length);
  return Object.entries(agents).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
}

export function RuntimeContextPanel({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const read = useQuery({ ...trpc.tasks.runtimeContext.queryOptions({ sessionId }), enabled: open, retry: false });
  const c = read.data;
  return (
    <Panel title="Runtime context" meta={c ? <span className="font-mono normal-case">{c.runId}</span> : null}>
      <details className="p-4 text-xs" data-testid="runtime-context" onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary className="cursor-pointer text-zinc-700 dark:text-zinc-300">
          {c ? (
            <>
              {c.workflow.id} v{c.workflow.version}
              {c.workflow.userDefined ? " (the repository's own)" : ""} · started {formatTimestamp(new Date(c.createdAt))} ·{" "}
              {Object.keys(c.agents).length} agents
            </>
          ) : (
            "Agents, shells, brains, limits and runs this session was started with"
          )}
        </summary>
        {c ? (
          <RuntimeContextBody context={c} />
        ) : (
          <p className="mt-3 text-zinc-600 dark:text-zinc-400" role={read.error ? "alert" : "status"}>
            {read.error
              ? `Could not read it: ${read.error.message}`
              : c === null
                ? "Nothing recorded: this session is not a task."
                : "Reading…"}
          </p>
        )}
      </details>
    </Panel>
  );
}

function RuntimeContextBody({ context: c }: { context: Context }) {
  const limits = c.limits
    ? `step ${c.limits.stepTimeoutMs} ms · ${c.limits.maxAttempts} attempts · backoff ${c.limits.backoffMs.join(", ")} ms · commands ${c.limits.commandTimeoutMs} ms`
    : "built-in defaults (recorded before limits were)";
  return (
    <>
      <dl className="mt-3 grid grid-cols-[7rem_minmax(0,1fr)] gap-x-3 gap-y-1.5">
        <dt className="text-zinc-600 dark:text-zinc-400">Configuration</dt>
        <dd className="font-mono break-all">
          {c.source.dir
            ? `${c.source.dir}/ v${c.source.configVersion} at ${c.source.commit.slice(0, 12)} (${c.source.files.join(", ")})`
            : `project record, at ${c.source.commit.slice(0, 12)}`}
        </dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Limits</dt>
        <dd className="font-mono" data-testid="runtime-limits">
          {limits}
        </dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Worktrees</dt>
        <dd className="font-mono break-all" data-testid="runtime-worktrees">
          {c.worktrees.length ? (
            <ul>
              {c.worktrees.map((w) => (
                <li key={`${w.host}:${w.path}`}>
                  <span className="text-zinc-600 dark:text-zinc-400">{w.host}:</span>
                  {w.path}
                </li>
              ))}
            </ul>
          ) : (
            "none on any runner host"
          )}
        </dd>
        {c.inheritedFrom ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Inherited from</dt>
            <dd className="font-mono">{c.inheritedFrom}</dd>
          </>
        ) : null}
      </dl>
      {/* Wider than a phone: scrolled sideways, so reachable by keyboard too (axe: scrollable-region-focusable). */}
      <div className="mt-3 overflow-x-auto" role="region" aria-label="Agents by role" tabIndex={0}>
        <table className="w-full text-left">
          <thead className="text-xs text-zinc-600 uppercase dark:text-zinc-400">
            <tr>
              <th className="py-1 pr-3">Role</th>
              <th className="py-1 pr-3">Agent</th>
              <th className="py-1 pr-3">Kind</th>
              <th className="py-1 pr-3">Shell</th>
              <th className="py-1 pr-3">Brain · model</th>
              <th className="py-1 pr-3">FSM</th>
            </tr>
          </thead>
          <tbody className="font-mono">
            {byRole(c.agents).map(([role, a]) => (
              <tr key={role} data-testid="runtime-agent" data-role={role}>
                <td className="py-1 pr-3">{role}</td>
                <td className="py-1 pr-3">{a.agentId}</td>
                <td className="py-1 pr-3">{a.runtimeKind}</td>
                <td className="py-1 pr-3">{a.shell ? `${str(a.shell, "id")} (${str(a.shell, "kind")})` : "–"}</td>
                <td className="py-1 pr-3">{a.brain ? `${str(a.brain, "id")} · ${str(a.brain, "model") ?? "–"}` : "–"}</td>
                <td className="py-1 pr-3">{a.fsm.id}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {c.runs.length ? (
        <ol className="mt-3 space-y-1 font-mono text-xs" aria-label="Agent runs">
          {c.runs.map((r) => (
            <li key={`${r.stepId}-${r.attempt}`}>
              {r.role} in {r.workflowState}, attempt {r.attempt}:{" "}
              {[r.history[0]?.from ?? r.fsmState, ...r.history.map((h) => h.to ?? `(${h.event}: no transition)`)].join(" → ")}
            </li>
          ))}
        </ol>
      ) : null}
    </>
  );
}
