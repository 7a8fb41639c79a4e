// The anti-loop of the actor-critic loops (req F8, F12), on two signals. Req F8's: the last
// three critic feedbacks more than 80 % alike, or the same issue again. And finding
// identity: each finding keeps a stable id; when the blocking set does not shrink for two
// iterations, or a finding that was closed comes back, a person is asked before the cap —
// which catches an A → B → A oscillation that text similarity misses.
import picomatch from "picomatch";

/** One critique of a stage, as the loop remembers it. */
export interface CritiqueMemory {
  /** Ids of its blocking findings. */
  blocking: string[];
  /** Its summary and findings as text, for the similarity rule. */
  text: string;
}

export interface LoopVerdict {
  /** The critiques of the stage so far, this one included. */
  round: number;
  /** Lowest pairwise similarity of the last three critiques (null with fewer than three). */
  similarity: number | null;
  /** Blocking in the previous critique and again now. */
  persisted: string[];
  /** Blocking before, absent from a later critique, blocking again now. */
  reopened: string[];
  /** The blocking set did not shrink over the last two iterations. */
  stalled: boolean;
  warning: string | null;
  escalate: string | null;
}

export const SIMILARITY_LIMIT = 0.8;
/** The critique at which a person is asked (req F12: a warning at 2, a pause at 3). */
export const ESCALATE_AT = 3;

/** Sørensen–Dice similarity of two texts' character bigrams (case and spacing ignored): 0 to 1. */
export function similarity(a: string, b: string): number {
  const grams = (s: string) => {
    const t = s.toLowerCase().replace(/\s+/g, " ").trim();
    const m = new Map<string, number>();
    for (let i = 0; i < t.length - 1; i++) m.set(t.slice(i, i + 2), (m.get(t.slice(i, i + 2)) ?? 0) + 1);
    return m;
  };
  const x = grams(a);
  const y = grams(b);
  const size = (m: Map<string, number>) => [...m.values()].reduce((s, n) => s + n, 0);
  const total = size(x) + size(y);
  if (total === 0) return a.trim() === b.trim() ? 1 : 0;
  let shared = 0;
  for (const [g, n] of x) shared += Math.min(n, y.get(g) ?? 0);
  return (2 * shared) / total;
}

/** Judges the newest critique (last of `history`, which holds every critique of the stage in order). */
export function judgeLoop(history: readonly CritiqueMemory[]): LoopVerdict {
  const round = history.length;
  const now = history[round - 1];
  if (!now) throw new Error("judgeLoop needs the critique to judge");
  const before = history.slice(0, -1);
  const previous = before[before.length - 1];
  const persisted = previous ? now.blocking.filter((id) => previous.blocking.includes(id)) : [];
  const reopened = now.blocking.filter((id) => {
    const first = before.findIndex((c) => c.blocking.includes(id));
    return first >= 0 && before.slice(first + 1).some((c) => !c.blocking.includes(id));
  });
  const last3 = history.slice(-3);
  const similar =
    last3.length === 3
      ? Math.min(
          similarity(last3[0]!.text, last3[1]!.text),
          similarity(last3[1]!.text, last3[2]!.text),
          similarity(last3[0]!.text, last3[2]!.text),
        )
      : null;
  const stalled =
    last3.length === 3 && last3[1]!.blocking.length >= last3[0]!.blocking.length && last3[2]!.blocking.length >= last3[1]!.blocking.length;
  let escalate: string | null = null;
  if (reopened.length) escalate = `finding${reopened.length > 1 ? "s" : ""} ${reopened.join(", ")} came back after being resolved`;
  else if (round >= ESCALATE_AT && similar !== null && similar > SIMILARITY_LIMIT)
    escalate = `the last three critiques are ${Math.round(similar * 100)} % alike`;
  else if (round >= ESCALATE_AT && persisted.length) escalate = `the same issue again: ${persisted.join(", ")}`;
  else if (round >= ESCALATE_AT && stalled && now.blocking.length > 0) escalate = "the blocking findings did not shrink for two iterations";
  const warning =
    !escalate && round >= 2 && persisted.length
      ? `still unresolved after ${round} critiques: ${persisted.join(", ")}; a person is asked at critique ${ESCALATE_AT}`
      : null;
  return { round, similarity: similar, persisted, reopened, stalled, warning, escalate };
}

/**
 * Gitignore-style path rules for what a stage may write: a path matches when the last
 * pattern that matches it is not negated (`!`). `["**", "!.forge/**", ".forge/code_metadata.json"]`:
 * anything outside .forge/, plus that one file.
 */
export function pathAllowed(path: string, patterns: readonly string[]): boolean {
  let allowed = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith("!");
    if (picomatch(negated ? pattern.slice(1) : pattern, { dot: true })(path)) allowed = !negated;
  }
  return allowed;
}
