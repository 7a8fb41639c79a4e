"use client";
// A reviewer's verdict (phase "verdict"): the decision the system enforced, the model's own
// when it was overridden, and the findings by severity. Styled as a decision, apart from
// roundtable discussion.
import { Card, Tag } from "./bits";
import type { EntryOf } from "./entry-types";
import { StructuredOutput } from "./session-output";

const SEVERITY_ORDER = ["blocking", "major", "minor", "nit"] as const;
const SEVERITY_TONE = { blocking: "rose", major: "amber", minor: "sky", nit: "zinc" } as const;

export function VerdictCard({ verdict, output }: { verdict: EntryOf<"verdict">; output?: EntryOf<"agent_output"> }) {
  const d = verdict.detail;
  const approved = d.decision === "approve";
  const findings = [...d.findings].sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity));
  const counts = SEVERITY_ORDER.map((s) => [s, d.findings.filter((f) => f.severity === s).length] as const).filter(([, n]) => n > 0);
  return (
    <Card
      testId="verdict"
      accent={approved ? "emerald" : "amber"}
      kind={<Tag tone={approved ? "emerald" : "amber"}>verdict</Tag>}
      title={
        <span
          data-testid="verdict-decision"
          className={approved ? "text-emerald-700 dark:text-emerald-300" : "text-amber-800 dark:text-amber-300"}
        >
          {approved ? "✓ Approved" : "✗ Changes requested"}
        </span>
      }
      right={
        <>
          {counts.map(([s, n]) => (
            <Tag key={s} tone={SEVERITY_TONE[s]}>
              {n} {s}
            </Tag>
          ))}
          {output ? <span className="font-mono">{output.detail.agentId}</span> : null}
        </>
      }
    >
      {d.summary ? <p className="text-[13px] leading-relaxed text-zinc-800 dark:text-zinc-200">{d.summary}</p> : null}
      {d.override ? (
        <p className="rounded border border-amber-200 bg-amber-50 px-2 py-1 text-xs text-amber-900 dark:border-amber-900/60 dark:bg-amber-950/40 dark:text-amber-200">
          The reviewer said <b>{d.modelDecision}</b>; the system enforced <b>{d.decision}</b>: {d.override}
        </p>
      ) : null}
      {findings.length ? (
        <table className="w-full table-fixed text-left text-xs">
          <colgroup>
            <col className="w-20" />
            <col className="w-56" />
            <col />
          </colgroup>
          <thead>
            <tr className="text-xs tracking-wide text-zinc-500 uppercase dark:text-zinc-400">
              <th className="py-1 font-medium">Severity</th>
              <th className="py-1 font-medium">Where</th>
              <th className="py-1 font-medium">Finding</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {findings.map((f, i) => (
              <tr key={i} data-testid="finding" className="align-top">
                <td className="py-1">
                  <Tag tone={SEVERITY_TONE[f.severity]}>{f.severity}</Tag>
                </td>
                <td
                  className="truncate py-1 font-mono text-xs text-zinc-600 dark:text-zinc-300"
                  title={`${f.file}${f.line ? `:${f.line}` : ""}`}
                >
                  {f.file}
                  {f.line ? `:${f.line}` : ""}
                </td>
                <td className="py-1 text-zinc-800 dark:text-zinc-200">{f.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="text-xs text-zinc-500 dark:text-zinc-400">No findings.</p>
      )}
      {output?.detail.parsed ? <StructuredOutput parsed={output.detail.parsed} raw={output.detail.raw} /> : null}
    </Card>
  );
}
