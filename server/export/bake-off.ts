// A bake-off's export (docs/bake-off.md, "Export"): the parent's export holds each contender's
// own export under `contenders/<id>-<session>/`, and `bake-off.json`: the contenders with their
// figures, the judge's recommendation, the choice with who made it and why, or the dismissal.
// The figures are the comparison's (server/agent-record/comparison.ts, one computation): the
// comparison page, the agent record and the export say the same.
import type { PricingSettings } from "../config/schemas";
import { bakeOffComparison } from "../agent-record/comparison";
import type { FiguresDeps, SessionFigures } from "../agent-record/figures";
import type { AppEventOf } from "../events/catalog";
import type { RecordedEvent } from "../events/types";

/** The contenders a parent's BakeOffForked names (empty for any other session). */
export function forkedContenders(events: readonly RecordedEvent[]) {
  type Forked = RecordedEvent & AppEventOf<"BakeOffForked">;
  return events.filter((e): e is Forked => e.type === "BakeOffForked").at(-1)?.data.contenders ?? [];
}

/** bake-off.json: the contenders and their figures, the judge's recommendation, the choice (who, why) or the dismissal. */
export async function bakeOffDocument(
  deps: FiguresDeps,
  parentId: string,
  pricing: PricingSettings,
  options: { audience?: "viewer" | "member" } = {},
) {
  const comparison = await bakeOffComparison(deps, parentId, pricing);
  // git's message may name the repository's path, which a viewer's export leaves out.
  const shown = (f: SessionFigures): SessionFigures =>
    options.audience === "viewer" && f.diffError ? { ...f, diffError: "git cannot tell" } : f;
  return {
    sessionId: parentId,
    currency: comparison.currency,
    contenders: comparison.contenders.map((c) => ({
      id: c.id,
      sessionId: c.sessionId,
      coder: c.coder,
      model: c.model,
      label: c.label,
      rank: c.rank,
      chosen: c.chosen,
      figures: shown(c.figures),
    })),
    judge: comparison.judged,
    choice: comparison.chosen,
    dismissed: comparison.dismissed,
  };
}
