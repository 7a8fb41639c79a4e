// What every agent call ends in, whichever adapter makes it (a CLI shell, a command, an HTTP
// brain, the scripted brain): an AgentResponse, or an AgentError classified by the failure
// taxonomy (req W10), so a network drop is never mistaken for bad output. Declared below
// agents/ and brains/ because both produce them: agents/ builds on brains/ (its HTTP
// clients), and brains/ imports nothing from agents/.
import type { ErrorClass } from "./errors";

/** Raw output beyond this is an error (tool_error), never stored whole in an event. */
export const MAX_AGENT_OUTPUT_BYTES = 1024 * 1024;

export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface AgentResponse {
  text: string;
  usage?: AgentUsage;
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
