"use client";
// Agent work that is not discussion: a build (the coder's message and the commit it made,
// with its diff on demand) and any other agent output (a plan, an execution, or an output
// the system rejected — with its error class and the reason).
import { Card, ClampedText, Tag } from "./bits";
import type { EntryOf } from "./entry-types";
import { FailureLine } from "./failure-line";
import { capitalize } from "./format";
import { RoleAvatar, roleStyle } from "./role-style";
import { DiffToggle, FullOutput, StructuredOutput } from "./session-output";

const FILE_STATUS: Record<string, { letter: string; className: string }> = {
  added: { letter: "A", className: "text-emerald-700 dark:text-emerald-400" },
  modified: { letter: "M", className: "text-amber-700 dark:text-amber-400" },
  deleted: { letter: "D", className: "text-rose-700 dark:text-rose-400" },
  renamed: { letter: "R", className: "text-violet-600 dark:text-violet-400" },
};

function AgentTitle({ role, agentId, simulated }: { role: string; agentId: string; simulated: boolean }) {
  return (
    <span className="flex items-center gap-2">
      <RoleAvatar role={role} />
      <span className={`font-semibold ${roleStyle(role).text}`}>{capitalize(role)}</span>
      <span className="font-mono text-xs font-normal text-zinc-500 dark:text-zinc-400">{agentId}</span>
      {simulated ? <Tag tone="amber">simulated</Tag> : null}
    </span>
  );
}

export function CommitSummary({ commit }: { commit: EntryOf<"commit"> }) {
  const d = commit.detail;
  if (d.empty) return <p className="text-xs text-zinc-500 dark:text-zinc-400">No files changed.</p>;
  return (
    <div data-testid="commit" className="space-y-1.5">
      <div className="flex flex-wrap items-center gap-2 text-xs text-zinc-600 dark:text-zinc-300">
        <span>Committed</span>
        <code className="rounded bg-zinc-100 px-1 font-mono text-xs dark:bg-zinc-800">{d.commit.slice(0, 10)}</code>
        <span className="text-zinc-500 dark:text-zinc-400">·</span>
        <span>
          {d.changedFiles.length} file{d.changedFiles.length === 1 ? "" : "s"}
        </span>
      </div>
      <ul className="space-y-0.5">
        {d.changedFiles.map((f) => {
          const status = FILE_STATUS[f.status] ?? FILE_STATUS.modified!;
          return (
            <li key={f.path} className="flex items-center gap-2 font-mono text-xs">
              <span className={`w-3 font-semibold ${status.className}`} title={f.status}>
                {status.letter}
              </span>
              <span className="truncate text-zinc-800 dark:text-zinc-200">
                {f.previousPath ? `${f.previousPath} → ` : ""}
                {f.path}
              </span>
            </li>
          );
        })}
      </ul>
      <DiffToggle diff={d.diff} />
    </div>
  );
}

export function BuildCard({ output, commit }: { output: EntryOf<"agent_output">; commit?: EntryOf<"commit"> }) {
  const d = output.detail;
  return (
    <Card
      testId="build"
      kind={<Tag tone="violet">{d.phase}</Tag>}
      title={<AgentTitle role={d.role} agentId={d.agentId} simulated={d.simulated} />}
    >
      {output.failure ? <FailureLine failure={output.failure} /> : null}
      <ClampedText text={d.preview} className="text-[13px] leading-relaxed text-zinc-800 dark:text-zinc-200" />
      {commit ? <CommitSummary commit={commit} /> : null}
      <FullOutput blob={d.raw} label="Agent's full reply" />
    </Card>
  );
}

export function AgentOutputCard({ output }: { output: EntryOf<"agent_output"> }) {
  const d = output.detail;
  return (
    <Card
      testId="agent-output"
      accent={output.failure ? "rose" : "zinc"}
      kind={<Tag tone={output.failure ? "rose" : "zinc"}>{d.phase}</Tag>}
      title={<AgentTitle role={d.role} agentId={d.agentId} simulated={d.simulated} />}
    >
      {output.failure ? <FailureLine failure={output.failure} /> : null}
      {d.validationErrors.length > 1 ? (
        <ul className="list-disc space-y-0.5 pl-5 text-xs text-rose-700 dark:text-rose-300">
          {d.validationErrors.map((e, i) => (
            <li key={i}>{e}</li>
          ))}
        </ul>
      ) : null}
      <ClampedText text={d.preview} className="font-mono text-xs leading-5 text-zinc-700 dark:text-zinc-300" />
      {d.parsed !== null ? <StructuredOutput parsed={d.parsed} raw={d.raw} /> : <FullOutput blob={d.raw} label="Raw output" />}
    </Card>
  );
}
