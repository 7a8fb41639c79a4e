// Two branches side by side (server/tasks/compare.ts): where they diverged, then each one's
// state, fork, verdict, tests and critiques in two columns (one above the other on a phone),
// then the artifacts that differ as line diffs, and the code between their last commits.
import { Panel } from "@/components/panel";
import { LineDiffView } from "@/components/line-diff-view";
import { DiffView } from "@/components/session/diff-view";
import { StateBadge } from "@/components/state-badge";
import type { BranchSide, Comparison } from "@/server/tasks/compare";

export function CompareView({ comparison: c, names }: { comparison: Comparison; names: Record<string, string> }) {
  const differing = c.artifacts.filter((a) => !a.same);
  return (
    <div className="space-y-4" data-testid="compare">
      <Panel title="Where they diverged">
        <p className="px-4 py-3 text-sm text-zinc-700 dark:text-zinc-300" data-testid="divergence">
          {c.divergence.shared ? (
            <>
              Both read events 1–{c.divergence.shared} (
              <a
                className="font-mono text-sky-700 hover:underline dark:text-sky-400"
                href={`/sessions/${c.divergence.streamId}/replay?at=${c.divergence.shared}`}
              >
                {c.divergence.streamId}
              </a>
              , the last: {c.divergence.summary}); from there each went its own way.
            </>
          ) : (
            "No history in common: these sessions are not branches of one tree."
          )}
        </p>
      </Panel>
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
        <Side label="A" side={c.a} shared={c.divergence.shared} names={names} />
        <Side label="B" side={c.b} shared={c.divergence.shared} names={names} />
      </div>
      <Panel
        title="Artifacts"
        meta={
          <span data-testid="artifact-summary">
            {c.artifacts.length ? `${differing.length} of ${c.artifacts.length} differ` : "none: not a staged workflow"}
          </span>
        }
      >
        {c.artifacts.length ? (
          <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {c.artifacts.map((a) => (
              <li key={a.path} className="space-y-2 px-4 py-2" data-testid="artifact-pair" data-path={a.path} data-same={a.same}>
                <div className="flex flex-wrap items-center gap-2 text-xs">
                  <span className="font-mono text-zinc-800 dark:text-zinc-200">{a.path}</span>
                  <span className="text-zinc-500 dark:text-zinc-400">
                    {a.same ? "the same" : !a.a ? "only in B" : !a.b ? "only in A" : "differs"}
                    {a.a && a.b && a.a.by !== a.b.by ? ` (A: ${a.a.by}, B: ${a.b.by})` : ""}
                  </span>
                </div>
                {!a.same && a.a?.text != null && a.b?.text != null ? <LineDiffView before={a.a.text} after={a.b.text} /> : null}
              </li>
            ))}
          </ul>
        ) : null}
      </Panel>
      <Panel
        title="Code"
        meta={
          <span data-testid="code-summary">
            {c.code.error
              ? "not compared"
              : c.code.same
                ? "the same code"
                : `${c.code.files.length} file(s): +${c.code.files.reduce((n, f) => n + f.added, 0)} −${c.code.files.reduce((n, f) => n + f.removed, 0)} (A → B)`}
          </span>
        }
      >
        <div className="space-y-2 p-4">
          {c.code.error ? <p className="text-xs text-amber-800 dark:text-amber-300">{c.code.error}</p> : null}
          {!c.code.same && !c.code.error ? <DiffView text={c.code.diff} /> : null}
          {c.code.truncated ? <p className="text-xs text-zinc-500 dark:text-zinc-400">The diff is cut short here.</p> : null}
        </div>
      </Panel>
    </div>
  );
}

function Side({ label, side, shared, names }: { label: string; side: BranchSide; shared: number; names: Record<string, string> }) {
  return (
    <Panel
      title={`${label}: ${side.title}`}
      meta={
        <a href={`/sessions/${side.sessionId}`} className="font-mono text-sky-700 hover:underline dark:text-sky-400">
          {side.sessionId}
        </a>
      }
    >
      <dl className="grid grid-cols-[7rem_minmax(0,1fr)] gap-x-3 gap-y-1.5 px-4 py-3 text-xs" data-testid={`side-${label}`}>
        <dt className="text-zinc-500 dark:text-zinc-400">State</dt>
        <dd className="flex flex-wrap items-center gap-2">
          <StateBadge state={side.state} />
          {side.outcome ? <span className="font-mono">{side.outcome}</span> : null}
          <span className="text-zinc-500 dark:text-zinc-400">iteration {side.iteration}</span>
        </dd>
        <dt className="text-zinc-500 dark:text-zinc-400">Own events</dt>
        <dd className="tabular-nums">
          {side.events - shared} after the divergence ({side.events} in all)
        </dd>
        <dt className="text-zinc-500 dark:text-zinc-400">Fork</dt>
        <dd>
          {side.fork ? (
            <>
              <span className="font-mono">{side.fork.reason}</span> of{" "}
              <a className="font-mono text-sky-700 hover:underline dark:text-sky-400" href={`/sessions/${side.fork.parentId}`}>
                {side.fork.parentId}
              </a>{" "}
              at event {side.fork.atVersion} by {names[side.fork.by] ?? side.fork.by}
              {side.fork.note ? <span className="block text-zinc-600 italic dark:text-zinc-300">“{side.fork.note}”</span> : null}
            </>
          ) : (
            "the root"
          )}
        </dd>
        <dt className="text-zinc-500 dark:text-zinc-400">Last commit</dt>
        <dd className="font-mono">{side.head.slice(0, 12)}</dd>
        <dt className="text-zinc-500 dark:text-zinc-400">Verdict</dt>
        <dd data-testid={`verdict-${label}`}>
          {side.verdict ? (
            <>
              <span className="font-mono">{side.verdict.decision}</span>: {side.verdict.summary}
              {side.verdict.findings.length ? ` (${side.verdict.findings.length} finding(s))` : ""}
            </>
          ) : (
            "none"
          )}
        </dd>
        <dt className="text-zinc-500 dark:text-zinc-400">Tests</dt>
        <dd data-testid={`tests-${label}`}>
          {side.tests.length ? (
            <ul className="space-y-0.5">
              {side.tests.map((t, i) => (
                <li key={i} className="font-mono">
                  <span className={t.passed ? "text-emerald-700 dark:text-emerald-400" : "text-rose-700 dark:text-rose-400"}>
                    {t.passed ? "PASS" : "FAIL"}
                  </span>{" "}
                  {t.argv.join(" ")}
                </li>
              ))}
            </ul>
          ) : (
            "none run"
          )}
        </dd>
        {side.critiques.length ? (
          <>
            <dt className="text-zinc-500 dark:text-zinc-400">Critiques</dt>
            <dd>
              <ul className="space-y-0.5">
                {side.critiques.map((c) => (
                  <li key={c.stage}>
                    <span className="font-mono">{c.stage}</span> {c.decision}: {c.summary}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
      </dl>
    </Panel>
  );
}
