// What people do with conversations (req C1–C8): start one on a project, post, switch the
// mode (req C7: GET/PUT /api/sessions/:id/mode), note progress, terminate. Each decides on
// the conversation as recorded and appends with the version read (./record.ts).
import { z } from "zod";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import { loadRunConfig, runSettings } from "../config/run";
import { decideConversation } from "../modes/conversation";
import { findMode, MODES } from "../modes/registry";
import type { ConversationAgent } from "../modes/types";
import { serverOverride } from "../projects/config-edits";
import { getProject } from "../projects/projects";
import { resolveBaseCommit } from "../workspaces";
import { conversationCast } from "./setup";
import { parseTaskCommand, startTaskFromConversation } from "./task-command";
import {
  CONVERSATION_WORKFLOW,
  conversationCommands,
  conversationContext,
  conversationDecision,
  loadConversation,
  unclaimedCalls,
  type ConversationDeps,
  type ConversationRequest,
} from "./record";
import crypto from "node:crypto";

const ZSessionId = z.string().min(1).max(100);
const ZText = z.string().trim().min(1, "say something").max(20_000);
const ZModeName = z.string().min(1).max(50);

export const ZStartConversationInput = z.object({
  projectId: z.string().min(1),
  title: z.string().trim().min(1).max(200).optional(),
  mode: ZModeName.optional(),
  modeConfig: z.unknown().optional(),
  /** Agent turns without progress before the conversation stalls (default 4). */
  stallAfter: z.number().int().min(1).max(50).optional(),
  /** A first message, posted right after the start. */
  message: ZText.optional(),
});
export const ZPostInput = z.object({ sessionId: ZSessionId, text: ZText });
export const ZSetModeInput = z.object({ sessionId: ZSessionId, mode: ZModeName, modeConfig: z.unknown().optional() });
export const ZTerminateInput = z.object({ sessionId: ZSessionId, reason: z.string().trim().min(1).max(500).default("ended by a person") });
export const ZNoteProgressInput = z.object({
  sessionId: ZSessionId,
  kind: z.enum(["artifact", "test_result", "decision"]),
  detail: z.string().trim().min(1).max(2000),
  /** With kind test_result: the choice (a code change) whose tests ran, and whether they passed. */
  choice: z.string().trim().min(1).max(200).optional(),
  passed: z.boolean().optional(),
});

/** Decides `request` on the conversation as it is and appends what was decided (events/command-handler.ts). */
function decideOn(deps: ConversationDeps, sessionId: string, actor: Actor, request: ConversationRequest) {
  return conversationCommands.handle(deps.store, sessionId, conversationDecision(request), { actor });
}

/** How a person is named in a conversation: `user:<id>`. */
const byOf = (actor: Actor) => `${actor.kind}:${actor.id}`;

function newConversationId(): string {
  return `c-${crypto.randomBytes(6).toString("hex")}`;
}

/** The agents a conversation on the project would have now (the dashboard's @mention completion before a start). */
export async function projectAgents(deps: ConversationDeps, projectId: string): Promise<ConversationAgent[]> {
  return (await castOf(deps, projectId)).cast.agents;
}

async function castOf(deps: ConversationDeps, projectId: string) {
  const project = await getProject(deps.pool, projectId);
  const baseCommit = await resolveBaseCommit(project.repoPath);
  const settings = runSettings(project, { server: (await serverOverride(deps.store)).override });
  const cast = conversationCast(project, await loadRunConfig(project, baseCommit, settings));
  return { project, baseCommit, settings, cast };
}

