"use client";
// The session in numbers (req W12): outcome, iterations, verdicts, test runs, and every
// problem met on the way (each with its error class and one-line diagnosis), plus the
// unresolved items a finished session left. A staged session (the Forge pipeline) shows each
// stage's runs and its critic's verdicts instead, as the Forge page and summary.json count them.
import { Panel } from "@/components/panel";
import type { SessionEntry } from "@/server/sessions/view/entries";
import type { SessionStatus } from "@/server/sessions/view/progress";
import { FailureLine } from "./failure-line";

export function SummaryPanel({ status, entries }: { status: SessionStatus; entries: SessionEntry[] }) {
  // Counted over the whole session (the page holds only its latest entries).
  const { verdicts, approvals, testCommands, testsPassed, stateChanges } = status.tally;
  const { stages, stageVerdicts: critics } = status;
  const failures = entries.filter((e) => e.failure && e.detail.kind !== "finalized");
  const unresolved = status.final?.unresolved ?? [];
  return (
    <Panel title="Summary" meta={status.outcome ?? status.status}>
      <div className="space-y-3 px-4 py-3 text-xs" data-testid="summary">
        <dl className="grid grid-cols-2 gap-x-4 gap-y-1.5">
          {stages && critics ? (
            <>
              <Stat label="Iterations" value={stages.map((s) => `${s.name} ${s.runs}`).join(" · ") || "none"} testId="summary-iterations" />
              <Stat label="State changes" value={String(stateChanges)} />
              <Stat
                label="Verdicts"
                value={countsOf([
                  [critics.pass, "passed"],
                  [critics.revise, "revise"],
                  [critics.escalate, "escalated"],
                ])}
                testId="summary-verdicts"
              />
            </>
          ) : (
            <>
              <Stat label="Iterations" value={`${status.iteration}${status.maxIterations ? ` / ${status.maxIterations}` : ""}`} />
              <Stat label="State changes" value={String(stateChanges)} />
              <Stat
                label="Verdicts"
                value={countsOf([
                  [approvals, "approved"],
                  [verdicts - approvals, "changes"],
                ])}
              />
            </>
          )}
          <Stat
            label="Test commands"
            value={countsOf([
              [testsPassed, "passed"],
              [testCommands - testsPassed, "failed"],
            ])}
          />
        </dl>
        {status.final?.failure ? (
          <div>
            <p className="mb-1 text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">Ended with</p>
            <FailureLine failure={status.final.failure} />
          </div>
        ) : null}
        {failures.length ? (
          <div>
            <p className="mb-1 text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">
              Problems on the way ({failures.length})
            </p>
            <ul className="space-y-1">
              {failures.slice(-8).map((e) => (
                <li key={e.version} className="flex items-start gap-2">
                  <span className="w-8 shrink-0 pt-0.5 text-right font-mono text-xs text-zinc-500 dark:text-zinc-400">v{e.version}</span>
                  <FailureLine failure={e.failure!} className="min-w-0 flex-1" />
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {unresolved.length ? (
          <div>
            <p className="mb-1 text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">Unresolved</p>
            <ul className="list-disc space-y-0.5 pl-4 text-zinc-700 dark:text-zinc-300">
              {unresolved.map((u, i) => (
                <li key={i} title={u}>
                  <span className="line-clamp-2 break-words">{u}</span>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
      </div>
    </Panel>
  );
}

/** "2 approved · 1 changes", leaving out zeros; "none" when all are zero. */
function countsOf(parts: Array<[number, string]>): string {
  const shown = parts.filter(([n]) => n > 0).map(([n, label]) => `${n} ${label}`);
  return shown.length ? shown.join(" · ") : "none";
}

function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs tracking-wide text-zinc-500 uppercase dark:text-zinc-400">{label}</dt>
      <dd className="font-mono text-xs break-words text-zinc-800 tabular-nums dark:text-zinc-200" title={value} data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}
