// The configuration a task runs with, decided once when it starts: `.catcafe/` as committed
// at the base commit (never the working tree, never a later edit), validated, each role the
// workflow needs bound to its agent (highest priority first), and the runtime execution
// context snapshotted for the session's events. Roles without a `.catcafe/` agent keep the
// project record's agent.
import { agentAccessRefusals, agentEnvPolicy } from "../agents/access";
import { ZAgentConfig } from "../agents/config";
import type { McpServer } from "../agents/mcp";
import type { AgentRole } from "../agents/types";
import { ZAgentSnapshot, type AgentSnapshots, type RunLimits } from "../events/step-contract";
import type { Allowlist } from "../commands/allowlist";
import { AppError } from "../errors";
import type { WorkflowDefinition } from "../workflow/definition";
import { bindWorkflowRoles, type AgentBinding } from "./bind";
import { configInvalidError } from "./errors";
import { loadFromTexts } from "./load";
import type { ProjectConfig } from "./project-config";
import { effectiveProjectSettings } from "./project-settings";
import { runtimeContextData, type RuntimeContextData } from "./runtime-context";
import { loadSettings } from "./settings";
import { withOverride, type Settings, type SettingsOverride } from "./schemas";
import { BUILTIN_WORKFLOWS } from "../task-engine";
import { readConfigDirAtCommit } from "./sources";

export interface RunProject {
  id: string;
  repoPath: string;
  allowlist: Allowlist;
  maxIterations: number;
  agents: Record<string, unknown>;
  /** The project's overrides of settings.json. */
  settings?: SettingsOverride;
}

/** The settings a project's task runs with, and the file they came from (for errors). */
export interface RunSettings {
  settings: Settings;
  file: string;
}

/**
 * settings.json, the server's overrides (edited in the dashboard) and the project's on top:
 * the timeouts, retry policy and rate limit its tasks run with. An invalid settings file refuses the start with every error.
 */
export function runSettings(
  project: Pick<RunProject, "settings">,
  options: { settingsFile?: string; server?: SettingsOverride } = {},
): RunSettings {
  const loaded = loadSettings(options.settingsFile);
  if (loaded.errors.length) throw configInvalidError(`cannot start a task: the settings file ${loaded.file} is invalid:`, loaded.errors);
  return { settings: withOverride(withOverride(loaded.settings, options.server), project.settings), file: loaded.file };
}

/** The limits recorded with TaskStarted: every step the session schedules uses them. */
export function runLimits(settings: Settings): RunLimits {
  return {
    stepTimeoutMs: settings.timeouts.stepMs,
    maxAttempts: settings.retry.maxAttempts,
    backoffMs: settings.retry.backoffMs,
    commandTimeoutMs: settings.timeouts.commandMs,
  };
}

/**
 * The project's `.catcafe/` at `baseCommit`, or null when that commit has none. Invalid
 * files refuse the start with every error, formatted `file: path: problem`.
 */
export async function loadRunConfig(project: RunProject, baseCommit: string, settings: RunSettings): Promise<ProjectConfig | null> {
  const read = await readConfigDirAtCommit(project.repoPath, baseCommit);
  if (!read.found) return null;
  const loaded = loadFromTexts(read, { settings: settings.settings, settingsFile: settings.file });
  if (!loaded.config) {
    throw configInvalidError(
      `cannot start a task: project ${project.id} has an invalid .catcafe/ configuration at commit ${baseCommit.slice(0, 12)}:`,
      loaded.errors,
    );
  }
  return loaded.config;
}

/** A workflow a task can run: a built-in, or one of the repository's (snapshotted into the session). */
export interface RunWorkflow {
  definition: WorkflowDefinition;
  /** True for a user workflow from .catcafe/runtimes.json. */
  user: boolean;
}

/** The workflow named `id`: built-in first (a user workflow cannot redefine one), then the repository's. */
export function resolveWorkflow(id: string, config: ProjectConfig | null): RunWorkflow {
  const builtin = BUILTIN_WORKFLOWS[id];
  if (builtin) return { definition: builtin, user: false };
  const user = config?.workflows[id];
  if (user) return { definition: user, user: true };
  const known = [...Object.keys(BUILTIN_WORKFLOWS), ...Object.keys(config?.workflows ?? {})];
  throw new AppError("INVALID_INPUT", `unknown workflow "${id}" (known: ${known.join(", ")})`);
}

/** The mode a start runs in when none is asked for: the project's when the workflow has it, else proposal, else the workflow's first. */
export function defaultMode(definition: WorkflowDefinition, projectMode: string | undefined): string {
  if (projectMode && definition.modes.includes(projectMode)) return projectMode;
  return definition.modes.includes("proposal") ? "proposal" : definition.modes[0]!;
}

/** The roles a workflow runs an agent for (the commands step runs none): each must be bound before a start. */
export function workflowRoles(definition: WorkflowDefinition): AgentRole[] {
  return [
    ...new Set(Object.values(definition.states).flatMap((s) => (s.type === "step" && s.step.output !== "commands" ? [s.step.role] : []))),
  ];
}

/**
 * The roles of `roles` no agent plays (req X2, docs/configuration.md "Roles and readiness"): neither the
 * repository's `.catcafe/agents.json` nor the project record binds them. What the New task
 * page shows before a start, and what the start refuses with, in the same words.
 */
