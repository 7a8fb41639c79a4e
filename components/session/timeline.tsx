"use client";
// The session's timeline: entries in order, grouped where one step wrote several facts (a
// verdict with the reviewer's output, a build with its commit, all results of one test
// run), with discussion, verdicts, tests, failures and people's actions each drawn their
// own way. Step bookkeeping (scheduled, started, completed) is hidden unless asked for.
import { AppLink } from "@/components/app-link";
import { memo, type ReactNode } from "react";
import { StateBadge } from "@/components/state-badge";
import type { SessionEntry } from "@/server/sessions/view/entries";
import { AgentOutputCard, BuildCard, CommitSummary } from "./agent-cards";
import { Card, ClampedText, Tag } from "./bits";
import { DiscussionEntry } from "./discussion-entry";
import { isKind, type EntryOf } from "./entry-types";
import { FailureLine } from "./failure-line";
import { actorName, timeOfDay } from "./format";
import { RoleAvatar } from "./role-style";
import { useSessionContext } from "./session-context";
import { TestPlanCard, TestResultsCard } from "./test-cards";
import { VerdictCard } from "./verdict-card";
import { SUCCESS_OUTCOMES } from "@/lib/outcomes";

type Item =
  | { kind: "entry"; entry: SessionEntry }
  | { kind: "verdict"; verdict: EntryOf<"verdict">; output?: EntryOf<"agent_output"> }
  | { kind: "plan"; plan: EntryOf<"test_plan">; output?: EntryOf<"agent_output"> }
  | { kind: "build"; output: EntryOf<"agent_output">; commit?: EntryOf<"commit"> }
  | { kind: "tests"; results: EntryOf<"test_command">[] };

/** Step bookkeeping: shown only with "step events" on. */
const BOOKKEEPING = new Set([
  "step_scheduled",
  "step_started",
  "step_completed",
  "step_released",
  "rate_limited",
  "runtime_context",
  "created",
  "task_spec",
  "agent_streamed",
  "other",
]);

export function isBookkeeping(entry: SessionEntry): boolean {
  return BOOKKEEPING.has(entry.detail.kind) && !entry.failure;
}

/** Groups the facts one step recorded together into one item. */
export function groupEntries(entries: SessionEntry[]): Item[] {
  const items: Item[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const next = entries[i + 1];
    if (isKind(entry, "agent_output") && !entry.failure && next) {
      if (isKind(next, "verdict") && next.detail.stepId === entry.detail.stepId) {
        items.push({ kind: "verdict", verdict: next, output: entry });
        i++;
        continue;
      }
      if (isKind(next, "test_plan") && next.detail.stepId === entry.detail.stepId) {
        items.push({ kind: "plan", plan: next, output: entry });
        i++;
        continue;
      }
    }
    if (
      isKind(entry, "agent_output") &&
      (entry.detail.phase === "build" || entry.detail.phase === "execute") &&
      entry.detail.parsed === null
    ) {
      const commit = next && isKind(next, "commit") && next.detail.stepId === entry.detail.stepId ? next : undefined;
      items.push({ kind: "build", output: entry, commit });
      if (commit) i++;
      continue;
    }
    if (isKind(entry, "verdict")) {
      items.push({ kind: "verdict", verdict: entry });
      continue;
    }
    if (isKind(entry, "test_plan")) {
      items.push({ kind: "plan", plan: entry });
      continue;
    }
    if (isKind(entry, "test_command")) {
      const last = items.at(-1);
      if (last?.kind === "tests" && last.results[0]!.detail.stepId === entry.detail.stepId) last.results.push(entry);
      else items.push({ kind: "tests", results: [entry] });
      continue;
    }
    items.push({ kind: "entry", entry });
  }
  return items;
}

function firstEntry(item: Item): SessionEntry {
  switch (item.kind) {
    case "entry":
      return item.entry;
    case "verdict":
      return item.output ?? item.verdict;
    case "plan":
      return item.output ?? item.plan;
    case "build":
      return item.output;
    case "tests":
      return item.results[0]!;
  }
}

export function Timeline({ entries, showBookkeeping }: { entries: SessionEntry[]; showBookkeeping: boolean }) {
  const { sessionId } = useSessionContext();
  const visible = showBookkeeping ? entries : entries.filter((e) => !isBookkeeping(e));
  const items = groupEntries(visible);
  return (
    <ol data-testid="timeline" className="divide-y divide-zinc-100 dark:divide-zinc-800/70">
      {items.map((item) => (
        <TimelineRow key={firstEntry(item).version} item={item} sessionId={sessionId} />
      ))}
    </ol>
  );
}

/** The entries an item draws, in order. */
function entriesOf(item: Item): SessionEntry[] {
  switch (item.kind) {
    case "entry":
      return [item.entry];
    case "verdict":
      return item.output ? [item.output, item.verdict] : [item.verdict];
    case "plan":
      return item.output ? [item.output, item.plan] : [item.plan];
    case "build":
      return item.commit ? [item.output, item.commit] : [item.output];
    case "tests":
      return item.results;
  }
}

