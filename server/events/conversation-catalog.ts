// The events of a conversation (req C1–C8): what people and agents said, what the mode in
// force decided, and what the loop guard and termination stopped. The conversation decider
// (server/modes/conversation.ts) emits these shapes; the catalog checks them at append.
import { z } from "zod";
import { ZAgentSnapshot } from "./step-contract";
import { defineEvent } from "./registry";

const ZAgentId = z.string().min(1).max(100);

export const ZConversationAgent = z.object({
  id: ZAgentId,
  name: z.string().min(1).max(200),
  skills: z.array(z.string().min(1).max(100)).max(50),
  weight: z.number().positive().max(100).optional(),
});

const ZCandidate = z.object({ agent: ZAgentId, score: z.number(), matched: z.array(z.string()) });
const ZTotal = z.object({
  choice: z.string(),
  weight: z.number(),
  ballots: z.number().int(),
  confidence: z.number(),
  testsPassed: z.boolean().nullable(),
});

export const ZModeNote = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("mention_unknown"), names: z.array(z.string()) }),
  z.object({ kind: z.literal("routed"), candidates: z.array(ZCandidate), chosen: z.array(ZAgentId), reason: z.string() }),
  z.object({ kind: z.literal("ballot_rejected"), agent: ZAgentId, errors: z.array(z.string()) }),
  z.object({
    kind: z.literal("tallied"),
    round: z.number().int(),
    outcome: z.enum(["winner", "no_quorum"]),
    winner: z.string().nullable(),
    totals: z.array(ZTotal),
    absent: z.array(ZAgentId),
    reason: z.string(),
  }),
  z.object({ kind: z.literal("step"), step: z.string(), agent: ZAgentId, visit: z.number().int(), attempt: z.number().int() }),
  z.object({ kind: z.literal("sop_completed"), steps: z.array(z.string()) }),
  z.object({ kind: z.literal("needs_person"), reason: z.string() }),
]);

function noteSummary(note: z.infer<typeof ZModeNote>): string {
  switch (note.kind) {
    case "mention_unknown":
      return `Unknown agents mentioned: ${note.names.map((n) => `@${n}`).join(", ")}`;
    case "routed":
      return note.chosen.length ? `Routed to ${note.chosen.join(", ")}: ${note.reason}` : `Not routed: ${note.reason}`;
    case "ballot_rejected":
      return `Ballot of ${note.agent} rejected: ${note.errors.join("; ")}`;
    case "tallied":
      return note.winner ? `Vote ${note.round}: ${note.winner} wins (${note.reason})` : `Vote ${note.round}: no winner (${note.reason})`;
    case "step":
      return `SOP step ${note.step} → ${note.agent} (visit ${note.visit}, attempt ${note.attempt})`;
    case "sop_completed":
      return `SOP completed: ${note.steps.join(" → ")}`;
    case "needs_person":
      return `A person is needed: ${note.reason}`;
  }
}

const ZCallId = z.uuid();

