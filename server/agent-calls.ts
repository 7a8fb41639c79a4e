// What every agent call ends in, whichever adapter makes it (a CLI shell, a command, an HTTP
// brain, the scripted brain): an AgentResponse, or an AgentError classified by the failure
// taxonomy (req W10), so a network drop is never mistaken for bad output. Declared below
// agents/ and brains/ because both produce them: agents/ builds on brains/ (its HTTP
// clients), and brains/ imports nothing from agents/. The roles agents play and the thread they
// are shown live here too: step inputs and events (server/events) record them.
import { z } from "zod";
import type { ErrorClass } from "./errors";

export const AGENT_ROLES = ["coder", "reviewer", "tester", "planner", "executor"] as const;
export const ZAgentRole = z.enum(AGENT_ROLES);
export type AgentRole = z.infer<typeof ZAgentRole>;

/** One message of a session's thread, as agents are shown it (and as step inputs record it). */
export const ZThreadMessage = z.object({
  from: z.union([z.enum(["operator", "system"]), ZAgentRole]),
  text: z.string(),
});
export type ThreadMessage = z.infer<typeof ZThreadMessage>;

/** Raw output beyond this is an error (tool_error), never stored whole in an event. */
export const MAX_AGENT_OUTPUT_BYTES = 1024 * 1024;

/**
 * Tokens one call used, as the brain or the CLI reported them, and the model they were spent
 * on (the one the agent reported, else the one it was configured with): what costs add up.
 */
export const ZAgentUsage = z.object({
  /** Every input token, those read from or written to the provider's prompt cache included. */
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  /** Of inputTokens, those read from the prompt cache (priced at the cache-read rate); absent: none reported. */
  cachedInputTokens: z.number().nonnegative().optional(),
  /** Of inputTokens, those written to the prompt cache (Anthropic: priced at the cache-write rate); absent: none reported. */
  cacheCreationInputTokens: z.number().nonnegative().optional(),
  model: z.string().min(1).max(200).optional(),
});
export type AgentUsage = z.infer<typeof ZAgentUsage>;

/** The cached-token fields of a usage, each only when it is more than 0 (a usage without them reads as none). */
export function cachedTokenFields(read: number, written: number): Pick<AgentUsage, "cachedInputTokens" | "cacheCreationInputTokens"> {
  return { ...(read > 0 ? { cachedInputTokens: read } : {}), ...(written > 0 ? { cacheCreationInputTokens: written } : {}) };
}

export interface AgentResponse {
  text: string;
  usage?: AgentUsage;
  /** For agents that run a process: whether it ran in the sandbox (bubblewrap). */
  sandboxed?: boolean;
  /** For agent CLIs: how many of their tool calls ran, how many failed, and the last failure. */
  tools?: AgentToolCalls;
  /** For agents with network: the connections the run's egress proxy refused (`host:port`, docs/security.md). */
  egressRefused?: string[];
}

/** An agent CLI said it is retrying a request to its provider (its own retry, within providerRetries). */
export interface ProviderRetryNotice {
  /** 1 for the first retry. */
  retry: number;
  /** The retries it may make (providerRetries), when known. */
  maxRetries: number | null;
  /** How long it waits before retrying, when it says (Claude Code: the provider's Retry-After). */
  delayMs: number | null;
  /** What failed, as the CLI put it (keys redacted). */
  error: string;
}

export interface AgentToolCalls {
  calls: number;
  failed: number;
  lastError?: string;
}

export class AgentError extends Error {
  constructor(
    readonly errorClass: ErrorClass,
    message: string,
    readonly retryable: boolean,
    /** Whatever output arrived before the failure, kept for diagnosis. */
    readonly partialOutput = "",
    /** For rate limits: how long the provider asked us to wait. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "AgentError";
  }
}
