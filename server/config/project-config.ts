// Reads a project's `.catcafe/` files (already loaded as text) into one validated
// configuration: JSON syntax with line and column, duplicate keys, secrets, each file's
// schema, the version check, then the references between files (agent → shell, brain,
// FSM; defaults in settings.json / projects.json → shells, brains; workflows). Pure: the
// same texts always give the same configuration or the same errors.
import type { z } from "zod";
import type { AgentRole } from "../agents/types";
import { BUILTIN_WORKFLOWS } from "../task-engine";
import { InvalidWorkflowError, loadDefinition, type WorkflowDefinition } from "../workflow/definition";
import { BUILTIN_FSMS, BUILTIN_SHELL_KINDS, defaultModelCapabilities, defaultShellCapabilities } from "./builtins";
import { formatJsonPath, sortConfigErrors, type ConfigError } from "./errors";
import { closest, quote, zodIssuesToConfigErrors } from "./issues";
import { parseJson } from "./json";
import { findSecrets } from "./secrets";
import {
  CONFIG_DIR,
  CONFIG_MAJOR,
  CONFIG_VERSION,
  DEFAULT_SETTINGS,
  PROJECT_CONFIG_FILES,
  SETTINGS_FILE,
  ZAgentsFile,
  ZBrainsFile,
  ZProjectsFile,
  ZRuntimesFile,
  ZShell,
  ZShellsFile,
  ZVersionFile,
  type AgentDefinition,
  type BrainCapability,
  type BrainProvider,
  type Capability,
  type FsmDefinition,
  type ProjectConfigFile,
  type ProjectSettings,
  type Settings,
  type ShellParsed,
} from "./schemas";

export type ResolvedShell = ShellParsed & {
  id: string;
  command: string;
  capabilities: Capability[];
  /** True for claude / codex / gemini used without a shells.json entry. */
  builtin: boolean;
};

export interface ResolvedBrain {
  id: string;
  provider: BrainProvider;
  model: string;
  description?: string;
  baseUrl?: string;
  /** The NAME of the variable holding the key; the value is read only when a call is made. */
  apiKeyEnv?: string;
  temperature?: number;
  maxTokens?: number;
  rateLimit: { minIntervalMs: number };
  capabilities: BrainCapability[];
  /** scripted brains only. */
  responses?: unknown[];
}

/** Where an agent's shell or brain came from, so an error can point at the line that chose it. */
export type RefSource = "agent" | "projects" | "settings" | "none";

export type ResolvedAgent = AgentDefinition & {
  /** Position in agents.json (for error paths). */
  index: number;
  shell: { id: string | null; source: RefSource };
  brain: { id: string | null; source: RefSource };
};

export interface ProjectConfig {
  configVersion: string;
  /** The `.catcafe/` files that were present. */
  files: ProjectConfigFile[];
  settings: Settings;
  settingsFile: string;
  project: ProjectSettings;
  shells: Record<string, ResolvedShell>;
  brains: Record<string, ResolvedBrain>;
  agents: ResolvedAgent[];
  fsms: Record<string, FsmDefinition>;
  /** User-defined workflows from runtimes.json (already through loadDefinition). */
  workflows: Record<string, WorkflowDefinition>;
}

export interface ProjectConfigResult {
  /** Null whenever there is any error: nothing half-valid is ever used. */
  config: ProjectConfig | null;
  errors: ConfigError[];
}

export interface ParseOptions {
  settings?: Settings;
  /** How errors name the settings file (its path in the data directory). */
  settingsFile?: string;
}

export function configFilePath(name: string): string {
  return `${CONFIG_DIR}/${name}`;
}

const FILE_SCHEMAS = {
  "version.json": ZVersionFile,
  "shells.json": ZShellsFile,
  "brains.json": ZBrainsFile,
  "agents.json": ZAgentsFile,
  "runtimes.json": ZRuntimesFile,
  "projects.json": ZProjectsFile,
} as const satisfies Record<ProjectConfigFile, z.ZodType>;