export async function startConversation(
  deps: ConversationDeps,
  raw: z.input<typeof ZStartConversationInput>,
  actor: Actor,
): Promise<{ sessionId: string; version: number }> {
  const input = ZStartConversationInput.parse(raw);
  const { project, baseCommit, settings, cast } = await castOf(deps, input.projectId);
  if (!cast.agents.length) throw new AppError("PRECONDITION_FAILED", `project ${project.id} has no agent to talk with`);
  const sessionId = newConversationId();
  const title = input.title ?? (input.message ? input.message.split("\n")[0]!.slice(0, 120) : `Conversation on ${project.name}`);
  const result = await conversationCommands.create(
    deps.store,
    sessionId,
    (record) => [
      { type: "SessionCreated", data: { title, workflow: CONVERSATION_WORKFLOW, state: "open" } },
      ...decideConversation(
        record.state,
        {
          type: "Start",
          agents: cast.agents,
          ...(input.mode ? { mode: input.mode } : {}),
          ...(input.modeConfig !== undefined ? { config: input.modeConfig } : {}),
          ...(input.stallAfter ? { stallAfter: input.stallAfter } : {}),
        },
        conversationContext,
      ),
      {
        type: "ConversationSetup",
        data: {
          project: { id: project.id, name: project.name, repoPath: project.repoPath, baseCommit },
          runtimes: cast.runtimes,
          limits: { stepTimeoutMs: settings.settings.timeouts.stepMs, maxAttempts: settings.settings.retry.maxAttempts },
        },
      },
    ],
    { actor },
  );
  if (!input.message) return { sessionId, version: result.version };
  return { sessionId, version: (await postMessage(deps, { sessionId, text: input.message }, actor)).version };
}

export async function postMessage(deps: ConversationDeps, raw: z.input<typeof ZPostInput>, actor: Actor) {
  const input = ZPostInput.parse(raw);
  // `/task <prompt>` starts a task rather than speaking to the agents (req W13, ./task-command.ts).
  const command = parseTaskCommand(input.text);
  if (command) {
    const started = await startTaskFromConversation(
      deps,
      { sessionId: input.sessionId, text: input.text, prompt: command.prompt },
      actor,
      byOf(actor),
    );
    return { sessionId: started.sessionId, version: started.version, posted: started.posted, calls: 0, task: started.task };
  }
  const { version, events, state } = await decideOn(deps, input.sessionId, actor, { type: "Post", by: byOf(actor), text: input.text });
  // `posted`: the message's own version (what came before it was read at state.version).
  return {
    sessionId: input.sessionId,
    version,
    posted: state.version + 1,
    calls: events.filter((e) => e.type === "AgentCallScheduled").length,
    task: null,
  };
}

export async function setMode(deps: ConversationDeps, raw: z.input<typeof ZSetModeInput>, actor: Actor) {
  const input = ZSetModeInput.parse(raw);
  await decideOn(deps, input.sessionId, actor, {
    type: "SwitchMode",
    mode: input.mode,
    ...(input.modeConfig !== undefined ? { config: input.modeConfig } : {}),
    by: byOf(actor),
  });
  return { mode: input.mode, description: findMode(input.mode)!.description };
}

export async function terminateConversation(deps: ConversationDeps, raw: z.input<typeof ZTerminateInput>, actor: Actor) {
  const input = ZTerminateInput.parse(raw);
  const { version } = await decideOn(deps, input.sessionId, actor, async (_loaded, db) => ({
    type: "Terminate",
    reason: input.reason,
    by: byOf(actor),
    unclaimed: await unclaimedCalls(db, input.sessionId),
  }));
  return { sessionId: input.sessionId, version };
}

export async function noteProgress(deps: ConversationDeps, raw: z.input<typeof ZNoteProgressInput>, actor: Actor) {
  const input = ZNoteProgressInput.parse(raw);
  const { version } = await decideOn(deps, input.sessionId, actor, {
    type: "NoteProgress",
    kind: input.kind,
    detail: input.detail,
    ...(input.choice !== undefined ? { choice: input.choice } : {}),
    ...(input.passed !== undefined ? { passed: input.passed } : {}),
  });
  return { sessionId: input.sessionId, version };
}

/** The answer to GET /api/sessions/:id/mode (req C7, docs/conversations.md). */
export async function getMode(deps: ConversationDeps, sessionId: string) {
  const loaded = await loadConversation(deps.store, ZSessionId.parse(sessionId));
  const { state } = loaded;
  return {
    mode: state.mode,
    description: MODES[state.mode]?.description ?? "",
    config: { name: state.mode, enabled: state.status === "open", config: state.config },
    state: {
      current_step: state.modeState.currentStep,
      step_history: state.modeState.stepHistory,
      custom_state: state.modeState.custom,
      last_update_time: loaded.lastAt,
    },
  };
}