export const conversationCatalog = {
  ConversationStarted: defineEvent({
    version: 1,
    schema: z.object({
      mode: z.string().min(1),
      // Checked by the mode's own schema before it is decided (server/modes/registry.ts).
      config: z.unknown(),
      agents: z.array(ZConversationAgent),
      stallAfter: z.number().int().min(1).max(100),
    }),
    summary: (d) => `Conversation started in ${d.mode} with ${d.agents.map((a) => `@${a.id}`).join(", ")}`,
  }),
  /**
   * What the conversation's calls run with, recorded once at its start (the decider never
   * reads it): the project's repository and commit, each agent's configuration as a task
   * records it (secrets by variable name only) and the role it plays, and the step limits.
   */
  ConversationSetup: defineEvent({
    version: 1,
    schema: z.object({
      project: z.object({ id: z.string().min(1), name: z.string(), repoPath: z.string().min(1), baseCommit: z.string().min(1) }),
      runtimes: z.record(ZAgentId, z.object({ role: z.string().min(1), config: ZAgentSnapshot })),
      limits: z.object({ stepTimeoutMs: z.number().int().positive(), maxAttempts: z.number().int().positive() }),
    }),
    summary: (d) => `Agents of ${d.project.id} at ${d.project.baseCommit.slice(0, 12)}: ${Object.keys(d.runtimes).join(", ")}`,
  }),
  MessagePosted: defineEvent({
    version: 1,
    schema: z.object({ by: z.string().min(1), text: z.string().min(1).max(20_000), mentions: z.array(ZAgentId) }),
    summary: (d) => `${d.by}: ${d.text}`,
  }),
  AgentCallScheduled: defineEvent({
    version: 1,
    schema: z.object({
      callId: ZCallId,
      agent: ZAgentId,
      prompt: z.string(),
      /** The first characters of `prompt` that stay the same across the conversation's calls: sent before the thread. */
      promptStableChars: z.number().int().nonnegative().optional(),
      caller: z.string().min(1),
      chain: z.array(ZAgentId).min(1),
      /** A fork's call made again in place of the parent's call in flight at the fork's position. */
      reissues: ZCallId.optional(),
    }),
    summary: (d) => `@${d.agent} called by ${d.caller === "person" ? "a person" : `@${d.caller}`}`,
  }),
  AgentReplied: defineEvent({
    version: 1,
    schema: z.object({ callId: ZCallId, agent: ZAgentId, text: z.string(), mentions: z.array(ZAgentId) }),
    summary: (d) => `@${d.agent}: ${d.text}`,
  }),
  AgentCallFailed: defineEvent({
    version: 1,
    schema: z.object({ callId: ZCallId, agent: ZAgentId, errorClass: z.string(), message: z.string() }),
    summary: (d) => `@${d.agent} could not answer (${d.errorClass}): ${d.message}`,
  }),
  ReplyDiscarded: defineEvent({
    version: 1,
    schema: z.object({
      callId: z.string().min(1),
      agent: ZAgentId.nullable(),
      errorClass: z.enum(["late", "unknown_call", "output_too_large"]),
      reason: z.string(),
    }),
    summary: (d) => `Reply${d.agent ? ` of @${d.agent}` : ""} discarded (${d.errorClass}): ${d.reason}`,
  }),
  /**
   * A person's `/task <prompt>` (req W13): the command as they posted it and the task session it
   * started (in the same transaction). Not a message to the agents: no mode hears it.
   */
  TaskStartedFromConversation: defineEvent({
    version: 1,
    schema: z.object({ by: z.string().min(1), text: z.string().min(1).max(20_000), sessionId: z.string().min(1).max(100) }),
    summary: (d) => `${d.by} started task ${d.sessionId}: ${d.text}`,
  }),
  ModeNoted: defineEvent({
    version: 1,
    schema: z.object({ note: ZModeNote }),
    summary: (d) => noteSummary(d.note),
  }),
  ModeDeadlineSet: defineEvent({
    version: 1,
    schema: z.object({ token: z.string().min(1), afterMs: z.number().int().positive() }),
    summary: (d) => `Deadline of ${d.token} in ${Math.round(d.afterMs / 1000)} s`,
  }),
  ModeTimedOut: defineEvent({
    version: 1,
    schema: z.object({ token: z.string().min(1) }),
    summary: (d) => `Deadline of ${d.token} passed`,
  }),
  ProgressNoted: defineEvent({
    version: 1,
    schema: z.object({
      kind: z.enum(["artifact", "test_result", "decision"]),
      detail: z.string().min(1).max(2000),
      /** A test result of a choice that is a code change (voting ranks choices whose tests passed first). */
      choice: z.string().min(1).max(200).optional(),
      passed: z.boolean().optional(),
    }),
    summary: (d) =>
      `Progress (${d.kind}): ${d.detail}${d.choice ? ` — ${d.choice}${d.passed === undefined ? "" : `: tests ${d.passed ? "passed" : "failed"}`}` : ""}`,
  }),
  ModeSwitched: defineEvent({
    version: 1,
    schema: z.object({ from: z.string().min(1), to: z.string().min(1), config: z.unknown(), by: z.string().min(1) }),
    summary: (d) => `Mode ${d.from} → ${d.to} by ${d.by}`,
  }),
  SystemMessage: defineEvent({
    version: 1,
    schema: z.object({ text: z.string().min(1) }),
    summary: (d) => d.text,
  }),
  ConversationStalled: defineEvent({
    version: 1,
    schema: z.object({ reason: z.string(), turns: z.number().int().nonnegative(), cycle: z.array(ZAgentId).nullable() }),
    summary: (d) => `Stalled: ${d.reason} — nobody is called until a person writes`,
  }),
  ConversationTerminated: defineEvent({
    version: 1,
    schema: z.object({
      reason: z.string().min(1).max(500),
      by: z.string().min(1),
      /** The calls no runner had claimed: cancelled with it. */
      cancelled: z.array(ZCallId),
    }),
    summary: (d) => `Terminated by ${d.by}: ${d.reason}`,
  }),
} as const;

/** The events a conversation's decider records (its setup aside: the runners' part). */
export const CONVERSATION_EVENT_TYPES: readonly string[] = Object.keys(conversationCatalog).filter((t) => t !== "ConversationSetup");
