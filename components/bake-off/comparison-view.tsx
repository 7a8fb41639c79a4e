"use client";
// A bake-off's contenders side by side (docs/bake-off.md, "The comparison page"): one card
// per contender — outcome, iterations to approval, blocking findings per round, tests, diff
// size, wall time, tokens and cost — the judge's recommendation, the chosen one marked, the
// pairs to open in the compare view and each replay. Live: `bakeOffView.updates` sends the
// whole comparison again after every append to the parent or a contender.
import { AppLink } from "@/components/app-link";
import { useMutation } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import { StateBadge } from "@/components/state-badge";
import { formatAge } from "@/lib/format-time";
import { formatCost, formatTokens } from "@/lib/usage";
import { useTRPC } from "@/lib/trpc/client";
import type { BakeOffComparison, ContenderColumn } from "@/server/agent-record/comparison";
import { BakeOffActions, type BakeOffActionHandlers } from "./bake-off-actions";

/**
 * The bake-off's commands: `bakeOffs.judge`, `bakeOffs.pick`, `bakeOffs.dismiss`. The tRPC
 * client gives each mutation its intent's idempotency key (lib/trpc/intent-keys.ts): a double
 * click is carried out once. Their effects come back through the live comparison.
 */
function useBakeOffActions(sessionId: string): BakeOffActionHandlers {
  const trpc = useTRPC();
  const judge = useMutation(trpc.bakeOffs.judge.mutationOptions());
  const pick = useMutation(trpc.bakeOffs.pick.mutationOptions());
  const dismiss = useMutation(trpc.bakeOffs.dismiss.mutationOptions());
  return {
    judge: () => judge.mutateAsync({ sessionId }),
    pick: ({ contenderId, reason }) => pick.mutateAsync({ sessionId, contenderId, ...(reason ? { reason } : {}) }),
    dismiss: ({ reason }) => dismiss.mutateAsync({ sessionId, ...(reason ? { reason } : {}) }),
  };
}

const VIEWER = "Viewers read the bake-off: an operator judges, picks and dismisses.";

/** Why the judge cannot be asked now (server/bake-off/judge.ts refuses the same), or null. */
function judgeBlocked(comparison: BakeOffComparison, canOperate: boolean): string | null {
  if (!canOperate) return VIEWER;
  const running = comparison.contenders.filter((c) => c.figures.status !== "finished").map((c) => c.id);
  if (running.length) return `The judge compares ended contenders: ${running.join(", ")} still ${running.length === 1 ? "runs" : "run"}.`;
  if (comparison.judging) return `The judge ${comparison.judging.agentId} is at work.`;
  return null;
}

/** Why this contender cannot be picked now (server/bake-off/pick.ts refuses the same), or null. */
function pickBlocked(comparison: BakeOffComparison, c: ContenderColumn, canOperate: boolean): string | null {
  if (!canOperate) return VIEWER;
  if (c.pickable) return null;
  const approved = comparison.contenders.filter((x) => x.pickable).map((x) => x.id);
  if (approved.length)
    return `Pick one of ${approved.join(", ")}: ${c.figures.ownOutcome ? `${c.id} ended ${c.figures.ownOutcome}` : `${c.id} has not ended`}.`;
  return `${c.id} has not ended: pick once it has.`;
}

const wall = (ms: number | null, running: boolean) => (ms === null ? "–" : `${formatAge(ms)}${running ? " so far" : ""}`);