/**
 * Items are made afresh at every render, their entries are not (the live state keeps each
 * entry once): a row is drawn again only when its entries changed, so a batch of live
 * events costs its new rows, not the whole timeline again (docs/scaling.md, "First output
 * and live paint").
 */
function sameRow(a: { item: Item; sessionId: string }, b: { item: Item; sessionId: string }): boolean {
  if (a.sessionId !== b.sessionId || a.item.kind !== b.item.kind) return false;
  const x = entriesOf(a.item);
  const y = entriesOf(b.item);
  return x.length === y.length && x.every((e, i) => e === y[i]);
}

const TimelineRow = memo(function TimelineRow({ item, sessionId }: { item: Item; sessionId: string }) {
  const first = firstEntry(item);
  const inherited = first.streamId !== sessionId;
  const compact = item.kind === "entry" && isCompact(item.entry);
  return (
    <li
      data-testid="timeline-item"
      data-kind={item.kind === "entry" ? item.entry.detail.kind : item.kind}
      data-version={first.version}
      className={`grid grid-cols-[52px_minmax(0,1fr)] gap-3 px-4 ${compact ? "py-1" : "py-2.5"} ${inherited ? "bg-zinc-50/70 dark:bg-zinc-900/30" : ""}`}
    >
      <div
        className={`text-right font-mono text-xs leading-4 text-zinc-500 tabular-nums dark:text-zinc-400 ${compact ? "" : "pt-0.5"}`}
        title={`${first.recordedAt} · ${first.type}${inherited ? ` · inherited from ${first.streamId}` : ""}`}
      >
        <div>v{first.version}</div>
        {compact ? null : <div>{timeOfDay(first.recordedAt)}</div>}
      </div>
      <div className="min-w-0">
        <ItemView item={item} />
      </div>
    </li>
  );
}, sameRow);

/** Entries drawn as one short line. */
function isCompact(entry: SessionEntry): boolean {
  return (
    [
      "step_scheduled",
      "step_started",
      "step_completed",
      "step_released",
      "step_cancelled",
      "rate_limited",
      "runtime_context",
      "created",
      "task_spec",
      "other",
      "pipeline",
      "state_changed",
      "confirmed",
      "cancel_requested",
      "system_reply",
      "agent_streamed",
    ].includes(entry.detail.kind) && !entry.failure
  );
}

function ItemView({ item }: { item: Item }) {
  switch (item.kind) {
    case "verdict":
      return <VerdictCard verdict={item.verdict} output={item.output} />;
    case "plan":
      return <TestPlanCard plan={item.plan} output={item.output} />;
    case "build":
      return <BuildCard output={item.output} commit={item.commit} />;
    case "tests":
      return <TestResultsCard results={item.results} />;
    case "entry":
      return <EntryView entry={item.entry} />;
  }
}

function Line({ children, tone = "dim", testId }: { children: ReactNode; tone?: "dim" | "normal" | "good" | "warn"; testId?: string }) {
  const color = {
    dim: "text-zinc-500 dark:text-zinc-400",
    normal: "text-zinc-700 dark:text-zinc-300",
    good: "text-emerald-700 dark:text-emerald-300",
    warn: "text-amber-800 dark:text-amber-300",
  }[tone];
  return (
    <p data-testid={testId} className={`flex min-w-0 flex-wrap items-center gap-x-2 gap-y-0.5 text-xs leading-4 ${color}`}>
      {children}
    </p>
  );
}

