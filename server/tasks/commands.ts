// Operator actions on tasks: start, confirm, follow-up, cancel (rerun and the other forks: ./fork.ts). Each is
// decided by the workflow engine on the session as it is, through the command handler
// (events/command-handler.ts), so two conflicting actions (two confirms) cannot both win: the
// second is refused by the workflow ("it already moved on", CONFLICT).
import { z } from "zod";
import { withTransaction, type Tx } from "../db/pool";
import { lockStream } from "../events/command-handler";
import { newSessionId, type TaskDeps, ZSessionRef } from "./session-ref";
import { bakeOffAwareDecision } from "./bake-off-confirm";
import { AppError } from "../errors";
import type { AgentRole } from "../agents/types";
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import { serverOverride } from "../projects/config-edits";
import { getProject } from "../projects/projects";
import type { ForgeSettings } from "../config/schemas";
import type { NewEvent } from "../events/types";
import { decide, decideContext, foldTask, taskCommands, type TaskCommand, type TaskConfig, type TaskState } from "../task-engine";
import { resolveBaseCommit } from "../workspaces";
import type { WorkflowDefinition } from "../workflow/definition";
import { newRunId, type RuntimeContextData } from "../config/runtime-context";
import { bindContenders, ZBakeOffStart } from "./bake-off-contenders";
import { bindRun, defaultMode, loadRunConfig, resolveWorkflow, runLimits, runSettings, workflowRoles } from "../config/run";

export const ZStartTaskInput = z.object({
  projectId: z.string().min(1),
  prompt: z.string().trim().min(1, "say what the task is").max(20_000),
  /** Default: projects.json's workflow.mode when the workflow has it, else proposal, else the workflow's first mode. */
  mode: z
    .string()
    .regex(/^[a-z][a-z0-9_]*$/, "a mode of the workflow (lower_snake_case, e.g. proposal or implementation)")
    .max(50)
    .optional(),
  /** Default: projects.json's workflow.default, else review_loop. */
  workflow: z.string().min(1).optional(),
  title: z.string().trim().min(1).max(200).optional(),
  /** A bake-off (docs/bake-off.md): 2 to 6 contenders, each a coder (and model) that builds the confirmed proposal. */
  bakeOff: ZBakeOffStart.optional(),
});
export type TStartTaskInput = z.input<typeof ZStartTaskInput>;

/** What a start for a chosen agent adds (`catcafe go <agent>`): that agent plays its role, whatever its priority. */
export interface StartOptions {
  chosen?: Partial<Record<AgentRole, string>>;
  /**
   * A staged workflow's settings (the Forge pipeline): given, they are recorded as they are;
   * absent, the settings in force (settings.json's `forge`, then the overrides) apply.
   */
  staged?: Partial<Pick<TaskConfig, "gates" | "stageCaps" | "budget">>;
}

export { newSessionId, sessionHistory, type TaskDeps, ZSessionRef } from "./session-ref";

export const ZConfirmInput = ZSessionRef.extend({
  via: z.enum(["button", "command", "followup", "cli", "api"]).default("api"),
});
export const ZFollowUpInput = ZSessionRef.extend({ text: z.string().trim().min(1).max(20_000) });
export const ZCancelInput = ZSessionRef.extend({ reason: z.string().trim().max(500).default("cancelled by an operator") });

/** The mode a bake-off runs in: the roundtable's proposal, then the person's confirm, where it forks. */
export const BAKE_OFF_MODE = "proposal";

