// What runners do with a conversation's steps: a call (`conversation_call`) invokes the agent
// with its prompt and the thread so far, in the conversation's worktree (the project at the
// commit the conversation started from), and hands back its reply as a blob; a timer
// (`conversation_timer`) is due when a mode's deadline passes and only says so. What the
// conversation makes of either is decided in the result's transaction (./reactor.ts); both are
// registered as step kinds in ./step-kinds.ts.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ZAgentRole, ZAgentUsage, ZThreadMessage } from "../agent-calls";
import { createAgent, invokeAgent, usageOf, ZAgentConfig, type AgentConfig } from "../agents";
import { AgentError } from "../agents/types";
import { databaseCallGate } from "../brains/rate-limit";
import type { Db } from "../db/pool";
import { putBlob, ZBlobRef } from "../events/blobs";
import { ZAgentSnapshot } from "../events/step-contract";
import { recordableOutput } from "../process/env";
import { checkedAgentAccess } from "../runner/agent-access";
import type { ClaimedStep } from "../runner/dispatch";
import { StepExecutionError, type StepContext } from "../runner/executors";
import { withWorktreeLock } from "../runner/repo-lock";
import { recordWorktreePlaced, runnerHost } from "../runner/worktree-placement";
import type { EventStore } from "../events/store";
import { createWorkspace, ensureCommit } from "../workspaces";
import { sessionBundles } from "../events/bundle-chain";

export const CALL_OUTPUTS = ["reply", "ballot", "sop"] as const;
export type CallOutput = (typeof CALL_OUTPUTS)[number];

export const ZConversationCallInput = z.object({
  callId: z.uuid(),
  agentId: z.string().min(1),
  /** The role the agent has in the project (agents are told it; the scripted brain ignores it). */
  role: z.string().min(1),
  agent: ZAgentSnapshot,
  prompt: z.string(),
  /** The first characters of `prompt` that stay the same across the conversation's calls: sent before the thread. */
  promptStableChars: z.number().int().nonnegative().optional(),
  context: z.array(ZThreadMessage),
  /** Earlier calls of this agent for this output in the conversation. */
  invocation: z.number().int().nonnegative(),
  output: z.enum(CALL_OUTPUTS),
  workspace: z.object({ repoPath: z.string().min(1), head: z.string().min(1) }),
});
export type ConversationCallInput = z.infer<typeof ZConversationCallInput>;

export const ZCallStepOutput = z.object({
  kind: z.literal("conversation_reply"),
  agentId: z.string(),
  raw: ZBlobRef,
  chars: z.number().int().nonnegative(),
  simulated: z.boolean(),
  redactions: z.number().int().nonnegative().optional(),
  /** Whether the agent's process ran in the sandbox (absent for brains called over HTTP). */
  sandboxed: z.boolean().optional(),
  usage: ZAgentUsage.optional(),
});
export type CallStepOutput = z.infer<typeof ZCallStepOutput>;

export const ZTimerInput = z.object({ token: z.string().min(1) });
export type TimerInput = z.infer<typeof ZTimerInput>;

export const ZTimerStepOutput = z.object({ kind: z.literal("conversation_timer"), token: z.string().min(1) });
export type TimerStepOutput = z.infer<typeof ZTimerStepOutput>;

export interface ConversationExecutorDeps {
  pool: Db;
  /** Where the worktree's creation is recorded (pruning/worktrees.ts). */
  store: EventStore;
  /** This runner's host; the hostname by default. */
  host?: string;
  workspacesRoot: string;
  /** This runner's clone of a project registered at `repoPath` (CATCAFE_REPOSITORY_PATHS). */
  repositoryPath?: (repoPath: string) => string;
}

/** Whether the agent reads or writes files: an HTTP brain never does, nor a script that writes none. */
function touchesFiles(config: AgentConfig): boolean {
  if (config.kind === "openai" || config.kind === "anthropic") return false;
  if (config.kind !== "scripted") return true;
  const entries = [config.responses, ...Object.values(config.byOutput ?? {}), ...Object.values(config.byStage ?? {})].flat();
  return entries.some((e) => "files" in e && e.files !== undefined);
}

/**
 * The conversation's worktree: made once, by the first call of an agent that touches files
 * (one worktree operation per repository at a time), then shared by its calls. An agent that
 * touches none is called with the path, which may not exist yet.
 */
async function conversationWorkspace(
  deps: ConversationExecutorDeps,
  step: ClaimedStep,
  input: ConversationCallInput,
  config: AgentConfig,
): Promise<string> {
  const target = path.join(deps.workspacesRoot, step.sessionId);
  if (!touchesFiles(config) || fs.existsSync(target)) return target;
  const repoPath = deps.repositoryPath?.(input.workspace.repoPath) ?? input.workspace.repoPath;
  await ensureCommit(repoPath, input.workspace.head, sessionBundles(deps.pool, step.sessionId), (fn) =>
    withWorktreeLock(deps.pool, repoPath, fn),
  );
  const ws = await withWorktreeLock(deps.pool, repoPath, () =>
    createWorkspace({ repoPath, workspacesRoot: deps.workspacesRoot, sessionId: step.sessionId, baseCommit: input.workspace.head }),
  );
  await recordWorktreePlaced(deps.store, step, runnerHost(deps.host), ws.path);
  return ws.path;
}

/** Runs a call (its input parsed by its entry, ./step-kinds.ts). */
export function callExecutor(
  deps: ConversationExecutorDeps,
): (step: ClaimedStep, input: ConversationCallInput, ctx: StepContext) => Promise<CallStepOutput> {
  return async (step, input, ctx) => {
    const config = ZAgentConfig.safeParse(input.agent);
    if (!config.success) {
      throw new StepExecutionError(
        "internal_error",
        `agent ${input.agentId} has no valid configuration: ${config.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        false,
      );
    }
    const access = await checkedAgentAccess(deps.pool, step.sessionId, config.data);
    const agent = createAgent(config.data);
    const workspace = await conversationWorkspace(deps, step, input, config.data);
    try {
      const role = ZAgentRole.catch("coder").parse(input.role);
      const response = await invokeAgent(agent, config.data, {
        role,
        prompt: input.prompt,
        ...(input.promptStableChars ? { promptStableChars: input.promptStableChars } : {}),
        context: input.context,
        workspace,
        invocation: input.invocation + step.attempt - 1,
        output: input.output,
        signal: ctx.signal,
        deadline: Date.now() + step.timeoutMs,
        callGate: databaseCallGate(deps.pool),
        egress: { hosts: access.hosts },
        privateHosts: access.privateHosts,
      });
      // Whatever the agent could read, the server's secrets never reach the record.
      const { text, redactions } = recordableOutput(response.text);
      const usage = usageOf(response, config.data);
      return {
        kind: "conversation_reply",
        agentId: agent.id,
        raw: await putBlob(deps.pool, text),
        chars: text.length,
        simulated: agent.simulated,
        ...(redactions ? { redactions } : {}),
        ...(response.sandboxed !== undefined ? { sandboxed: response.sandboxed } : {}),
        ...(usage ? { usage } : {}),
      };
    } catch (err) {
      if (err instanceof AgentError) throw new StepExecutionError(err.errorClass, err.message, err.retryable, err.retryAfterMs);
      throw err;
    }
  };
}

/** A timer is due when its step runs: it only says which deadline passed. */
export async function timerExecutor(_step: ClaimedStep, input: TimerInput): Promise<TimerStepOutput> {
  return { kind: "conversation_timer", token: input.token };
}
