// The round (iteration) in progress at the replay position, with what it has produced so
// far: roundtable discussion (prose, set apart), builds and commits, the reviewer's verdict
// with its findings, the test plan and each command's result, operator messages, failures.
// Earlier rounds are listed in brief, each a link to where it began.
import { AppLink } from "@/components/app-link";
import type { ReactNode } from "react";
import type { ReplayView, RoundEntry } from "@/server/sessions/replay";
import { EmptyState, Panel } from "../panel";

export function RoundPanel({ view, hrefAt }: { view: ReplayView; hrefAt: (version: number) => string }) {
  const round = view.round;
  return (
    <Panel
      title={round ? `Round ${round.iteration}${round.reason ? ` · ${round.reason}` : ""}` : "Round"}
      meta={round ? `from event ${round.fromVersion}` : undefined}
    >
      {view.rounds.length > 1 ? (
        <nav className="flex gap-1.5 overflow-x-auto border-b border-zinc-200 px-4 py-2 dark:border-zinc-800" aria-label="Rounds">
          {view.rounds.map((r, i) => {
            const current = i === view.rounds.length - 1;
            return (
              <AppLink
                key={`${r.iteration}-${r.fromVersion}`}
                href={hrefAt(r.fromVersion)}
                scroll={false}
                className={`shrink-0 rounded-md px-2 py-1 text-xs ring-1 ring-inset ${current ? "bg-zinc-900 text-white ring-zinc-900 dark:bg-zinc-100 dark:text-zinc-900" : "text-zinc-600 ring-zinc-200 hover:bg-zinc-50 dark:text-zinc-300 dark:ring-zinc-800 dark:hover:bg-zinc-800/60"}`}
              >
                <span className="font-semibold">#{r.iteration}</span>
                <span className="ml-1.5">
                  {r.verdict ?? `${r.outputs} output${r.outputs === 1 ? "" : "s"}`}
                  {r.tests.passed + r.tests.failed > 0 ? ` · tests ${r.tests.passed}/${r.tests.passed + r.tests.failed}` : ""}
                </span>
              </AppLink>
            );
          })}
        </nav>
      ) : null}
      {!round || round.entries.length === 0 ? (
        <EmptyState
          title="Nothing produced yet"
          hint="Outputs, verdicts and test results of this round appear here as the position moves past them."
        />
      ) : (
        <ol className="space-y-3 p-4">
          {round.omitted > 0 ? (
            <li className="text-center text-xs text-zinc-500 dark:text-zinc-400">
              {round.omitted} earlier entries of this round not shown
            </li>
          ) : null}
          {round.entries.map((entry) => (
            <li
              key={`${entry.kind}-${entry.version}`}
              className={
                entry.version === view.version
                  ? "rounded-lg ring-2 ring-sky-500/60 ring-offset-2 ring-offset-white dark:ring-offset-zinc-900"
                  : ""
              }
            >
              <Entry entry={entry} href={hrefAt(entry.version)} />
            </li>
          ))}
        </ol>
      )}
    </Panel>
  );
}

