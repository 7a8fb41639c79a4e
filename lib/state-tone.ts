// Maps a session state name to a colour family for badges and charts. Workflow states are
// data (users define their own), so the tone is guessed from the name, never enumerated.
// First match wins: "waiting_for_approval" is waiting, not success.
export type StateTone = "active" | "waiting" | "success" | "failure" | "muted" | "neutral";

const RULES: ReadonlyArray<readonly [RegExp, StateTone]> = [
  [/fail|error|reject|crash|broken|invalid|max_iter|exhaust|timed_out|timeout/i, "failure"],
  [/cancel|abort|archiv|stopp|revert|abandon|terminat/i, "muted"],
  [/wait|pend|pause|await|block|queue|hold|input|ready|draft|new|created|stall/i, "waiting"],
  [/complet|done|approv|merg|success|pass|finish|closed|accept/i, "success"],
  [/run|activ|progress|work|execut|implement|plan|review|fix|build|test|round|open/i, "active"],
];

export function stateTone(state: string): StateTone {
  for (const [pattern, tone] of RULES) if (pattern.test(state)) return tone;
  return "neutral";
}

/** Sort order for a state breakdown: work in flight first, finished last. */
export const TONE_ORDER: readonly StateTone[] = ["active", "waiting", "failure", "neutral", "success", "muted"];
