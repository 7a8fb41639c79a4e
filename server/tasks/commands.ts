// Operator actions on tasks: start, confirm, follow-up, cancel (rerun and the other forks: ./fork.ts). Each loads the
// session, asks the workflow engine to decide, and appends with the version it read, so
// two conflicting actions (two confirms) cannot both win: the second gets CONFLICT.
import crypto from "node:crypto";
import { z } from "zod";
import type { Db } from "../db/pool";
import { AppError, isAppError } from "../errors";
import type { AgentRole } from "../agents/types";
import type { Actor } from "../events/catalog";
import type { EventStore } from "../events/store";
import { serverOverride } from "../projects/config-edits";
import { getProject } from "../projects/projects";
import type { ForgeSettings } from "../config/schemas";
import { decide, decideContext, definitionFor, type Emitted, foldTask, type TaskConfig, type TaskState } from "../task-engine";
import { resolveBaseCommit } from "../workspaces";
import { newRunId } from "../config/runtime-context";
import { bindRun, defaultMode, loadRunConfig, resolveWorkflow, runLimits, runSettings } from "../config/run";

export interface TaskDeps {
  store: EventStore;
  pool: Db;
}

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

export const ZSessionRef = z.object({ sessionId: z.string().min(1).max(100) });
export const ZConfirmInput = ZSessionRef.extend({
  via: z.enum(["button", "command", "followup", "cli", "api"]).default("api"),
});
export const ZFollowUpInput = ZSessionRef.extend({ text: z.string().trim().min(1).max(20_000) });
export const ZCancelInput = ZSessionRef.extend({ reason: z.string().trim().max(500).default("cancelled by an operator") });

export function newSessionId(): string {
  return `s-${crypto.randomBytes(6).toString("hex")}`;
}

export async function loadTask(store: EventStore, sessionId: string): Promise<TaskState> {
  const state = foldTask(await store.readStream(sessionId));
  if (state.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  return state;
}

/** How often an action is decided again when the session grew while it was being decided. */
const ACT_ATTEMPTS = 5;

/**
 * Decides `command` on the session as it is and appends with the version read. When the
 * append conflicts, something was appended meanwhile: often only progress (streamed
 * output, a rate-limit wait) that changes nothing for this action, so it is decided again
 * on the new state. A conflict that matters shows up as the decider's own refusal ("the
 * session moved on"), never as a false one.
 */
export async function act(
  deps: TaskDeps,
  sessionId: string,
  actor: Actor,
  command: Parameters<typeof decide>[1],
): Promise<{ sessionId: string; version: number }> {
  const { events: _events, ...appended } = await actRecording(deps, sessionId, actor, command);
  return appended;
}

/** `act`, also handing back the events appended. */
export async function actRecording(
  deps: TaskDeps,
  sessionId: string,
  actor: Actor,
  command: Parameters<typeof decide>[1],
): Promise<{ sessionId: string; version: number; events: Emitted[] }> {
  for (let attempt = 1; ; attempt++) {
    const state = await loadTask(deps.store, sessionId);
    const events = decide(state, command, decideContext(definitionFor(state)));
    try {
      const result = await deps.store.append(sessionId, state.version, events, { actor });
      return { sessionId, version: result.version, events };
    } catch (err) {
      if (!isAppError(err, "CONFLICT") || attempt >= ACT_ATTEMPTS) throw err;
    }
  }
}

export async function startTask(
  deps: TaskDeps,
  raw: TStartTaskInput,
  actor: Actor,
  options: StartOptions = {},
): Promise<{ sessionId: string; version: number }> {
  const input = ZStartTaskInput.parse(raw);
  const project = await getProject(deps.pool, input.projectId);
  const baseCommit = await resolveBaseCommit(project.repoPath);
  // The settings in force (settings.json, then the server's and the project's overrides) and
  // the repository's .catcafe/ as committed at the base commit (null without one): invalid
  // ones refuse the start with every error; a later edit never changes this run.
  const settings = runSettings(project, { server: (await serverOverride(deps.store)).override });
  const repoConfig = await loadRunConfig(project, baseCommit, settings);
  const { definition, user } = resolveWorkflow(input.workflow ?? repoConfig?.project.workflow?.default ?? "review_loop", repoConfig);
  const mode = input.mode ?? defaultMode(definition, repoConfig?.project.workflow?.mode);
  const roles = [
    ...new Set(Object.values(definition.states).flatMap((s) => (s.type === "step" && s.step.output !== "commands" ? [s.step.role] : []))),
  ];
  const run = bindRun({
    project,
    config: repoConfig,
    definition,
    mode,
    roles,
    baseCommit,
    runId: newRunId(),
    now: new Date(),
    settings: settings.settings,
    ...(options.chosen ? { chosen: options.chosen } : {}),
  });
  const sessionId = newSessionId();
  const title = input.title ?? (input.prompt.split("\n")[0] ?? input.prompt).slice(0, 120);
  const events = decide(
    foldTask([]),
    {
      type: "StartTask",
      title,
      config: {
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
        ...(definition.stages ? stagedSettings(settings.settings.forge, options.staged) : {}),
        // A user workflow runs from its snapshot: editing runtimes.json later changes nothing here.
        ...(user ? { definition: JSON.parse(JSON.stringify(definition)) as Record<string, unknown> } : {}),
      },
    },
    decideContext(definition),
  );
  // The runtime context goes right after SessionCreated, before TaskStarted, so a rerun
  // (a fork at TaskStarted) inherits it with the rest of the start.
  if (run.context) events.splice(1, 0, { type: "RuntimeContextRecorded", data: run.context });
  const result = await deps.store.append(sessionId, "no_stream", events, { actor });
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

export function confirmTask(deps: TaskDeps, raw: z.input<typeof ZConfirmInput>, actor: Actor) {
  const input = ZConfirmInput.parse(raw);
  return act(deps, input.sessionId, actor, { type: "Confirm", via: input.via });
}

export function followUpTask(deps: TaskDeps, raw: z.input<typeof ZFollowUpInput>, actor: Actor) {
  const input = ZFollowUpInput.parse(raw);
  return act(deps, input.sessionId, actor, { type: "FollowUp", text: input.text });
}

export function cancelTask(deps: TaskDeps, raw: z.input<typeof ZCancelInput>, actor: Actor) {
  const input = ZCancelInput.parse(raw);
  return act(deps, input.sessionId, actor, { type: "Cancel", reason: input.reason });
}
