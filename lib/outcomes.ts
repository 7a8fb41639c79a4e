// How sessions end, as every side reads it: the outcomes that mean the work was done.

/** review_loop's `approved`, planning's `done`, the Forge pipeline's `completed`. */
export const SUCCESS_OUTCOMES: readonly string[] = ["approved", "done", "completed"];

/** Outcomes that mean the work was interrupted, not judged: such a session may be resumed (req F6). */
export const INTERRUPTED_OUTCOMES: readonly string[] = ["cancelled", "failed", "budget_exhausted"];

/** A Forge session's status (req F10): InProgress until it ends (an interrupted one stays so), then Completed or Failed. */
export function forgeStatusOf(outcome: string | null): "InProgress" | "Completed" | "Failed" {
  return outcome === null ? "InProgress" : outcome === "completed" ? "Completed" : "Failed";
}

/** How a bake-off's contender ends when another was chosen, or none (docs/bake-off.md): after its own outcome. */
export const NOT_CHOSEN = "not_chosen";
