// Collaboration modes (req C1–C6, docs/conversations.md): what a mode decides with and what it decides.
// A mode is a pure decider over its own state: given a person's message or an agent's reply,
// the agent calls to make and the notes to record (a routing, a tally, a rejected ballot).
// The conversation around it (./conversation.ts) adds what every mode must obey: the loop
// guard, termination, and no switch while calls are in flight.
import type { z } from "zod";

/** An agent a conversation can call: from the project's configuration. */
export interface ConversationAgent {
  id: string;
  name: string;
  /** Skill tags, for expert routing. */
  skills: string[];
  /** A voter's weight (default 1). */
  weight?: number;
}

export interface ModeContext {
  agents: readonly ConversationAgent[];
  /** Test results noted per choice (a code change): voting ranks choices whose tests passed first. */
  evidence?: Readonly<Record<string, boolean>>;
}

/** One call of an agent a mode decided. */
export interface ModeCall {
  agent: string;
  prompt: string;
  /**
   * The first characters of `prompt` that stay the same from call to call (a SOP's task): sent
   * before the thread, the rest after it (docs/scaling.md, "Prompt economics").
   */
  promptStableChars?: number;
  /** "person" or the agent whose reply made the call. */
  caller: string;
  metadata?: Record<string, unknown>;
}

/** What a mode records besides its calls (each becomes an event of the conversation). */
export type ModeNote =
  | { kind: "mention_unknown"; names: string[] }
  | { kind: "routed"; candidates: Array<{ agent: string; score: number; matched: string[] }>; chosen: string[]; reason: string }
  | { kind: "ballot_rejected"; agent: string; errors: string[] }
  | {
      kind: "tallied";
      round: number;
      outcome: "winner" | "no_quorum";
      winner: string | null;
      totals: Array<{ choice: string; weight: number; ballots: number; confidence: number; testsPassed: boolean | null }>;
      absent: string[];
      reason: string;
    }
  | { kind: "step"; step: string; agent: string; visit: number; attempt: number }
  | { kind: "sop_completed"; steps: string[] }
  | { kind: "needs_person"; reason: string };

/**
 * A mode's state (req C1's mode state): its current step, the steps taken, and its own
 * (`custom`, of type S: each mode declares it). Plain JSON data: it is part of the folded
 * conversation, which is stored as a snapshot.
 */
export interface ModeState<S = unknown> {
  currentStep: string | null;
  stepHistory: string[];
  custom: S;
}

/** The own state of a mode that keeps none. */
export type NoCustomState = Record<string, never>;

export interface ModeDecision<S = unknown> {
  state: ModeState<S>;
  calls: ModeCall[];
  notes: ModeNote[];
  /**
   * A deadline the mode sets (voting's timeout): after `afterMs`, `onTimeout` decides with
   * what has come, unless the mode's current step is no longer `token` by then.
   */
  deadline?: { token: string; afterMs: number };
}

export interface PersonMessage {
  text: string;
  /** Agent ids the message @mentions (resolved: ./mentions.ts). */
  mentions: string[];
}

export interface AgentReply {
  agent: string;
  text: string;
  /** The agents the reply @mentions (resolved). */
  mentions: string[];
}

/**
 * A collaboration mode named N: its config schema (its parsed config is a C), its own state
 * (an S), static checks, and the decisions. A mode is only ever called with its own config
 * and state: the registry (./registry.ts) keeps them together.
 */
export interface CollaborationMode<C, S, N extends string = string> {
  name: N;
  description: string;
  config: z.ZodType<C>;
  // Properties, not methods: their parameters are then checked strictly (a method's are
  // bivariant), so no mode is assignable where another mode's config is expected.
  /** Problems of a config for these agents (unknown agents, unreachable steps…); empty when fine. */
  validate: (config: C, ctx: ModeContext) => string[];
  initialize: (config: C) => ModeState<S>;
  onUserMessage: (state: ModeState<S>, config: C, message: PersonMessage, ctx: ModeContext) => ModeDecision<S>;
  onAgentResponse: (state: ModeState<S>, config: C, reply: AgentReply, ctx: ModeContext) => ModeDecision<S>;
  /** A deadline passed (voting's timeout): what the mode decides with what it has. */
  onTimeout?: (state: ModeState<S>, config: C, ctx: ModeContext) => ModeDecision<S>;
}
