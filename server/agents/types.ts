// The agent interface every shell (claude, codex, gemini, command) and brain (HTTP models,
// scripted) implements. The runner calls `invoke`; failures are AgentErrors classified by
// the error taxonomy, so a network drop is never mistaken for bad output.
import type { ErrorClass } from "../events/catalog";

export const AGENT_ROLES = ["coder", "reviewer", "tester", "planner", "executor"] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];

export interface ThreadMessage {
  from: "operator" | "system" | AgentRole;
  text: string;
}

export interface AgentRequest {
  role: AgentRole;
  /** The full instruction for this turn. */
  prompt: string;
  /** Earlier messages of the session's thread, oldest first. */
  context: ThreadMessage[];
  /** Absolute path of the session's workspace (a git worktree); cwd for processes. */
  workspace: string;
  /** How many times this role was invoked earlier in this session, counting failed attempts. */
  invocation: number;
  /** Aborted on cancel, lost lease, timeout or runner shutdown: stop at once. */
  signal: AbortSignal;
  /** Epoch milliseconds by which the agent must have answered. */
  deadline: number;
  /** Streamed output as it arrives (for live views); the final text is still returned whole. */
  onChunk?: (text: string) => void;
  /**
   * For HTTP brains: where they wait for their turn under the rate limit shared by all
   * runners (req R5). Without it a brain calls at once. Other agents ignore it.
   */
  callGate?: BrainCallGate;
}

/** One brain's place in the shared call schedule: its id and endpoint, and its spacing. */
export interface BrainTurnRequest {
  brainId: string;
  baseUrl: string;
  minIntervalMs: number;
}

export interface BrainTurn {
  /**
   * The call is under way (the provider answered) or failed before it could start; the
   * next turn comes `minIntervalMs` from now, or `notBeforeMs` if the provider asked for more.
   * Idempotent; never rejects. Await it before the process may exit.
   */
  release(options?: { notBeforeMs?: number }): Promise<void>;
}

export interface BrainCallGate {
  /** Resolves once this brain may be called; rejects when `signal` aborts first. */
  waitTurn(brain: BrainTurnRequest, signal: AbortSignal): Promise<BrainTurn>;
}

export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface AgentResponse {
  text: string;
  usage?: AgentUsage;
}

/** Raw output beyond this is an error (tool_error), never stored whole in an event. */
export const MAX_AGENT_OUTPUT_BYTES = 1024 * 1024;

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

export interface Agent {
  readonly id: string;
  /** scripted, command, claude, codex, gemini, openai, anthropic. */
  readonly kind: string;
  /** True for the scripted brain: the UI labels its output as simulated. */
  readonly simulated: boolean;
  invoke(request: AgentRequest): Promise<AgentResponse>;
}