export async function loadTask(store: EventStore, sessionId: string): Promise<TaskState> {
  const state = foldTask(await store.readStream(sessionId));
  if (state.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  return state;
}

/**
 * Decides `command` on the session as it is and appends what was decided, through the command
 * handler (events/command-handler.ts): under the stream's lock, so two conflicting actions (two
 * confirms) are decided one after the other and the second is refused by the workflow itself
 * ("the session moved on"), never by a race.
 */
export async function decideOnTask(
  deps: TaskDeps,
  sessionId: string,
  actor: Actor,
  command: TaskCommand,
): Promise<{ sessionId: string; version: number; events: NewEvent[] }> {
  // In a transaction of its own, under the stream's lock: a bake-off's confirm creates its contenders in it (./bake-off-confirm.ts).
  const { version, events } = await withTransaction(deps.store.pool, async (tx) => {
    await lockStream(tx, sessionId);
    return taskCommands.handle(deps.store, sessionId, bakeOffAwareDecision(deps, tx, actor, command), { actor }, { tx });
  });
  return { sessionId, version, events };
}

export async function startTask(
  deps: TaskDeps,
  raw: TStartTaskInput,
  actor: Actor,
  options: StartOptions = {},
): Promise<{ sessionId: string; version: number }> {
  return createTask(deps, await prepareTask(deps, raw, options), actor);
}

/**
 * A task ready to be created: its session id, title and configuration, bound from the
 * project, its settings and its repository as they are now. Reads through the pool (and git):
 * made before any transaction the creation joins.
 */
export interface PreparedTask {
  sessionId: string;
  title: string;
  config: TaskConfig;
  definition: WorkflowDefinition;
  context: RuntimeContextData | null;
}

export async function prepareTask(deps: TaskDeps, raw: TStartTaskInput, options: StartOptions = {}): Promise<PreparedTask> {
  const input = ZStartTaskInput.parse(raw);
  const project = await getProject(deps.pool, input.projectId);
  const baseCommit = await resolveBaseCommit(project.repoPath);
  // The settings in force (settings.json, then the server's and the project's overrides) and
  // the repository's .catcafe/ as committed at the base commit (null without one): invalid
  // ones refuse the start with every error; a later edit never changes this run.
  const settings = runSettings(project, { server: (await serverOverride(deps.store)).override });
  const repoConfig = await loadRunConfig(project, baseCommit, settings);
  const { definition, user } = resolveWorkflow(input.workflow ?? repoConfig?.project.workflow?.default ?? "review_loop", repoConfig);
  // A bake-off forks at the person's confirm, which only the proposal mode asks for (docs/bake-off.md).
  const mode = input.mode ?? (input.bakeOff ? BAKE_OFF_MODE : defaultMode(definition, repoConfig?.project.workflow?.mode));
  if (input.bakeOff && (mode !== BAKE_OFF_MODE || !definition.modes.includes(BAKE_OFF_MODE))) {
    throw new AppError(
      "INVALID_INPUT",
      `a bake-off forks at the person's confirm of the proposal: start it in ${BAKE_OFF_MODE} mode of a workflow that has it (${definition.id} has: ${definition.modes.join(", ")})`,
      { fieldErrors: { mode: [`a bake-off runs in ${BAKE_OFF_MODE} mode`] } },
    );
  }
  const roles = workflowRoles(definition);
  const bind = (chosen: StartOptions["chosen"]) =>
    bindRun({
      project,
      config: repoConfig,
      definition,
      mode,
      roles,
      baseCommit,
      runId: newRunId(),
      now: new Date(),
      settings: settings.settings,
      ...(chosen ? { chosen } : {}),
    });
  const run = bind(options.chosen);
  const bakeOff = input.bakeOff
    ? bindContenders(input.bakeOff, {
        config: repoConfig,
        recordAgents: project.agents,
        bindCoder: (agentId) => bind({ ...options.chosen, coder: agentId }).agents.coder ?? {},
      })
    : null;
  const title = input.title ?? (input.prompt.split("\n")[0] ?? input.prompt).slice(0, 120);
  const config: TaskConfig = {
    workflow: definition.id,
    workflowVersion: definition.version,
    mode,
    prompt: input.prompt,
    maxIterations: run.maxIterations,
    project: {
      id: project.id,
      name: project.name,
      repoPath: project.repoPath,
      baseCommit,
      allowlist: run.allowlist,
      branchPrefix: settings.settings.delivery.branchPrefix,
    },
    agents: run.agents,
    limits: runLimits(settings.settings),
    // Fixed now: every step, replay and fork of the session hands the CLIs these servers.
    ...(run.mcpServers.length ? { mcpServers: run.mcpServers } : {}),
    ...(project.webhook ? { notify: true } : {}),
    ...(bakeOff ? { bakeOff: { contenders: bakeOff } } : {}),
    ...(definition.stages ? stagedSettings(settings.settings.forge, options.staged) : {}),
    // A user workflow runs from its snapshot: editing runtimes.json later changes nothing here.
    ...(user ? { definition: JSON.parse(JSON.stringify(definition)) as Record<string, unknown> } : {}),
  };
  return { sessionId: newSessionId(), title, config, definition, context: run.context };
}

/** Creates the prepared task's session: in a transaction of its own, or in `tx` (a conversation's `/task`, one commit for both). */
export async function createTask(
  deps: TaskDeps,
  prepared: PreparedTask,
  actor: Actor,
  tx?: Tx,
  /** Recorded with the start, after it (an intake's TaskStartedFromIssue: docs/intake.md). */
  extra: NewEvent[] = [],
): Promise<{ sessionId: string; version: number }> {
  const { sessionId, title, config, definition, context } = prepared;
  const result = await taskCommands.create(
    deps.store,
    sessionId,
    (state) => {
      const events: NewEvent[] = decide(state, { type: "StartTask", title, config }, decideContext(definition));
      // The runtime context goes right after SessionCreated, before TaskStarted, so a rerun
      // (a fork at TaskStarted) inherits it with the rest of the start.
      if (context) events.splice(1, 0, { type: "RuntimeContextRecorded", data: context });
      return [...events, ...extra];
    },
    { actor },
    tx ? { tx } : {},
  );
  return { sessionId, version: result.version };
}

/** A staged run's gates, caps and budget: the caller's, else the settings in force. */
function stagedSettings(forge: ForgeSettings, given: StartOptions["staged"] = {}): Partial<TaskConfig> {
  const gates = given.gates ?? forge.gates;
  const stageCaps = { ...forge.caps, ...given.stageCaps };
  const budget = given.budget ?? forge.budget;
  return {
    ...(gates ? { gates } : {}),
    ...(Object.keys(stageCaps).length ? { stageCaps } : {}),
    ...(budget && Object.keys(budget).length ? { budget } : {}),
  };
}

/** An action's answer: the session and its version after the action. */
export async function answered(decided: Promise<{ sessionId: string; version: number }>) {
  const { sessionId, version } = await decided;
  return { sessionId, version };
}

export function confirmTask(deps: TaskDeps, raw: z.input<typeof ZConfirmInput>, actor: Actor) {
  const input = ZConfirmInput.parse(raw);
  return answered(decideOnTask(deps, input.sessionId, actor, { type: "Confirm", via: input.via }));
}

export function followUpTask(deps: TaskDeps, raw: z.input<typeof ZFollowUpInput>, actor: Actor) {
  const input = ZFollowUpInput.parse(raw);
  return answered(decideOnTask(deps, input.sessionId, actor, { type: "FollowUp", text: input.text }));
}

export function cancelTask(deps: TaskDeps, raw: z.input<typeof ZCancelInput>, actor: Actor) {
  const input = ZCancelInput.parse(raw);
  return answered(decideOnTask(deps, input.sessionId, actor, { type: "Cancel", reason: input.reason }));
}