function EntryView({ entry }: { entry: SessionEntry }) {
  const { names } = useSessionContext();
  const who = actorName(entry.actor, names);
  const d = entry.detail;
  switch (d.kind) {
    case "agent_output":
      return d.phase === "discussion" && !entry.failure ? (
        <DiscussionEntry entry={entry as EntryOf<"agent_output">} />
      ) : (
        <AgentOutputCard output={entry as EntryOf<"agent_output">} />
      );
    case "commit":
      return (
        <Card kind={<Tag tone="violet">commit</Tag>}>
          <CommitSummary commit={entry as EntryOf<"commit">} />
        </Card>
      );
    case "task_started":
      return (
        <Card
          testId="task-started"
          kind={<Tag>task</Tag>}
          title={
            <span>
              {d.workflow} · {d.mode} mode · {d.project}
            </span>
          }
          right={<span>started by {who}</span>}
        >
          <ClampedText text={d.prompt} className="text-[13px] leading-relaxed text-zinc-800 dark:text-zinc-200" />
        </Card>
      );
    case "state_changed":
      return (
        <Line testId="state-change">
          <span className="text-xs tracking-wide uppercase">state</span>
          <StateBadge state={d.from} />
          <span aria-hidden>→</span>
          <StateBadge state={d.to} />
          {d.reason ? <span className="text-zinc-500 dark:text-zinc-400">{d.reason}</span> : null}
        </Line>
      );
    case "iteration":
      return (
        <p className="flex items-center gap-2 text-xs font-semibold text-zinc-700 dark:text-zinc-200">
          Iteration {d.iteration}
          <span className="font-normal text-zinc-500 dark:text-zinc-400">{d.reason}</span>
        </p>
      );
    case "operator_message":
      return (
        <div data-testid="operator-message" className="flex gap-2.5">
          <RoleAvatar role="operator" label={who} />
          <div className="min-w-0 flex-1">
            <div className="flex items-center gap-2 text-xs">
              <span className="font-semibold text-zinc-800 dark:text-zinc-200">{who}</span>
              <Tag>follow-up</Tag>
            </div>
            <div className="mt-1 rounded-lg rounded-tl-sm border border-zinc-200 bg-white px-3 py-2 text-[13px] leading-relaxed text-zinc-800 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-200">
              <ClampedText text={d.text} />
            </div>
          </div>
        </div>
      );
    case "system_reply":
      return (
        <Line tone="normal" testId="system-reply">
          <Tag>system</Tag>
          <span>{d.text}</span>
        </Line>
      );
    case "confirmed":
      return (
        <Line tone="good" testId="confirmed">
          <span aria-hidden>✓</span>
          <span>
            Proposal confirmed by <b>{who}</b> <span className="text-zinc-500 dark:text-zinc-400">via {d.via}</span>
          </span>
        </Line>
      );
    case "cancel_requested":
      return (
        <Line tone="warn">
          <span>
            Cancel requested by <b>{who}</b>: {d.reason}
          </span>
        </Line>
      );
    case "step_failed":
      return (
        <div data-testid="step-failed" className="space-y-0.5">
          {entry.failure ? <FailureLine failure={entry.failure} /> : null}
          <p className="pl-0.5 text-xs text-zinc-500 dark:text-zinc-400">
            step failed on attempt {d.attempt}
            {d.retryAt ? ` — retrying at ${timeOfDay(d.retryAt)} UTC` : " — not retried"}
          </p>
        </div>
      );
    case "step_cancelled":
      return <Line tone="warn">Running step cancelled</Line>;
    case "execution_rejected":
      return (
        <Card accent="rose" kind={<Tag tone="rose">rejected</Tag>} title="Execution rejected">
          {entry.failure ? <FailureLine failure={entry.failure} /> : null}
          <ul className="list-disc space-y-0.5 pl-5 text-xs text-zinc-700 dark:text-zinc-300">
            {d.reasons.map((r, i) => (
              <li key={i}>{r}</li>
            ))}
          </ul>
        </Card>
      );
    case "finalized":
      return <FinalizedCard entry={entry as EntryOf<"finalized">} />;
    case "forked":
      return (
        <Line tone="normal">
          <Tag tone="violet">fork</Tag>
          <span>
            Forked from{" "}
            <AppLink href={`/sessions/${d.parentId}`} className="font-mono text-violet-700 hover:underline dark:text-violet-300">
              {d.parentId}
            </AppLink>{" "}
            at event {d.atVersion} ({d.reason}) by {who}
          </span>
        </Line>
      );
    case "agent_streamed":
      return <Line>streamed {d.text.length} characters</Line>;
    case "pipeline":
      return (
        <Line tone={d.alert ? "warn" : "normal"} testId="pipeline-entry">
          <Tag>
            {d.type === "CritiqueRecorded"
              ? "critique"
              : d.type === "FeedbackGiven" || d.type === "ArtifactEdited" || d.type === "GatePassed" || d.type === "PersonChose"
                ? who
                : "forge"}
          </Tag>
          <span className="min-w-0 break-words" title={entry.summary}>
            {entry.summary}
          </span>
        </Line>
      );
    default:
      return (
        <Line>
          <span className="truncate" title={entry.summary}>
            {entry.summary}
          </span>
        </Line>
      );
  }
}

function FinalizedCard({ entry }: { entry: EntryOf<"finalized"> }) {
  const d = entry.detail;
  const good = SUCCESS_OUTCOMES.includes(d.outcome);
  const explanation = entry.failure ? (
    <FailureLine failure={entry.failure} />
  ) : d.reason ? (
    <p className="text-xs text-zinc-600 dark:text-zinc-300">{d.reason}</p>
  ) : null;
  return (
    <Card
      testId="finalized"
      accent={good ? "emerald" : entry.failure ? "rose" : "amber"}
      kind={<Tag tone={good ? "emerald" : entry.failure ? "rose" : "amber"}>finished</Tag>}
      title={<StateBadge state={d.outcome} />}
      right={
        <span>
          after {d.iterations} iteration{d.iterations === 1 ? "" : "s"}
        </span>
      }
    >
      {explanation || d.unresolved.length ? (
        <>
          {explanation}
          {d.unresolved.length ? (
            <div>
              <p className="text-xs font-medium tracking-wide text-zinc-500 uppercase dark:text-zinc-400">Unresolved</p>
              <ul className="mt-1 list-disc space-y-0.5 pl-5 text-xs text-zinc-700 dark:text-zinc-300">
                {d.unresolved.map((u, i) => (
                  <li key={i} title={u}>
                    <span className="line-clamp-3 break-words">{u}</span>
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </>
      ) : null}
    </Card>
  );
}