export function unboundRoles(
  project: Pick<RunProject, "agents">,
  config: Pick<ProjectConfig, "agents"> | null,
  roles: readonly AgentRole[],
): AgentRole[] {
  return roles.filter((role) => project.agents[role] === undefined && !config?.agents.some((a) => a.role === role));
}

/** Why `workflow` cannot start on a project whose `missing` roles no agent plays. */
export function notReadyMessage(projectId: string, workflow: string, missing: readonly string[]): string {
  const roles = missing.length === 1 ? `the ${missing[0]} role` : `the ${missing.join(", ")} roles`;
  return (
    `${workflow} is not ready on project ${projectId}: no agent plays ${roles}; ` +
    `bind ${missing.length === 1 ? "it" : "them"} in Settings → Projects → ${projectId} → Roles, ` +
    `or with \`catcafe projects agent ${projectId} <role> --kind …\``
  );
}

/** Agents whose calls (brains) or runs (agent CLIs) are spaced by a rate limit. */
const RATE_LIMITED_KINDS: readonly string[] = ["openai", "anthropic", "claude", "codex", "gemini"];

export interface RunAgents {
  /** role → runtime agent configuration, for TaskStarted. */
  agents: AgentSnapshots;
  allowlist: Allowlist;
  maxIterations: number;
  /** The MCP servers the agent CLIs are handed, for TaskStarted (secrets by variable name only). */
  mcpServers: McpServer[];
  /** RuntimeContextRecorded data when the project has `.catcafe/`. */
  context: RuntimeContextData | null;
}

export function bindRun(input: {
  project: RunProject;
  config: ProjectConfig | null;
  definition: WorkflowDefinition;
  mode: string;
  roles: readonly AgentRole[];
  baseCommit: string;
  runId: string;
  now: Date;
  /** role → the agent to bind instead of the highest-priority one. */
  chosen?: Partial<Record<AgentRole, string>>;
  /** The settings in force: their rate limit is the default of project-record agents that set none; their MCP servers are the run's. */
  settings?: Settings;
}): RunAgents {
  const { project, config, definition } = input;
  let bindings: Partial<Record<AgentRole, AgentBinding>> = {};
  let allowlist = project.allowlist;
  let maxIterations = project.maxIterations;
  if (config) {
    const bound = bindWorkflowRoles(config, definition, input.mode, input.chosen);
    const effective = effectiveProjectSettings(config, project);
    const errors = [...bound.errors, ...effective.errors];
    if (errors.length) {
      throw configInvalidError(
        `cannot start a task: the agents of project ${project.id} cannot run ${definition.id} (.catcafe/ at commit ${input.baseCommit.slice(0, 12)}):`,
        errors,
      );
    }
    bindings = bound.bindings;
    allowlist = effective.allowlist;
    maxIterations = effective.maxIterations;
  }
  // Every role the workflow uses must have a valid agent before anything starts.
  const missing = unboundRoles(project, config, input.roles).filter((role) => !bindings[role]);
  if (missing.length) throw new AppError("PRECONDITION_FAILED", notReadyMessage(project.id, definition.id, missing));
  const agents: AgentSnapshots = {};
  const projectAgents: Partial<Record<AgentRole, { id: string; kind: string }>> = {};
  for (const role of input.roles) {
    const binding = bindings[role];
    if (binding) {
      agents[role] = binding.runtime;
      continue;
    }
    const parsed = ZAgentConfig.safeParse(project.agents[role]);
    if (!parsed.success) {
      const hint = config ? " (and no agent in .catcafe/agents.json plays it)" : "";
      throw new AppError(
        "PRECONDITION_FAILED",
        `project ${project.id} has no valid agent for role "${role}"${hint} (needed by ${definition.id}): ${parsed.error.issues[0]?.message ?? "missing"}`,
      );
    }
    // The project record's agents (an admin's) are held to the same rule as the repository's.
    const refused = input.settings ? agentAccessRefusals(parsed.data, agentEnvPolicy(input.settings)) : [];
    if (refused.length) {
      throw new AppError(
        "PRECONDITION_FAILED",
        `project ${project.id}'s agent for role "${role}" cannot run: ${refused.map((r) => `${r.field} ${r.name}: ${r.message}`).join("; ")}`,
      );
    }
    // Recorded as the project configures it (defaults are applied where the agent is created),
    // except the rate limit: one the agent leaves out is the settings' in force, recorded.
    const raw = project.agents[role] as Record<string, unknown>;
    const limited = input.settings && RATE_LIMITED_KINDS.includes(parsed.data.kind) && raw.rateLimit === undefined;
    agents[role] = ZAgentSnapshot.parse(limited ? { ...raw, rateLimit: { minIntervalMs: input.settings!.rateLimit.minIntervalMs } } : raw);
    projectAgents[role] = { id: parsed.data.id, kind: parsed.data.kind };
  }
  const mcpServers = input.settings?.mcpServers ?? [];
  const context = config
    ? runtimeContextData({
        runId: input.runId,
        createdAt: input.now,
        commit: input.baseCommit,
        config,
        bindings,
        projectAgents,
        mcpServers,
      })
    : null;
  return { agents, allowlist, maxIterations, mcpServers, context };
}