type ParsedFiles = { [K in ProjectConfigFile]?: z.output<(typeof FILE_SCHEMAS)[K]> };

/** `unknown brain "gpt5" (known: gpt-5, local); did you mean "gpt-5"?` */
export function unknownReference(what: string, name: string, known: readonly string[]): string {
  const list = known.length ? `known: ${[...known].sort().join(", ")}` : `none defined`;
  const close = closest(name, known);
  return `unknown ${what} "${name}" (${list})${close ? `; did you mean "${close}"?` : ""}`;
}

/** Parses one file's text: JSON, duplicate keys, secrets, schema. Errors are the file's own. */
export function parseConfigFile<S extends z.ZodType>(
  file: string,
  text: string,
  schema: S,
): { value: z.output<S> | null; errors: ConfigError[] } {
  const json = parseJson(text);
  if (!json.ok)
    return {
      value: null,
      errors: [{ file, path: "", message: `invalid JSON at line ${json.line}, column ${json.column}: ${json.message}` }],
    };
  const errors: ConfigError[] = json.duplicates.map((d) => ({
    file,
    path: formatJsonPath([...d.path, d.key]),
    message: `duplicate key "${d.key}" (again at line ${d.line}, column ${d.column}; JSON would silently keep only the last one)`,
  }));
  const secrets = findSecrets(json.value);
  errors.push(...secrets.map((s) => ({ file, path: formatJsonPath(s.path), message: s.message })));
  const parsed = schema.safeParse(json.value);
  if (!parsed.success) {
    // A secret's own field is reported once, as a secret: not again as "unknown key" or a bad format.
    const secretPaths = secrets.map((s) => formatJsonPath(s.path));
    const schemaErrors = zodIssuesToConfigErrors(file, parsed.error, json.value, schema).filter(
      (e) => !secretPaths.some((p) => e.path === p || e.path.startsWith(`${p}.`) || e.path.startsWith(`${p}[`)),
    );
    errors.push(...schemaErrors);
  }
  return { value: errors.length === 0 && parsed.success ? parsed.data : null, errors };
}

/** `"2.1"` → 2; null when not a version. */
export function configMajor(version: string): number | null {
  const match = /^(\d+)\./.exec(version);
  return match ? Number(match[1]) : null;
}

export function incompatibleVersionMessage(version: string): string {
  return `configuration version ${quote(version)} is not compatible with this Cat Cafe, which reads ${CONFIG_MAJOR}.x (current ${CONFIG_VERSION}): upgrade Cat Cafe or rewrite the files for ${CONFIG_MAJOR}.x`;
}

/** Static checks of an execution FSM: every state known, a terminal state, no dead ends, all reachable. */
export function checkFsm(fsm: FsmDefinition): Array<{ path: Array<string | number>; message: string }> {
  const problems: Array<{ path: Array<string | number>; message: string }> = [];
  const names = Object.keys(fsm.states);
  if (!fsm.states[fsm.initial]) problems.push({ path: ["initial"], message: unknownReference("state", fsm.initial, names) });
  if (!Object.values(fsm.states).some((s) => s.terminal))
    problems.push({ path: ["states"], message: "no terminal state: a run could never end" });
  for (const [name, state] of Object.entries(fsm.states)) {
    const events = Object.entries(state.on);
    if (state.terminal && events.length)
      problems.push({ path: ["states", name, "on"], message: "a terminal state cannot have transitions" });
    if (!state.terminal && !events.length)
      problems.push({ path: ["states", name], message: "dead end: not terminal and no transitions leave it" });
    for (const [event, transition] of events) {
      if (!fsm.states[transition.target])
        problems.push({ path: ["states", name, "on", event], message: unknownReference("state", transition.target, names) });
    }
  }
  if (fsm.states[fsm.initial]) {
    const reached = new Set([fsm.initial]);
    const queue = [fsm.initial];
    while (queue.length) {
      for (const t of Object.values(fsm.states[queue.shift()!]?.on ?? {})) {
        if (!reached.has(t.target) && fsm.states[t.target]) {
          reached.add(t.target);
          queue.push(t.target);
        }
      }
    }
    for (const name of names)
      if (!reached.has(name)) problems.push({ path: ["states", name], message: `unreachable from the initial state "${fsm.initial}"` });
  }
  return problems;
}

