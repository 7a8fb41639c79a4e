// voting (req C5): the voters answer the same question in parallel, none seeing another's
// answer; each ballot is strict JSON ({ choice, rationale, confidence }) checked by zod. When
// every voter answered, or the timeout passed, the ballots are tallied:
//   - a choice's weight is the sum of its voters' weights (default 1);
//   - with test evidence (a choice that is a code change whose tests passed), only choices
//     with passing tests can win: passing tests outrank votes;
//   - fewer valid ballots than the quorum: no winner (`no_quorum`), said as such;
//   - ties break, in this order: the larger weight, more ballots, the larger summed
//     confidence, then the choice's name in code-point order — the same ballots always give
//     the same winner, on every replay and in whatever order they came: weights and
//     confidences are added as whole millionths (order.ts), so a sum does not depend on the
//     order of its terms as a floating-point sum does (0.1 + 0.2 + 0.3 is not 0.6).
import { z } from "zod";
import { byCodePoint, fromMillionths, toMillionths } from "./order";
import type { CollaborationMode, ConversationAgent, ModeContext, ModeDecision, ModeNote, ModeState } from "./types";

export const ZVotingConfig = z.strictObject({
  /** Voters' ids (default: every agent of the conversation). */
  voters: z.array(z.string().min(1)).min(1).optional(),
  /** Weights by voter id, over the agents' own (default 1). */
  weights: z.record(z.string(), z.number().positive().max(100)).default({}),
  /** Valid ballots needed for a winner. */
  quorum: z.number().int().min(1).default(1),
  /** How long a round waits for its ballots before it is tallied with those in. */
  timeoutMs: z.number().int().min(1_000).max(3_600_000).default(120_000),
});
export type VotingConfig = z.infer<typeof ZVotingConfig>;

export const ZBallot = z.strictObject({
  choice: z.string().trim().min(1).max(200),
  rationale: z.string().trim().min(1).max(4000),
  confidence: z.number().min(0).max(1),
});
export type Ballot = z.infer<typeof ZBallot>;

const BALLOT_FORMAT =
  'Answer on your own (you will not see the others\' answers). Reply with JSON only: {"choice": string, "rationale": string, "confidence": number from 0 to 1}.';

/** A vote's own state: the round, whether it is open, its question, the valid ballots by voter and the voters whose ballot was rejected. */
export interface VotingState {
  round: number;
  open: boolean;
  question: string;
  ballots: Record<string, Ballot>;
  rejected: string[];
}
/** What a vote keeps (ModeState.custom): empty until its first round, a field not set yet has its default (votingOf). */
export type VotingCustomState = Partial<VotingState>;

function votingOf(state: ModeState<VotingCustomState>): VotingState {
  return { round: 0, open: false, question: "", ballots: {}, rejected: [], ...state.custom };
}

function votersOf(config: VotingConfig, ctx: ModeContext): ConversationAgent[] {
  return config.voters ? ctx.agents.filter((a) => config.voters!.includes(a.id)) : [...ctx.agents];
}

