// A bake-off's export (docs/bake-off.md, "Export"): the parent's export holds each contender's
// own export under `contenders/<id>/`, and `bake-off.json`: the contenders with their figures
// (outcome, iterations, tokens, cost, wall time — from their events and the usage projection),
// the judge's recommendation, and the choice with who made it and why.
import { actorLabel, type AppEvent } from "../events/catalog";
import type { RecordedEvent } from "../events/types";
import type { SessionUsage } from "../usage/totals";

type Recorded<T extends AppEvent["type"]> = RecordedEvent & Extract<AppEvent, { type: T }>;

function last<T extends AppEvent["type"]>(events: readonly RecordedEvent[], type: T): Recorded<T> | undefined {
  return events.filter((e): e is Recorded<T> => e.type === type).at(-1);
}

/** The contenders a parent's BakeOffForked names (empty for any other session). */
export function forkedContenders(events: readonly RecordedEvent[]) {
  return last(events, "BakeOffForked")?.data.contenders ?? [];
}

export interface ContenderFigures {
  /** How it ended on its own (approved, max_iterations_reached, …), null while it runs; not_chosen comes after. */
  outcome: string | null;
  /** not_chosen once another was chosen (or none), else its own outcome. */
  finalOutcome: string | null;
  iterations: number;
  tokens: { input: number; output: number };
  cost: number;
  currency: string;
  /** From its fork to its own end (null while it runs). */
  wallMs: number | null;
}

/** One contender's figures, from its own events (those after its fork) and its usage. */
export function contenderFigures(events: readonly RecordedEvent[], usage: SessionUsage): ContenderFigures {
  const forkAt = events.findIndex((e) => e.type === "BakeOffContender");
  const own = forkAt < 0 ? events : events.slice(forkAt);
  const finals = own.filter((e): e is Recorded<"SessionFinalized"> => e.type === "SessionFinalized");
  const notChosen = own.some((e) => e.type === "BakeOffNotChosen");
  const ownEnd = finals.find((f) => f.data.outcome !== "not_chosen") ?? null;
  const started = own[0] ? Date.parse(own[0].recordedAt) : NaN;
  const iterations = own.filter((e): e is Recorded<"IterationStarted"> => e.type === "IterationStarted").at(-1)?.data.iteration ?? 1;
  return {
    outcome: ownEnd?.data.outcome ?? null,
    finalOutcome: finals.at(-1)?.data.outcome ?? (notChosen ? "not_chosen" : null),
    iterations,
    tokens: { input: usage.total.inputTokens, output: usage.total.outputTokens },
    cost: usage.total.cost,
    currency: usage.currency,
    wallMs: ownEnd && Number.isFinite(started) ? Date.parse(ownEnd.recordedAt) - started : null,
  };
}

/** bake-off.json: the contenders and their figures, the judge's recommendation, the choice (who, why). */
export async function bakeOffDocument(
  parentId: string,
  events: readonly RecordedEvent[],
  contender: (sessionId: string) => Promise<{ events: RecordedEvent[]; usage: SessionUsage }>,
) {
  const judged = last(events, "BakeOffJudged");
  const chosen = last(events, "BakeOffWinnerChosen");
  const dismissed = last(events, "BakeOffDismissed");
  const contenders = [];
  for (const c of forkedContenders(events)) {
    const read = await contender(c.sessionId);
    contenders.push({ ...c, figures: contenderFigures(read.events, read.usage) });
  }
  return {
    sessionId: parentId,
    contenders,
    judge: judged ? { agent: judged.data.agent, recommendation: judged.data.recommendation, at: judged.recordedAt } : null,
    choice: chosen
      ? {
          contenderId: chosen.data.contenderId,
          sessionId: chosen.data.sessionId,
          reason: chosen.data.reason,
          by: actorLabel(chosen.metadata.actor),
          at: chosen.recordedAt,
        }
      : null,
    dismissed: dismissed ? { reason: dismissed.data.reason, by: actorLabel(dismissed.metadata.actor), at: dismissed.recordedAt } : null,
  };
}