/** `states.x.on.start[0].target` from the workflow loader, placed under `workflows.<id>`. */
function workflowPath(id: string, problemPath: string): string {
  const base = formatJsonPath(["workflows", id]);
  return problemPath && problemPath !== "(root)" ? `${base}.${problemPath}` : base;
}

export function parseProjectConfig(texts: Readonly<Record<string, string>>, options: ParseOptions = {}): ProjectConfigResult {
  const settings = options.settings ?? DEFAULT_SETTINGS;
  const settingsFile = options.settingsFile ?? SETTINGS_FILE;
  const errors: ConfigError[] = [];
  const order = [...PROJECT_CONFIG_FILES.map(configFilePath), settingsFile];
  const done = (): ProjectConfigResult => ({ config: null, errors: sortConfigErrors(errors, order) });

  for (const name of Object.keys(texts).sort()) {
    if (!(PROJECT_CONFIG_FILES as readonly string[]).includes(name)) {
      errors.push({
        file: configFilePath(name),
        path: "",
        message: `unknown configuration file (expected: ${PROJECT_CONFIG_FILES.join(", ")})`,
      });
    }
  }
  const parsed: ParsedFiles = {};
  const present = PROJECT_CONFIG_FILES.filter((name) => texts[name] !== undefined);
  for (const name of present) {
    const result = parseConfigFile(configFilePath(name), texts[name]!, FILE_SCHEMAS[name]);
    errors.push(...result.errors);
    if (result.value) (parsed as Record<string, unknown>)[name] = result.value;
  }

  // Another major version means other rules: report that alone rather than a page of
  // errors that only say the files were written for a different Cat Cafe.
  const version = parsed["version.json"]?.configVersion ?? CONFIG_VERSION;
  if (configMajor(version) !== CONFIG_MAJOR) {
    return {
      config: null,
      errors: [{ file: configFilePath("version.json"), path: "configVersion", message: incompatibleVersionMessage(version) }],
    };
  }

  // --- registries ---
  const shells: Record<string, ResolvedShell> = {};
  for (const kind of BUILTIN_SHELL_KINDS) {
    // Every default a shells.json entry would get, from the same schema.
    shells[kind] = {
      ...ZShell.parse({ kind, command: kind }),
      id: kind,
      command: kind,
      capabilities: defaultShellCapabilities(kind),
      builtin: true,
    };
  }
  for (const [id, shell] of Object.entries(parsed["shells.json"]?.shells ?? {})) {
    shells[id] = {
      ...shell,
      id,
      command: shell.command ?? shell.kind,
      capabilities: shell.capabilities ?? defaultShellCapabilities(shell.kind),
      builtin: false,
    } as ResolvedShell;
  }
  const brains: Record<string, ResolvedBrain> = {};
  for (const [id, brain] of Object.entries(parsed["brains.json"]?.brains ?? {})) {
    const resolved: ResolvedBrain = {
      id,
      provider: brain.provider,
      model: brain.model,
      rateLimit: brain.rateLimit ?? { minIntervalMs: settings.rateLimit.minIntervalMs },
      capabilities: brain.capabilities ?? defaultModelCapabilities(brain.provider, brain.model),
    };
    if (brain.description !== undefined) resolved.description = brain.description;
    if (brain.temperature !== undefined) resolved.temperature = brain.temperature;
    if (brain.maxTokens !== undefined) resolved.maxTokens = brain.maxTokens;
    if (brain.provider === "scripted") resolved.responses = brain.responses;
    else {
      const baseUrl = brain.baseUrl ?? brain.endpoint;
      if (baseUrl !== undefined) resolved.baseUrl = baseUrl;
      // The provider's usual variable for its own endpoint; a self-hosted endpoint (Ollama,
      // vLLM) often needs no key, so there the file must name one explicitly.
      const usualKey = brain.provider === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
      const apiKeyEnv = brain.apiKeyEnv ?? (baseUrl === undefined ? usualKey : undefined);
      if (apiKeyEnv !== undefined) resolved.apiKeyEnv = apiKeyEnv;
    }
    brains[id] = resolved;
  }
  const fsms: Record<string, FsmDefinition> = { ...BUILTIN_FSMS };
  const runtimesFile = configFilePath("runtimes.json");
  for (const [id, fsm] of Object.entries(parsed["runtimes.json"]?.fsms ?? {})) {
    const problems = checkFsm(fsm);
    errors.push(...problems.map((p) => ({ file: runtimesFile, path: formatJsonPath(["fsms", id, ...p.path]), message: p.message })));
    fsms[id] = fsm;
  }
  const workflows: Record<string, WorkflowDefinition> = {};
  for (const [id, raw] of Object.entries(parsed["runtimes.json"]?.workflows ?? {})) {
    if (BUILTIN_WORKFLOWS[id]) {
      errors.push({
        file: runtimesFile,
        path: formatJsonPath(["workflows", id]),
        message: `redefines the built-in workflow "${id}": choose another id`,
      });
      continue;
    }
    try {
      const definition = loadDefinition(raw);
      if (definition.id !== id)
        errors.push({
          file: runtimesFile,
          path: workflowPath(id, "id"),
          message: `must equal the workflow's key "${id}" (got ${quote(definition.id)})`,
        });
      else workflows[id] = definition;
    } catch (err) {
      if (!(err instanceof InvalidWorkflowError)) throw err;
      errors.push(...err.problems.map((p) => ({ file: runtimesFile, path: workflowPath(id, p.path), message: p.message })));
    }
  }

  // --- references ---
  const project = parsed["projects.json"] ?? {};
  const projectsFile = configFilePath("projects.json");
  const agentsFile = configFilePath("agents.json");
  const shellsKnown = parsed["shells.json"] !== undefined || texts["shells.json"] === undefined;
  const brainsKnown = parsed["brains.json"] !== undefined || texts["brains.json"] === undefined;
  // runtimes.json holds both FSMs and workflows: when it is broken, references into it are not checked.
  const runtimesKnown = parsed["runtimes.json"] !== undefined || texts["runtimes.json"] === undefined;
  const shellIds = Object.keys(shells);
  const brainIds = Object.keys(brains);

  const agents: ResolvedAgent[] = [];
  const firstIndex = new Map<string, number>();
  (parsed["agents.json"]?.agents ?? []).forEach((agent, index) => {
    const at = (...path: Array<string | number>) => formatJsonPath(["agents", index, ...path]);
    const first = firstIndex.get(agent.id);
    if (first !== undefined)
      errors.push({ file: agentsFile, path: at("id"), message: `duplicate agent id "${agent.id}" (already used by agents[${first}])` });
    else firstIndex.set(agent.id, index);

    // An agent's own null means "none" (no falling back to a default); a default's null is no default.
    let shell: ResolvedAgent["shell"] = { id: null, source: "none" };
    if (agent.defaultShell !== undefined) shell = { id: agent.defaultShell, source: "agent" };
    else if (project.defaultShell != null) shell = { id: project.defaultShell, source: "projects" };
    else if (settings.defaultShell != null) shell = { id: settings.defaultShell, source: "settings" };
    let brain: ResolvedAgent["brain"] = { id: null, source: "none" };
    if (agent.defaultBrain !== undefined) brain = { id: agent.defaultBrain, source: "agent" };
    else if (project.defaultBrain != null) brain = { id: project.defaultBrain, source: "projects" };
    else if (settings.defaultBrain != null) brain = { id: settings.defaultBrain, source: "settings" };

    if (shell.source === "agent" && shell.id !== null && shellsKnown && !shells[shell.id]) {
      errors.push({ file: agentsFile, path: at("defaultShell"), message: unknownReference("shell", shell.id, shellIds) });
    }
    if (brain.source === "agent" && brain.id !== null && brainsKnown && !brains[brain.id]) {
      errors.push({ file: agentsFile, path: at("defaultBrain"), message: unknownReference("brain", brain.id, brainIds) });
    }
    if (runtimesKnown && !fsms[agent.fsm])
      errors.push({ file: agentsFile, path: at("fsm"), message: unknownReference("FSM", agent.fsm, Object.keys(fsms)) });
    if (shell.id === null && brain.id === null) {
      errors.push({
        file: agentsFile,
        path: at(),
        message: "has neither a shell nor a brain: set defaultShell or defaultBrain here, or a default in projects.json or settings.json",
      });
    }
    agents.push({ ...agent, index, shell, brain });
  });

  // Defaults are checked where they are written; a settings default only matters to a
  // project that uses it or keeps its own list of shells / brains.
  const defaults: Array<{ file: string; field: "defaultShell" | "defaultBrain"; value: string | null | undefined; source: RefSource }> = [
    { file: projectsFile, field: "defaultShell", value: project.defaultShell, source: "projects" },
    { file: projectsFile, field: "defaultBrain", value: project.defaultBrain, source: "projects" },
    { file: settingsFile, field: "defaultShell", value: settings.defaultShell, source: "settings" },
    { file: settingsFile, field: "defaultBrain", value: settings.defaultBrain, source: "settings" },
  ];
  for (const d of defaults) {
    if (d.value == null) continue;
    const isShell = d.field === "defaultShell";
    if (isShell ? !shellsKnown : !brainsKnown) continue;
    if (isShell ? shells[d.value] : brains[d.value]) continue;
    const used = agents.some((a) => (isShell ? a.shell.source : a.brain.source) === d.source);
    const ownList = texts[isShell ? "shells.json" : "brains.json"] !== undefined;
    if (d.source === "settings" && !used && !ownList) continue;
    errors.push({
      file: d.file,
      path: d.field,
      message: unknownReference(isShell ? "shell" : "brain", d.value, isShell ? shellIds : brainIds),
    });
  }

  const workflowDefault = project.workflow?.default;
  // A user workflow that failed its own checks is reported already, not also as "unknown".
  const failedWorkflow =
    workflowDefault !== undefined &&
    !workflows[workflowDefault] &&
    Object.hasOwn(parsed["runtimes.json"]?.workflows ?? {}, workflowDefault);
  if (workflowDefault !== undefined && runtimesKnown && !failedWorkflow) {
    const definition = BUILTIN_WORKFLOWS[workflowDefault] ?? workflows[workflowDefault];
    if (!definition) {
      errors.push({
        file: projectsFile,
        path: "workflow.default",
        message: unknownReference("workflow", workflowDefault, [...Object.keys(BUILTIN_WORKFLOWS), ...Object.keys(workflows)]),
      });
    } else if (project.workflow?.mode !== undefined && !definition.modes.includes(project.workflow.mode)) {
      errors.push({
        file: projectsFile,
        path: "workflow.mode",
        message: `workflow "${definition.id}" has no mode "${project.workflow.mode}" (modes: ${definition.modes.join(", ")})`,
      });
    }
  }

  if (errors.length) return done();
  return {
    config: { configVersion: version, files: present, settings, settingsFile, project, shells, brains, agents, fsms, workflows },
    errors: [],
  };
}

/** The agent that plays `role`: highest priority first, then the first in agents.json. */
export function agentForRole(config: ProjectConfig, role: AgentRole): ResolvedAgent | null {
  const candidates = config.agents.filter((a) => a.role === role);
  return candidates.sort((a, b) => b.priority - a.priority || a.index - b.index)[0] ?? null;
}
