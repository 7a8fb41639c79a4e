// Loading and validating a project's configuration from disk or from a commit, and the
// validate command: every error of the files, of the settings file and of binding each
// agent (shell + brain + FSM), formatted `file: path: problem`.
import type { Allowlist } from "../commands/allowlist";
import type { AgentRole } from "../agents/types";
import { BUILTIN_WORKFLOWS } from "../task-engine";
import { agentStepsByRole, bindAgent } from "./bind";
import { formatConfigErrors, sortConfigErrors, type ConfigError } from "./errors";
import { effectiveProjectSettings } from "./project-settings";
import { configFilePath, parseProjectConfig, type ProjectConfigResult } from "./project-config";
import { PROJECT_CONFIG_FILES } from "./schemas";
import { loadSettings, type LoadedSettings } from "./settings";
import { readConfigDir, readConfigDirAtCommit, type ConfigTexts } from "./sources";
import type { Settings } from "./schemas";

export interface LoadOptions {
  /** The global settings (defaults when left out). */
  settings?: Settings;
  /** How errors name the settings file. */
  settingsFile?: string;
}

export interface LoadedProjectConfig extends ProjectConfigResult {
  /** False when the repository has no `.catcafe/` directory: nothing to load. */
  found: boolean;
}

/** The configuration in texts already read (from a working tree or a commit). */
export function loadFromTexts(read: ConfigTexts, options: LoadOptions): LoadedProjectConfig {
  if (!read.found) return { found: false, config: null, errors: [] };
  const parsed = parseProjectConfig(read.texts, options);
  if (!read.errors.length) return { found: true, ...parsed };
  return {
    found: true,
    config: null,
    errors: sortConfigErrors([...read.errors, ...parsed.errors], PROJECT_CONFIG_FILES.map(configFilePath)),
  };
}

/** `.catcafe/` as it is in the working tree of `repoDir`. */
export async function loadProjectConfig(repoDir: string, options: LoadOptions = {}): Promise<LoadedProjectConfig> {
  return loadFromTexts(readConfigDir(repoDir), options);
}

/** `.catcafe/` as committed in `commit`: what a task started at that commit runs with. */
export async function loadProjectConfigAtCommit(repoDir: string, commit: string, options: LoadOptions = {}): Promise<LoadedProjectConfig> {
  return loadFromTexts(await readConfigDirAtCommit(repoDir, commit), options);
}

/**
 * Every problem of a loaded configuration, binding included: each agent is bound to its
 * shell, brain and FSM, and checked against the steps it would run in the project's
 * default workflow and mode (review_loop unless projects.json names another), and against
 * the variables the settings let agents receive (server/agents/access.ts). With the project's
 * record (an admin's), the allowlist too: the repository's may only narrow it. These are
 * the checks a task's start makes (server/config/run.ts `bindRun`), with the same words.
 */
export function validateConfig(loaded: ProjectConfigResult, project?: { allowlist: Allowlist; maxIterations: number }): ConfigError[] {
  if (!loaded.config) return loaded.errors;
  const config = loaded.config;
  const workflowId = config.project.workflow?.default ?? "review_loop";
  const definition = BUILTIN_WORKFLOWS[workflowId] ?? config.workflows[workflowId];
  const steps = definition ? agentStepsByRole(definition, config.project.workflow?.mode) : new Map<AgentRole, never[]>();
  const errors = config.agents.flatMap((agent) => bindAgent(config, agent.id, { steps: steps.get(agent.role) ?? [] }).errors);
  if (project) errors.push(...effectiveProjectSettings(config, project).errors);
  return sortConfigErrors(errors, PROJECT_CONFIG_FILES.map(configFilePath));
}

/**
 * The validate command (CLI and tRPC): the formatted errors of the settings file and of
 * `repoDir`'s `.catcafe/` in the working tree, empty when everything is valid (or when
 * there is nothing to validate). `settings`: the settings in force (the server's and the
 * project's overrides applied) when the caller knows them.
 */
export async function validateProjectConfig(
  repoDir: string,
  options: { settingsFile?: string; settings?: LoadedSettings; project?: { allowlist: Allowlist; maxIterations: number } } = {},
): Promise<string[]> {
  const settings = options.settings ?? loadSettings(options.settingsFile);
  // A broken settings file is reported, and the project is still checked (against the defaults).
  const loaded = await loadProjectConfig(repoDir, { settings: settings.settings, settingsFile: settings.file });
  return formatConfigErrors([...settings.errors, ...validateConfig(loaded, options.project)]);
}