/** A reply's ballot: its JSON (the whole reply, or the first {...} in it) checked by zod. */
export function parseBallot(text: string): { ballot: Ballot } | { errors: string[] } {
  const candidates = [text.trim(), /\{[\s\S]*\}/.exec(text)?.[0]].filter((t): t is string => !!t);
  let lastError = "the reply holds no JSON object";
  for (const candidate of candidates) {
    let raw: unknown;
    try {
      raw = JSON.parse(candidate);
    } catch (err) {
      lastError = `not valid JSON: ${err instanceof Error ? err.message : String(err)}`;
      continue;
    }
    const parsed = ZBallot.safeParse(raw);
    if (parsed.success) return { ballot: parsed.data };
    return { errors: parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`) };
  }
  return { errors: [lastError] };
}

/** The tally of a round's ballots (pure; `evidence`: choice → its tests passed). */
export function tally(
  round: number,
  ballots: Record<string, Ballot>,
  weightOf: (voter: string) => number,
  quorum: number,
  voters: string[],
  evidence: Record<string, boolean> = {},
): Extract<ModeNote, { kind: "tallied" }> {
  // Summed in whole millionths: exact, so the same in any order.
  const byChoice = new Map<string, { choice: string; weight: number; ballots: number; confidence: number; testsPassed: boolean | null }>();
  for (const [voter, ballot] of Object.entries(ballots)) {
    const t = byChoice.get(ballot.choice) ?? {
      choice: ballot.choice,
      weight: 0,
      ballots: 0,
      confidence: 0,
      testsPassed: evidence[ballot.choice] ?? null,
    };
    t.weight += toMillionths(weightOf(voter));
    t.ballots += 1;
    t.confidence += toMillionths(ballot.confidence);
    byChoice.set(ballot.choice, t);
  }
  const totals = [...byChoice.values()]
    .sort((a, b) => b.weight - a.weight || b.ballots - a.ballots || b.confidence - a.confidence || byCodePoint(a.choice, b.choice))
    .map((t) => ({ ...t, weight: fromMillionths(t.weight), confidence: fromMillionths(t.confidence) }));
  const absent = voters.filter((v) => !ballots[v]);
  const valid = Object.keys(ballots).length;
  if (valid < quorum) {
    return {
      kind: "tallied",
      round,
      outcome: "no_quorum",
      winner: null,
      totals,
      absent,
      reason: `${valid} valid ballot(s), the quorum is ${quorum}`,
    };
  }
  const tested = totals.filter((t) => t.testsPassed === true);
  const eligible = tested.length ? tested : totals;
  const winner = eligible[0]!;
  const runnerUp = eligible[1];
  const why = tested.length
    ? `the choice whose tests passed with the most weight (${winner.weight})`
    : !runnerUp || runnerUp.weight < winner.weight
      ? `the most weight (${winner.weight})`
      : runnerUp.ballots < winner.ballots
        ? `a tie on weight, broken by more ballots (${winner.ballots})`
        : runnerUp.confidence < winner.confidence
          ? `a tie on weight and ballots, broken by the summed confidence (${winner.confidence.toFixed(2)})`
          : "a full tie, broken by the choice's name";
  return { kind: "tallied", round, outcome: "winner", winner: winner.choice, totals, absent, reason: why };
}

function close(
  state: ModeState<VotingCustomState>,
  voting: VotingState,
  config: VotingConfig,
  ctx: ModeContext,
): ModeDecision<VotingCustomState> {
  const voters = votersOf(config, ctx);
  const weightOf = (id: string) => config.weights[id] ?? voters.find((v) => v.id === id)?.weight ?? 1;
  const note = tally(
    voting.round,
    voting.ballots,
    weightOf,
    config.quorum,
    voters.map((v) => v.id),
    { ...ctx.evidence },
  );
  return {
    state: { ...state, currentStep: null, custom: { ...voting, open: false } },
    calls: [],
    notes: [note],
  };
}

export const voting: CollaborationMode<VotingConfig, VotingCustomState, "voting"> = {
  name: "voting",
  description: "Voting: the voters answer in parallel without seeing each other; strict JSON ballots, weights, a quorum, a timeout.",
  config: ZVotingConfig,
  validate(config, ctx) {
    const problems: string[] = [];
    for (const id of config.voters ?? []) if (!ctx.agents.some((a) => a.id === id)) problems.push(`voters: no agent "${id}"`);
    for (const id of Object.keys(config.weights)) if (!ctx.agents.some((a) => a.id === id)) problems.push(`weights: no agent "${id}"`);
    const voters = config.voters?.length ?? ctx.agents.length;
    if (config.quorum > voters) problems.push(`quorum: ${config.quorum} ballots can never come from ${voters} voter(s)`);
    return problems;
  },
  initialize: () => ({ currentStep: null, stepHistory: [], custom: {} }),
  onUserMessage(state, config, message, ctx) {
    const previous = votingOf(state);
    // While a round is open, a message is part of the conversation, not a new question:
    // the round closes when every voter answered or at its timeout.
    if (previous.open) return { state, calls: [], notes: [] };
    const round = previous.round + 1;
    const voters = votersOf(config, ctx);
    const next: VotingState = { round, open: true, question: message.text, ballots: {}, rejected: [] };
    return {
      state: { currentStep: `round-${round}`, stepHistory: [...state.stepHistory, `round-${round}`], custom: { ...next } },
      // Each voter sees the question only: no ballot of another.
      calls: voters.map((v) => ({ agent: v.id, prompt: `${message.text}\n\n${BALLOT_FORMAT}`, caller: "person", metadata: { round } })),
      notes: [],
      deadline: { token: `round-${round}`, afterMs: config.timeoutMs },
    };
  },
  onAgentResponse(state, config, reply, ctx) {
    const current = votingOf(state);
    // A ballot after its round closed (a late voter) changes nothing.
    if (!current.open || current.ballots[reply.agent] || current.rejected.includes(reply.agent)) return { state, calls: [], notes: [] };
    const parsed = parseBallot(reply.text);
    const next: VotingState =
      "ballot" in parsed
        ? { ...current, ballots: { ...current.ballots, [reply.agent]: parsed.ballot } }
        : { ...current, rejected: [...current.rejected, reply.agent] };
    const notes: ModeNote[] = "errors" in parsed ? [{ kind: "ballot_rejected", agent: reply.agent, errors: parsed.errors }] : [];
    const answered = Object.keys(next.ballots).length + next.rejected.length;
    const updated = { ...state, custom: { ...next } };
    if (answered < votersOf(config, ctx).length) return { state: updated, calls: [], notes };
    const closed = close(updated, next, config, ctx);
    return { ...closed, notes: [...notes, ...closed.notes] };
  },
  onTimeout(state, config, ctx) {
    const current = votingOf(state);
    if (!current.open) return { state, calls: [], notes: [] };
    return close(state, current, config, ctx);
  },
};
