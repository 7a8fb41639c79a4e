// The folded state at the replay position: FSM state, status and outcome, iteration,
// mode, the step in progress, open issues, the latest verdict and test plan, and the event
// at the position itself.
import type { ReactNode } from "react";
import type { ReplayView } from "@/server/sessions/replay";
import { actorName } from "../session/format";
import { formatTimestamp } from "@/lib/format-time";
import { Panel } from "../panel";
import { StateBadge } from "../state-badge";
import { SUCCESS_OUTCOMES } from "@/lib/outcomes";

export function StatePanel({ view }: { view: ReplayView & { names: Record<string, string> } }) {
  const s = view.state;
  const inherited = view.fork && view.version <= view.fork.forkVersion;
  return (
    <Panel
      title={`State at event ${view.version}`}
      meta={view.version === view.head ? "latest" : `${view.head - view.version} later event${view.head - view.version === 1 ? "" : "s"}`}
    >
      <div className="space-y-4 p-4">
        <div className="flex flex-wrap items-center gap-2">
          <span className="text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">FSM</span>
          <span data-testid="replay-fsm" data-state={s.fsm || "(none)"}>
            <StateBadge state={s.fsm || "(none)"} />
          </span>
          <span className="ml-auto font-mono text-xs text-zinc-500 dark:text-zinc-400" data-testid="replay-status">
            {s.status}
            {s.outcome ? ` · ${s.outcome}` : ""}
          </span>
        </div>
        <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1.5 text-xs">
          <Term>Iteration</Term>
          <Value mono>
            <span data-testid="replay-iteration">{s.iteration}</span>
            {s.maxIterations ? <span className="text-zinc-500 dark:text-zinc-400"> of {s.maxIterations}</span> : null}
          </Value>
          <Term>Workflow</Term>
          <Value mono>
            {s.workflow ?? "—"}
            {s.mode ? <span className="text-zinc-500 dark:text-zinc-400"> · {s.mode}</span> : null}
          </Value>
          <Term>Project</Term>
          <Value mono>{s.project ? s.project.id : "—"}</Value>
          <Term>Step</Term>
          <Value mono>
            {s.step ? `${s.step.role} in ${s.step.state}` : <span className="text-zinc-500 dark:text-zinc-400">none running</span>}
          </Value>
          <Term>Head</Term>
          <Value mono>{s.head ? s.head.slice(0, 12) : "—"}</Value>
        </dl>
        {view.event ? (
          <div
            className="rounded-md border border-sky-200 bg-sky-50/60 p-2.5 dark:border-sky-900/60 dark:bg-sky-950/20"
            data-testid="replay-event"
          >
            <div className="flex items-center gap-2 text-xs">
              <span className="font-mono font-semibold text-sky-800 dark:text-sky-300">{view.event.type}</span>
              <span className="ml-auto text-zinc-500 dark:text-zinc-400">{actorName(view.event.actor, view.names)}</span>
            </div>
            <p className="mt-1 text-xs leading-relaxed break-words text-zinc-700 dark:text-zinc-300">{view.event.summary}</p>
            <p className="mt-1 font-mono text-xs text-zinc-500 dark:text-zinc-400">
              {formatTimestamp(new Date(view.event.recordedAt))}
              {inherited ? " · inherited from the parent session" : ""}
            </p>
          </div>
        ) : null}
        {s.finalized ? (
          <div
            className={`rounded-md border p-2.5 text-xs ${SUCCESS_OUTCOMES.includes(s.finalized.outcome) ? "border-emerald-200 bg-emerald-50/60 dark:border-emerald-900/60 dark:bg-emerald-950/20" : "border-rose-200 bg-rose-50/60 dark:border-rose-900/60 dark:bg-rose-950/20"}`}
          >
            <div className="font-medium">Finished: {s.finalized.outcome}</div>
            {s.finalized.errorClass ? (
              <div className="mt-0.5 font-mono text-xs">
                {s.finalized.errorClass}: {s.finalized.diagnosis}
              </div>
            ) : s.finalized.reason ? (
              <div className="mt-0.5 text-zinc-600 dark:text-zinc-400">{s.finalized.reason}</div>
            ) : null}
            {s.finalized.unresolved.length ? (
              <ul className="mt-1.5 list-disc space-y-0.5 pl-4 text-xs">
                {s.finalized.unresolved.map((u, i) => (
                  <li key={i}>{u}</li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
        {s.openIssues.length ? (
          <div>
            <h3 className="text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">Open issues</h3>
            <ul className="mt-1 space-y-1 text-xs">
              {s.openIssues.map((issue, i) => (
                <li
                  key={i}
                  className="rounded border-l-2 border-amber-400 bg-amber-50/60 px-2 py-1 font-mono text-xs break-words text-amber-900 dark:bg-amber-950/20 dark:text-amber-200"
                >
                  {issue}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {s.prompt ? (
          <details className="group text-xs">
            <summary className="cursor-pointer text-xs font-medium tracking-wide text-zinc-500 uppercase select-none dark:text-zinc-400">
              Prompt
            </summary>
            <p className="mt-1 whitespace-pre-wrap text-zinc-700 dark:text-zinc-300">{s.prompt}</p>
          </details>
        ) : null}
      </div>
    </Panel>
  );
}

function Term({ children }: { children: ReactNode }) {
  return <dt className="text-zinc-500 dark:text-zinc-400">{children}</dt>;
}

function Value({ children, mono = false }: { children: ReactNode; mono?: boolean }) {
  return <dd className={`min-w-0 truncate text-zinc-800 dark:text-zinc-200 ${mono ? "font-mono" : ""}`}>{children}</dd>;
}
