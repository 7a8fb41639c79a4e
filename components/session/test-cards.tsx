"use client";
// The tester's plan (the commands it asked for) and the results of running them through
// the allowlist runner: pass or fail per command, its exit code against the expected one,
// how long it took, and the tail of its output (open by default when it failed).
import { useState } from "react";
import { Card, Tag } from "./bits";
import type { EntryOf } from "./entry-types";
import { FailureLine } from "./failure-line";
import { formatDurationMs } from "./format";
import { StructuredOutput, ToggleButton } from "./session-output";

export function TestPlanCard({ plan, output }: { plan: EntryOf<"test_plan">; output?: EntryOf<"agent_output"> }) {
  const d = plan.detail;
  return (
    <Card
      testId="test-plan"
      accent="sky"
      kind={<Tag tone="sky">test plan</Tag>}
      title={d.summary}
      right={output ? <span className="font-mono">{output.detail.agentId}</span> : null}
    >
      <ul className="space-y-1">
        {d.commands.map((c, i) => (
          <li key={i} className="flex items-baseline gap-2 text-xs">
            <code className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-xs text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200">
              $ {c.argv.join(" ")}
            </code>
            <span className="text-zinc-500 dark:text-zinc-400">
              expects exit {c.expect.exitCode}
              {c.description ? ` — ${c.description}` : ""}
            </span>
          </li>
        ))}
      </ul>
      {output?.detail.parsed ? <StructuredOutput parsed={output.detail.parsed} raw={output.detail.raw} /> : null}
    </Card>
  );
}

export function TestResultsCard({ results }: { results: EntryOf<"test_command">[] }) {
  const passed = results.filter((r) => r.detail.passed).length;
  const allPassed = passed === results.length;
  return (
    <Card
      testId="test-results"
      accent={allPassed ? "emerald" : "rose"}
      kind={<Tag tone={allPassed ? "emerald" : "rose"}>test results</Tag>}
      title={
        <span
          data-testid="test-results-summary"
          className={allPassed ? "text-emerald-700 dark:text-emerald-300" : "text-rose-700 dark:text-rose-300"}
        >
          {passed}/{results.length} passed
        </span>
      }
    >
      <ul className="divide-y divide-zinc-100 dark:divide-zinc-800">
        {results.map((r) => (
          <TestResultRow key={r.version} result={r} />
        ))}
      </ul>
    </Card>
  );
}

function TestResultRow({ result }: { result: EntryOf<"test_command"> }) {
  const d = result.detail;
  const [open, setOpen] = useState(!d.passed);
  const output = [
    d.stdoutTail && `── stdout (tail) ──\n${d.stdoutTail.trimEnd()}`,
    d.stderrTail && `── stderr (tail) ──\n${d.stderrTail.trimEnd()}`,
  ]
    .filter(Boolean)
    .join("\n");
  return (
    <li data-testid="test-command" data-passed={d.passed} className="py-1.5 first:pt-0 last:pb-0">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs">
        <span
          className={`font-mono text-xs font-semibold ${d.passed ? "text-emerald-700 dark:text-emerald-400" : "text-rose-700 dark:text-rose-400"}`}
        >
          {d.passed ? "PASS" : d.status === "refused" ? "REFUSED" : "FAIL"}
        </span>
        <code className="min-w-0 truncate font-mono text-xs text-zinc-800 dark:text-zinc-200">$ {d.argv.join(" ")}</code>
        <span className="ml-auto flex items-center gap-3 font-mono text-xs text-zinc-500 tabular-nums dark:text-zinc-400">
          <span data-testid="exit-code">exit {d.exitCode ?? "—"}</span>
          {d.exitCode !== d.expectedExitCode ? <span>expected {d.expectedExitCode}</span> : null}
          <span>{formatDurationMs(d.durationMs)}</span>
        </span>
      </div>
      {result.failure ? <FailureLine failure={result.failure} className="mt-1" /> : null}
      {output ? (
        <div className="mt-1">
          <ToggleButton open={open} onClick={() => setOpen(!open)}>
            Output tail
          </ToggleButton>
          {open ? (
            <pre
              tabIndex={0}
              role="region"
              aria-label="Command output"
              className="mt-1 max-h-72 overflow-auto rounded-md border border-zinc-200 bg-zinc-50 px-3 py-2 font-mono text-xs leading-[18px] whitespace-pre-wrap text-zinc-700 dark:border-zinc-800 dark:bg-zinc-950 dark:text-zinc-300"
            >
              {output}
            </pre>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}
