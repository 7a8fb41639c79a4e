// A bake-off side by side (docs/bake-off.md, "The comparison page"): each contender's figures
// (./figures.ts, the lines changed read from git), which one the judge recommended and which
// one was chosen, and the pairs to open in the compare view. `followBakeOff` keeps it live:
// the web process's one LISTEN connection wakes it on any append to the parent or to a
// contender (server/sessions/view/listener.ts), and the comparison is read again.
import { z } from "zod";
import { SUCCESS_OUTCOMES } from "../../lib/outcomes";
import type { PricingSettings } from "../config/schemas";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import type { SessionEventsListener } from "../sessions/view/listener";
import { wakeSignal } from "../sessions/view/follow";
import { bakeOffOf, contenderOf, type BakeOff } from "./bake-off-events";
import { loadSessionFigures, readSessionEvents, type FiguresDeps, type SessionFigures } from "./figures";

export const ZBakeOffRef = z.object({ sessionId: z.string().min(1).max(100) });

export interface ContenderColumn {
  id: string;
  label: string;
  sessionId: string;
  coder: string;
  model: string | null;
  figures: SessionFigures;
  /** Its place in the judge's ranking (1 = recommended), null when not judged or not ranked. */
  rank: number | null;
  recommended: boolean;
  chosen: boolean;
  /** Whether a pick of it would be taken now (server/bake-off/pick.ts: an approved one; none approved, any that ended). */
  pickable: boolean;
}

export interface BakeOffComparison {
  parentSessionId: string;
  title: string;
  prompt: string | null;
  forkedAt: string;
  currency: string;
  contenders: ContenderColumn[];
  judged: BakeOff["judged"];
  judging: BakeOff["judging"];
  judgeFailed: BakeOff["judgeFailed"];
  chosen: BakeOff["chosen"];
  dismissed: BakeOff["dismissed"];
  /** Every pair of contenders, for the compare view (`/sessions/<a>/compare?with=<b>`). */
  pairs: Array<{ a: string; b: string }>;
  /** Some contender is still at work. */
  running: boolean;
}

/** `sessionId`'s part in a bake-off, read cheaply (no figures): its parent, and its contender id when it is one. */
export async function bakeOffRole(
  db: Queryable,
  sessionId: string,
): Promise<{ parentSessionId: string; contenderId: string | null; contenders: number } | null> {
  const contender = await contenderOf(db, sessionId);
  const bakeOff = await bakeOffOf(db, contender?.parentSessionId ?? sessionId);
  if (!bakeOff) return null;
  return { parentSessionId: bakeOff.parentSessionId, contenderId: contender?.contenderId ?? null, contenders: bakeOff.contenders.length };
}

/** The bake-off `sessionId` belongs to (its parent, or one of its contenders), side by side. */
export async function bakeOffComparison(deps: FiguresDeps, sessionId: string, pricing: PricingSettings): Promise<BakeOffComparison> {
  const parentId = (await contenderOf(deps.pool, sessionId))?.parentSessionId ?? sessionId;
  const bakeOff = await bakeOffOf(deps.pool, parentId);
  if (!bakeOff) {
    const exists = (await readSessionEvents(deps, sessionId)).length > 0;
    throw new AppError("NOT_FOUND", exists ? `session ${sessionId} is not part of a bake-off` : `no session ${sessionId}`);
  }
  const parentEvents = await readSessionEvents(deps, parentId);
  const created = parentEvents.find((e) => e.type === "SessionCreated")?.data as { title?: string } | undefined;
  const started = parentEvents.find((e) => e.type === "TaskStarted")?.data as { prompt?: string } | undefined;
  const ranking = bakeOff.judged?.recommendation.ranking ?? [];
  const nowMs = Date.now();
  const contenders = await Promise.all(
    bakeOff.contenders.map(async (entry): Promise<ContenderColumn> => {
      const figures = await loadSessionFigures(deps, entry.sessionId, { pricing, contender: entry, withDiff: true, nowMs });
      const rank = ranking.indexOf(entry.id);
      return {
        id: entry.id,
        label: entry.label ?? `${entry.coder}${entry.model ? ` (${entry.model})` : ""}`,
        sessionId: entry.sessionId,
        coder: entry.coder,
        model: figures.coder.model,
        figures,
        rank: rank >= 0 ? rank + 1 : null,
        recommended: bakeOff.judged?.recommendation.winner === entry.id,
        chosen: bakeOff.chosen?.sessionId === entry.sessionId || bakeOff.chosen?.contenderId === entry.id,
        pickable: false,
      };
    }),
  );
  // Who may win, as the pick decides it: the approved ones; when none was, any that ended on its own.
  const approved = contenders.filter((c) => SUCCESS_OUTCOMES.includes(c.figures.ownOutcome ?? ""));
  const open = !bakeOff.chosen && !bakeOff.dismissed;
  for (const c of approved.length ? approved : contenders.filter((c) => c.figures.ownOutcome !== null)) c.pickable = open;
  const pairs = contenders.flatMap((a, i) => contenders.slice(i + 1).map((b) => ({ a: a.sessionId, b: b.sessionId })));
  return {
    parentSessionId: parentId,
    title: created?.title ?? parentId,
    prompt: started?.prompt ?? null,
    forkedAt: bakeOff.forkedAt,
    currency: pricing.currency,
    contenders,
    judged: bakeOff.judged,
    judging: bakeOff.judging,
    judgeFailed: bakeOff.judgeFailed,
    chosen: bakeOff.chosen,
    dismissed: bakeOff.dismissed,
    pairs,
    running: contenders.some((c) => c.figures.status !== "finished"),
  };
}

/** The comparison at once, then again after every append to the parent or a contender, until `signal` aborts. */
export async function* followBakeOff(
  deps: FiguresDeps,
  listener: SessionEventsListener,
  sessionId: string,
  pricing: () => PricingSettings,
  signal: AbortSignal | undefined,
): AsyncGenerator<BakeOffComparison> {
  let comparison = await bakeOffComparison(deps, sessionId, pricing());
  const wake = wakeSignal();
  const streams = [comparison.parentSessionId, ...comparison.contenders.map((c) => c.sessionId)];
  const unsubscribe = await Promise.all(streams.map((id) => listener.subscribe(id, wake.wake)));
  try {
    // Read again once subscribed: nothing appended in between is missed.
    comparison = await bakeOffComparison(deps, sessionId, pricing());
    yield comparison;
    while (!signal?.aborted) {
      await wake.wait(signal);
      if (signal?.aborted) break;
      yield await bakeOffComparison(deps, sessionId, pricing());
    }
  } finally {
    unsubscribe.forEach((u) => u());
  }
}