function Figure({ label, value, testId }: { label: string; value: React.ReactNode; testId: string }) {
  return (
    <div className="flex items-baseline justify-between gap-3 py-1">
      <dt className="text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="text-right font-medium text-zinc-900 tabular-nums dark:text-zinc-100" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

function ContenderCard({
  c,
  currency,
  actions,
  pickBlocked,
  settled,
}: {
  c: ContenderColumn;
  currency: string;
  actions: BakeOffActionHandlers;
  pickBlocked: string | null;
  settled: boolean;
}) {
  const f = c.figures;
  const marked = c.chosen
    ? "border-emerald-500 ring-2 ring-emerald-500/40 dark:border-emerald-500"
    : "border-zinc-200 dark:border-zinc-800";
  return (
    <article
      aria-labelledby={`contender-${c.id}`}
      data-testid="contender-card"
      data-contender={c.id}
      className={`flex flex-col rounded-lg border bg-white shadow-sm dark:bg-zinc-900/60 ${marked}`}
    >
      <header className="space-y-1 border-b border-zinc-200 px-4 py-3 dark:border-zinc-800">
        <div className="flex items-center justify-between gap-2">
          <h2 id={`contender-${c.id}`} className="truncate text-sm font-semibold text-zinc-900 dark:text-zinc-100">
            <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{c.id}</span> {c.label}
          </h2>
          <StateBadge state={f.outcome ?? f.state} />
        </div>
        <p className="truncate text-xs text-zinc-600 dark:text-zinc-400">
          {c.coder}
          {c.model ? ` · ${c.model}` : ""}
        </p>
        <div className="flex flex-wrap gap-1.5 text-xs">
          {c.chosen ? (
            <span
              className="rounded-full bg-emerald-100 px-2 py-0.5 font-medium text-emerald-900 dark:bg-emerald-900/50 dark:text-emerald-100"
              data-testid="chosen-mark"
            >
              Chosen
            </span>
          ) : null}
          {c.recommended ? (
            <span
              className="rounded-full bg-sky-100 px-2 py-0.5 font-medium text-sky-900 dark:bg-sky-900/50 dark:text-sky-100"
              data-testid="recommended-mark"
            >
              Judge’s pick
            </span>
          ) : null}
          {c.rank !== null ? <span className="text-zinc-600 dark:text-zinc-400">ranked #{c.rank}</span> : null}
        </div>
      </header>
      <dl className="flex-1 divide-y divide-zinc-100 px-4 py-2 text-xs dark:divide-zinc-800">
        <Figure
          label="Outcome"
          value={
            f.outcome === null
              ? `running (${f.state})`
              : f.outcome !== f.ownOutcome
                ? `${f.outcome}${f.ownOutcome ? ` (ended ${f.ownOutcome})` : " (stopped)"}`
                : f.outcome
          }
          testId="fig-outcome"
        />
        <Figure
          label="Iterations to approval"
          value={f.iterationsToApproval ?? (f.approved ? "–" : "not approved")}
          testId="fig-iterations"
        />
        <Figure
          label="Blocking findings per round"
          value={f.rounds.length ? f.rounds.map((r) => r.blockingFindings).join(" → ") : "no review yet"}
          testId="fig-blocking"
        />
        <Figure
          label="Tests (last run)"
          value={f.tests ? `${f.tests.passed} passed, ${f.tests.failed} failed` : "not run"}
          testId="fig-tests"
        />
        <Figure
          label="Tests per round"
          value={
            f.rounds.some((r) => r.tests)
              ? f.rounds.map((r) => (r.tests ? `${r.tests.passed}/${r.tests.passed + r.tests.failed}` : "–")).join(" → ")
              : "–"
          }
          testId="fig-tests-rounds"
        />
        <Figure
          label="Diff"
          value={
            f.diff
              ? `+${f.diff.added} −${f.diff.removed} in ${f.diff.files} file${f.diff.files === 1 ? "" : "s"}`
              : f.diffError
                ? `${f.filesTouched.length} file(s) touched`
                : "–"
          }
          testId="fig-diff"
        />
        <Figure label="Wall time" value={wall(f.wall.ms, f.wall.running)} testId="fig-wall" />
        <Figure
          label="Tokens in / out"
          value={`${formatTokens(f.usage.inputTokens)} / ${formatTokens(f.usage.outputTokens)}`}
          testId="fig-tokens"
        />
        <Figure
          label="Cost"
          value={`${formatCost(f.usage.cost, currency)}${f.usage.unpriced.length ? " + unpriced" : ""}`}
          testId="fig-cost"
        />
      </dl>
      <footer className="flex flex-wrap items-center gap-3 border-t border-zinc-200 px-4 py-2 text-xs dark:border-zinc-800">
        <AppLink href={`/sessions/${encodeURIComponent(c.sessionId)}`} className="text-sky-700 underline dark:text-sky-400">
          Session
        </AppLink>
        <AppLink href={`/sessions/${encodeURIComponent(c.sessionId)}/replay`} className="text-sky-700 underline dark:text-sky-400">
          Replay
        </AppLink>
        {!settled ? <BakeOffActions.Pick contender={c} actions={actions} blocked={pickBlocked} /> : null}
      </footer>
    </article>
  );
}

type NamedComparison = BakeOffComparison & { names: Record<string, string> };

export function ComparisonView({ initial, canOperate }: { initial: NamedComparison; canOperate: boolean }) {
  const trpc = useTRPC();
  const [comparison, setComparison] = useState(initial);
  const actions = useBakeOffActions(initial.parentSessionId);
  const subscription = useSubscription(
    trpc.bakeOffView.updates.subscriptionOptions({ sessionId: initial.parentSessionId }, { onData: (data) => setComparison(data) }),
  );
  const byId = new Map(comparison.contenders.map((c) => [c.sessionId, c]));
  const name = (sessionId: string) => byId.get(sessionId)?.id ?? sessionId;
  const settled = comparison.chosen !== null || comparison.dismissed !== null;
  return (
    <div className="space-y-4">
      <p className="text-xs text-zinc-600 dark:text-zinc-400" role="status" data-testid="bake-off-live">
        {subscription.status === "pending"
          ? comparison.running
            ? "Live: the cards update as the contenders work."
            : "Every contender has ended."
          : subscription.status === "error"
            ? "The live connection closed: reload to see the latest figures."
            : "Connecting…"}
      </p>
      {comparison.judged ? (
        <section
          aria-labelledby="judge-heading"
          className="rounded-lg border border-sky-200 bg-sky-50 px-4 py-3 text-sm dark:border-sky-900 dark:bg-sky-950/40"
          data-testid="judge-recommendation"
        >
          <h2 id="judge-heading" className="text-xs font-semibold tracking-wide text-sky-900 uppercase dark:text-sky-200">
            The judge recommends {comparison.judged.recommendation.winner}
          </h2>
          <p className="mt-1 text-xs text-zinc-700 dark:text-zinc-300">
            Ranking {comparison.judged.recommendation.ranking.join(" > ")} · by {comparison.judged.agent}
          </p>
          <ul className="mt-1 list-disc pl-5 text-xs text-zinc-800 dark:text-zinc-200">
            {comparison.judged.recommendation.reasons.map((r, i) => (
              <li key={i}>{r}</li>
            ))}
          </ul>
        </section>
      ) : null}
      {comparison.chosen ? (
        <p className="text-sm text-zinc-800 dark:text-zinc-200" data-testid="chosen-summary">
          <span className="font-semibold">{comparison.chosen.contenderId}</span> was chosen by{" "}
          {comparison.names[comparison.chosen.by] ?? comparison.chosen.by}
          {comparison.chosen.reason ? `: ${comparison.chosen.reason}` : ""}.
        </p>
      ) : comparison.dismissed ? (
        <p className="text-sm text-zinc-800 dark:text-zinc-200" data-testid="dismissed-summary">
          Dismissed with no winner by {comparison.names[comparison.dismissed.by] ?? comparison.dismissed.by}
          {comparison.dismissed.reason ? `: ${comparison.dismissed.reason}` : ""}.
        </p>
      ) : (
        <div className="flex flex-wrap items-start justify-between gap-3">
          <BakeOffActions.Judge actions={actions} judged={comparison.judged !== null} blocked={judgeBlocked(comparison, canOperate)} />
          <BakeOffActions.Dismiss actions={actions} blocked={canOperate ? null : VIEWER} />
        </div>
      )}
      {comparison.judgeFailed && !settled ? (
        <p role="status" className="text-xs text-rose-700 dark:text-rose-400" data-testid="judge-failed">
          The judge failed ({comparison.judgeFailed.errorClass}): {comparison.judgeFailed.message}
          {comparison.judgeFailed.retried ? " — asked again." : ""}
        </p>
      ) : null}
      <div className="grid grid-cols-1 gap-4 md:grid-cols-2 xl:grid-cols-3" data-testid="contenders">
        {comparison.contenders.map((c) => (
          <ContenderCard
            key={c.id}
            c={c}
            currency={comparison.currency}
            actions={actions}
            pickBlocked={pickBlocked(comparison, c, canOperate)}
            settled={settled}
          />
        ))}
      </div>
      <section
        aria-labelledby="pairs-heading"
        className="rounded-lg border border-zinc-200 bg-white px-4 py-3 dark:border-zinc-800 dark:bg-zinc-900/60"
      >
        <h2 id="pairs-heading" className="text-xs font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
          Their code against each other
        </h2>
        <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs">
          {comparison.pairs.map((p) => (
            <li key={`${p.a}-${p.b}`}>
              <AppLink
                href={`/sessions/${encodeURIComponent(p.a)}/compare?with=${encodeURIComponent(p.b)}`}
                className="text-sky-700 underline dark:text-sky-400"
                data-testid="pair-link"
              >
                {name(p.a)} ↔ {name(p.b)}
              </AppLink>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
