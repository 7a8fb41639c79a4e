// Agent runtime configuration (req M1, M5, M6): the global settings file and a
// project's `.catcafe/` files, validated with precise errors; binding an agent to its shell,
// brain and FSM; the runtime execution context recorded when a run starts.
export {
  agentStepsByRole,
  bindAgent,
  bindWorkflowRoles,
  runtimeAgentKinds,
  type AgentBinding,
  type BindOptions,
  type BindResult,
  type RoleBindings,
} from "./bind";
export { configInvalidError, formatConfigError, formatConfigErrors, formatJsonPath, type ConfigError } from "./errors";
export {
  loadProjectConfig,
  loadProjectConfigAtCommit,
  validateConfig,
  validateProjectConfig,
  type LoadedProjectConfig,
  type LoadOptions,
} from "./load";
export {
  agentForRole,
  configFilePath,
  parseProjectConfig,
  type ProjectConfig,
  type ProjectConfigResult,
  type ResolvedAgent,
  type ResolvedBrain,
  type ResolvedShell,
} from "./project-config";
export { effectiveProjectSettings, ruleCovers } from "./project-settings";
export { getRuntimeContext, newRunId, runtimeContextData, runtimeContextFromEvents, type RuntimeContext } from "./runtime-context";
export { CONFIG_DIR, CONFIG_VERSION, DEFAULT_SETTINGS, PROJECT_CONFIG_FILES, type Settings } from "./schemas";
export { defaultSettingsPath, loadSettings, parseSettings, type LoadedSettings } from "./settings";
