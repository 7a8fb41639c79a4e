// The configuration a task runs with, decided once when it starts: `.catcafe/` as committed
// at the base commit (never the working tree, never a later edit), validated, each role the
// workflow needs bound to its agent (highest priority first), and the runtime execution
// context snapshotted for the session's events. Roles without a `.catcafe/` agent keep the
// project record's agent.
import { ZAgentConfig } from "../agents/config";
import type { AgentRole } from "../agents/types";
import { ZAgentSnapshot, type AgentSnapshots } from "../events/step-contract";
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
import { readConfigDirAtCommit } from "./sources";

export interface RunProject {
  id: string;
  repoPath: string;
  allowlist: Allowlist;
  maxIterations: number;
  agents: Record<string, unknown>;
}

/**
 * The project's `.catcafe/` at `baseCommit`, or null when that commit has none. Invalid
 * files, or an invalid settings file they would be read with, refuse the start with every
 * error, formatted `file: path: problem`. (Without `.catcafe/` the settings play no part.)
 */
export async function loadRunConfig(
  project: RunProject,
  baseCommit: string,
  options: { settingsFile?: string } = {},
): Promise<ProjectConfig | null> {
  const read = await readConfigDirAtCommit(project.repoPath, baseCommit);
  if (!read.found) return null;
  const settings = loadSettings(options.settingsFile);
  if (settings.errors.length)
    throw configInvalidError(`cannot start a task: the settings file ${settings.file} is invalid:`, settings.errors);
  const loaded = loadFromTexts(read, { settings: settings.settings, settingsFile: settings.file });
  if (!loaded.config) {
    throw configInvalidError(
      `cannot start a task: project ${project.id} has an invalid .catcafe/ configuration at commit ${baseCommit.slice(0, 12)}:`,
      loaded.errors,
    );
  }
  return loaded.config;
}

export interface RunAgents {
  /** role → runtime agent configuration, for TaskStarted. */
  agents: AgentSnapshots;
  allowlist: Allowlist;
  maxIterations: number;
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
}): RunAgents {
  const { project, config, definition } = input;
  let bindings: Partial<Record<AgentRole, AgentBinding>> = {};
  let allowlist = project.allowlist;
  let maxIterations = project.maxIterations;
  if (config) {
    const bound = bindWorkflowRoles(config, definition, input.mode);
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
    // Recorded as the project configures it (defaults are applied where the agent is created).
    agents[role] = ZAgentSnapshot.parse(project.agents[role]);
    projectAgents[role] = { id: parsed.data.id, kind: parsed.data.kind };
  }
  const context = config
    ? runtimeContextData({ runId: input.runId, createdAt: input.now, commit: input.baseCommit, config, bindings, projectAgents })
    : null;
  return { agents, allowlist, maxIterations, context };
}