function Entry({ entry, href }: { entry: RoundEntry; href: string }) {
  switch (entry.kind) {
    case "output": {
      const discussion = entry.phase === "discussion";
      const invalid = entry.validationErrors.length > 0;
      return (
        <Card
          tone={invalid ? "rose" : discussion ? "violet" : "zinc"}
          href={href}
          version={entry.version}
          label={
            <>
              <span className="font-semibold capitalize">{entry.role}</span>
              <span className="text-zinc-600 dark:text-zinc-400">{discussion ? "roundtable discussion" : `${entry.phase} output`}</span>
              {entry.simulated ? <Chip>simulated</Chip> : null}
              <span className="font-mono text-zinc-600 dark:text-zinc-400">{entry.agentId}</span>
            </>
          }
        >
          <p
            className={`line-clamp-6 text-xs leading-relaxed whitespace-pre-wrap ${discussion ? "text-zinc-700 italic dark:text-zinc-300" : "font-mono text-xs text-zinc-700 dark:text-zinc-300"}`}
          >
            {entry.preview || "(empty)"}
          </p>
          {invalid ? (
            <ul className="mt-1.5 space-y-0.5 text-xs text-rose-700 dark:text-rose-300">
              {entry.validationErrors.slice(0, 5).map((e, i) => (
                <li key={i}>✗ {e}</li>
              ))}
            </ul>
          ) : null}
        </Card>
      );
    }
    case "verdict":
      return (
        <Card
          tone={entry.decision === "approve" ? "emerald" : "amber"}
          href={href}
          version={entry.version}
          label={
            <>
              <span className="font-semibold">Verdict</span>
              <span className="font-mono font-semibold">{entry.decision}</span>
              {entry.override ? <Chip>system override</Chip> : null}
            </>
          }
        >
          <p className="text-xs text-zinc-700 dark:text-zinc-300">{entry.summary}</p>
          {entry.override ? <p className="mt-1 text-xs text-amber-800 dark:text-amber-300">{entry.override}</p> : null}
          {entry.findings.length ? (
            <ul className="mt-1.5 space-y-1">
              {entry.findings.map((f, i) => (
                <li key={i} className="flex gap-2 text-xs">
                  <span
                    className={`shrink-0 rounded px-1 font-mono uppercase ${f.severity === "blocking" ? "bg-rose-500/15 text-rose-700 dark:text-rose-300" : f.severity === "major" ? "bg-amber-500/15 text-amber-800 dark:text-amber-300" : "bg-zinc-500/10 text-zinc-600 dark:text-zinc-400"}`}
                  >
                    {f.severity}
                  </span>
                  <span className="font-mono text-zinc-500 dark:text-zinc-400">
                    {f.file}
                    {f.line ? `:${f.line}` : ""}
                  </span>
                  <span className="text-zinc-700 dark:text-zinc-300">{f.message}</span>
                </li>
              ))}
            </ul>
          ) : null}
        </Card>
      );
    case "test_plan":
      return (
        <Card tone="sky" href={href} version={entry.version} label={<span className="font-semibold">Test plan</span>}>
          <p className="text-xs text-zinc-700 dark:text-zinc-300">{entry.summary}</p>
          <ul className="mt-1 space-y-0.5">
            {entry.commands.map((argv, i) => (
              <li key={i} className="font-mono text-xs text-zinc-600 dark:text-zinc-400">
                $ {argv.join(" ")}
              </li>
            ))}
          </ul>
        </Card>
      );
    case "test":
      return (
        <Card
          tone={entry.passed ? "emerald" : "rose"}
          href={href}
          version={entry.version}
          label={
            <>
              <span className="font-semibold">{entry.passed ? "✓ passed" : entry.status === "refused" ? "⊘ refused" : "✗ failed"}</span>
              <span className="font-mono">$ {entry.argv.join(" ")}</span>
            </>
          }
        >
          <p className="font-mono text-xs text-zinc-600 dark:text-zinc-400">
            exit {entry.exitCode ?? "—"} (expected {entry.expectedExitCode}) · {Math.round(entry.durationMs)} ms
            {entry.reason ? ` · ${entry.reason}` : ""}
          </p>
        </Card>
      );
    case "commit":
      return (
        <Card
          tone="zinc"
          href={href}
          version={entry.version}
          label={
            <span className="font-semibold">
              Commit <span className="font-mono">{entry.commit.slice(0, 10)}</span>
            </span>
          }
        >
          <p className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{entry.empty ? "no files changed" : entry.files.join(", ")}</p>
        </Card>
      );
    case "message":
      return (
        <Card
          tone={entry.from === "operator" ? "sky" : "zinc"}
          href={href}
          version={entry.version}
          label={<span className="font-semibold capitalize">{entry.from}</span>}
        >
          <p className="text-xs whitespace-pre-wrap text-zinc-700 dark:text-zinc-300">{entry.text}</p>
        </Card>
      );
    case "confirm":
      return (
        <Card
          tone="amber"
          href={href}
          version={entry.version}
          label={<span className="font-semibold">Operator confirmed the proposal</span>}
        >
          <p className="text-xs text-zinc-600 dark:text-zinc-400">via {entry.via}: implementation starts in the same thread.</p>
        </Card>
      );
    case "step_failed":
      return (
        <Card
          tone="rose"
          href={href}
          version={entry.version}
          label={
            <>
              <span className="font-semibold">Step failed</span>
              <span className="font-mono">{entry.errorClass}</span>
              {entry.retrying ? <Chip>will retry</Chip> : null}
            </>
          }
        >
          <p className="text-xs text-zinc-700 dark:text-zinc-300">{entry.message}</p>
        </Card>
      );
    case "rejected":
      return (
        <Card tone="rose" href={href} version={entry.version} label={<span className="font-semibold">Execution rejected</span>}>
          <ul className="list-disc pl-4 text-xs text-zinc-700 dark:text-zinc-300">
            {entry.reasons.map((r, i) => (
              <li key={i}>{r}</li>
            ))}
          </ul>
        </Card>
      );
  }
}

const TONES = {
  zinc: "border-zinc-200 dark:border-zinc-800",
  violet: "border-violet-200 bg-violet-50/40 dark:border-violet-900/60 dark:bg-violet-950/15",
  emerald: "border-emerald-200 bg-emerald-50/40 dark:border-emerald-900/60 dark:bg-emerald-950/15",
  amber: "border-amber-200 bg-amber-50/40 dark:border-amber-900/60 dark:bg-amber-950/15",
  rose: "border-rose-200 bg-rose-50/40 dark:border-rose-900/60 dark:bg-rose-950/15",
  sky: "border-sky-200 bg-sky-50/40 dark:border-sky-900/60 dark:bg-sky-950/15",
} as const;

function Card({
  tone,
  label,
  version,
  href,
  children,
}: {
  tone: keyof typeof TONES;
  label: ReactNode;
  version: number;
  href: string;
  children: ReactNode;
}) {
  return (
    <article className={`rounded-lg border px-3 py-2 ${TONES[tone]}`}>
      <header className="mb-1 flex flex-wrap items-center gap-x-2 gap-y-0.5 text-xs text-zinc-700 dark:text-zinc-300">
        {label}
        <AppLink href={href} scroll={false} className="ml-auto font-mono text-zinc-500 dark:text-zinc-400 hover:text-sky-600">
          #{version}
        </AppLink>
      </header>
      {children}
    </article>
  );
}

function Chip({ children }: { children: ReactNode }) {
  return <span className="rounded bg-zinc-900/5 px-1.5 py-px text-xs text-zinc-600 dark:bg-white/10 dark:text-zinc-300">{children}</span>;
}
