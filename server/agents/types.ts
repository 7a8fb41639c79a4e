// The agent interface every shell (claude, codex, gemini, command) and brain (HTTP models,
// scripted) implements. The runner calls `invoke`; failures are AgentErrors classified by
// the error taxonomy, so a network drop is never mistaken for bad output.
import type { Resolve } from "../net/hosts";
import type { AgentResponse, AgentRole, ProviderRetryNotice, ThreadMessage } from "../agent-calls";
import type { BrainCallGate } from "../brains/call";
import type { McpServer } from "./mcp";

export {
  AGENT_ROLES,
  AgentError,
  cachedTokenFields,
  MAX_AGENT_OUTPUT_BYTES,
  ZAgentRole,
  ZThreadMessage,
  type AgentResponse,
  type AgentRole,
  type AgentUsage,
  type ProviderRetryNotice,
  type ThreadMessage,
} from "../agent-calls";

export interface AgentRequest {
  role: AgentRole;
  /** The full instruction for this turn. */
  prompt: string;
  /**
   * The first characters of `prompt` that stay the same across the session's calls (docs/scaling.md,
   * "Prompt economics"): shown before the thread, and marked for the provider's prompt cache by
   * brains that take a marker. Absent: none, the thread comes first.
   */
  promptStableChars?: number;
  /** Earlier messages of the session's thread, oldest first. */
  context: ThreadMessage[];
  /** Absolute path of the session's workspace (a git worktree); cwd for processes. */
  workspace: string;
  /** How many times this role was invoked earlier in this session, counting failed attempts. */
  invocation: number;
  /** What the step must produce (text, build, review_verdict, test_plan, ...): the scripted brain answers by it. */
  output?: string;
  /** The project's command allowlist (the simulated tester plans a command from it). */
  allowlist?: readonly (readonly string[])[];
  /** A staged workflow's step: its stage, the stage's iteration, whether in a modify session (the scripted brain answers by them). */
  stage?: { name: string; iteration: number; modifying?: boolean };
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
  /**
   * Where the agent's process may connect besides its provider and its MCP servers (settings
   * access.agentHosts, read by the runner when the step runs): server/agents/egress.ts.
   * Absent: nowhere else.
   */
  egress?: { hosts: readonly string[]; resolve?: Resolve };
  /**
   * For HTTP brains: the hosts on non-public addresses the call may reach (access.privateHosts
   * in force for the session's project, read when the step runs); absent: none. Other agents ignore it.
   */
  privateHosts?: readonly string[];
  /** Each retry an agent CLI makes of its provider request (the executor records it). */
  onProviderRetry?: (notice: ProviderRetryNotice) => void;
  /** MCP servers the task recorded, for agent CLIs that take them (others ignore them). */
  mcpServers?: readonly McpServer[];
}

export type FileWrites = "workspace" | "reply";

export interface Agent {
  readonly id: string;
  /** scripted, command, claude, codex, gemini, openai, anthropic. */
  readonly kind: string;
  /** True for the scripted brain: the UI labels its output as simulated. */
  readonly simulated: boolean;
  /**
   * How the agent changes files in a step that writes them (a build, a Forge stage's draft):
   * `workspace`, itself, in the worktree (a CLI, a command, the scripted brain); `reply`, as the
   * files named in its one JSON reply, which the runner writes for it (an HTTP brain, which
   * has no hands: server/runner/files-reply.ts, docs/forge.md "Who can act in a stage").
   */
  readonly fileWrites: FileWrites;
  /**
   * Whether the agent is shown the session's thread (request.context): an agent CLI and an HTTP
   * brain are; a command and the scripted brain get the prompt alone, so what the runner would
   * show inside the thread goes into their prompt (docs/scaling.md, "Prompt economics").
   */
  readonly readsThread: boolean;
  invoke(request: AgentRequest): Promise<AgentResponse>;
}
