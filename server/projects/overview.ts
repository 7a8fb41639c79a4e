// Each project's configuration as the settings pages show it: the admin's project record
// (repository, allowlist, iteration cap, agents per role) beside the repository's
// `.catcafe/` as a new task would load it (committed at HEAD), with the allowlist and
// defaults that result, the settings in force with where each comes from, and the record's
// change history (admins edit it through config-edits.ts). Never a secret: keys appear
// only as variable names.
import { ZAgentConfig } from "../agents/config";
import { formatConfigErrors, type ProjectConfig } from "../config";
import { loadConfigAtHead, type RepoConfigStatus } from "../config/at-head";
import { effectiveProjectSettings } from "../config/project-settings";
import type { Queryable } from "../db/pool";
import type { EventStore } from "../events/store";
import {
  configHistory,
  effectiveSettings,
  fileSettings,
  projectConfigStream,
  serverOverride,
  type ConfigHistoryEntry,
  type EffectiveSetting,
} from "./config-edits";
import { listProjectRecords, maskedUrl, type Project } from "./projects";

export interface AgentOverview {
  /** "project": the admin's project record; "config": the repository's `.catcafe/agents.json`. */
  source: "project" | "config";
  role: string;
  id: string;
  name: string | null;
  kind: string;
  simulated: boolean;
  /** The model (brain kinds and CLIs that name one). */
  model: string | null;
  /** For `.catcafe` agents: the shell and brain they bind to, priority and FSM. */
  shell: string | null;
  brain: string | null;
  priority: number | null;
  fsm: string | null;
  manifest: { capabilities: string[]; allowedFiles: string[] | null; outputFormat: string | null } | null;
  /** The agent's configuration is not valid (shown rather than hidden). */
  invalid: string | null;
}

export interface ProjectOverview {
  id: string;
  name: string;
  repoPath: string;
  maxIterations: number;
  /** The admin's allowlist (argv patterns). */
  allowlist: string[][];
  /** What tasks actually get when `.catcafe/projects.json` narrows it. */
  effectiveAllowlist: string[][] | null;
  defaultWorkflow: string | null;
  defaultMode: string | null;
  agents: AgentOverview[];
  config: RepoConfigStatus;
  /** The admin's iteration cap (the project record); `maxIterations` is what tasks get. */
  recordMaxIterations: number;
  /** Where `maxIterations` comes from: the record, or `.catcafe/projects.json`. */
  maxIterationsSource: "project" | "repository file";
  /** Each setting in force for the project's tasks, and the layer it comes from. */
  settings: EffectiveSetting[];
  /** The project record's agents that name a model (an admin may change it). */
  models: Array<{ role: string; kind: string; model: string }>;
  /** The latest changes to the record, newest first. */
  history: ConfigHistoryEntry[];
  /** Where sessions that need a person are announced: its origin only (the path may hold a token). */
  webhook: { url: string; format: "json" | "slack" } | null;
}

const MODEL_KINDS = ["openai", "anthropic", "claude", "codex", "gemini"];

function recordModels(record: Project): ProjectOverview["models"] {
  return Object.entries(record.agents).flatMap(([role, raw]) => {
    const agent = raw as { kind?: unknown; model?: unknown } | null;
    const kind = typeof agent?.kind === "string" ? agent.kind : "";
    if (!MODEL_KINDS.includes(kind)) return [];
    return [{ role, kind, model: typeof agent?.model === "string" ? agent.model : "" }];
  });
}

function projectAgents(record: Project): AgentOverview[] {
  return Object.entries(record.agents).map(([role, raw]) => {
    const parsed = ZAgentConfig.safeParse(raw);
    const fallbackId = typeof (raw as { id?: unknown })?.id === "string" ? (raw as { id: string }).id : role;
    if (!parsed.success) {
      return {
        source: "project",
        role,
        id: fallbackId,
        name: null,
        kind: String((raw as { kind?: unknown })?.kind ?? "unknown"),
        simulated: false,
        model: null,
        shell: null,
        brain: null,
        priority: null,
        fsm: null,
        manifest: null,
        invalid: parsed.error.issues[0]?.message ?? "invalid",
      };
    }
    const a = parsed.data;
    const model = "model" in a && typeof a.model === "string" ? a.model : null;
    return {
      source: "project",
      role,
      id: a.id,
      name: a.name ?? null,
      kind: a.kind,
      simulated: a.kind === "scripted",
      model,
      shell: a.kind === "command" ? (a.argv[0] ?? null) : ["claude", "codex", "gemini"].includes(a.kind) ? a.kind : null,
      brain: ["openai", "anthropic", "scripted"].includes(a.kind) ? a.id : null,
      priority: null,
      fsm: null,
      manifest: a.manifest
        ? { capabilities: a.manifest.capabilities, allowedFiles: a.manifest.allowedFiles ?? null, outputFormat: null }
        : null,
      invalid: null,
    };
  });
}

function configAgents(config: ProjectConfig): AgentOverview[] {
  return config.agents.map((a) => {
    const brain = a.brain.id ? config.brains[a.brain.id] : undefined;
    return {
      source: "config",
      role: a.role,
      id: a.id,
      name: a.name ?? null,
      kind: a.shell.id ? (config.shells[a.shell.id]?.kind ?? "shell") : brain ? brain.provider : "unbound",
      simulated: brain?.provider === "scripted",
      model: brain?.model ?? null,
      shell: a.shell.id,
      brain: a.brain.id,
      priority: a.priority,
      fsm: a.fsm,
      manifest: {
        capabilities: [...a.manifest.capabilities],
        allowedFiles: a.manifest.allowedFiles ?? null,
        outputFormat: a.manifest.output?.format ?? null,
      },
      invalid: null,
    };
  });
}

export async function projectsOverview(db: Queryable, store: EventStore): Promise<ProjectOverview[]> {
  const records = await listProjectRecords(db);
  const file = fileSettings();
  const { override: server } = await serverOverride(store);
  return Promise.all(
    records.map(async (record) => {
      const { status, config } = await loadConfigAtHead(record.repoPath);
      const effective = config
        ? effectiveProjectSettings(config, { allowlist: record.allowlist, maxIterations: record.maxIterations })
        : null;
      return {
        id: record.id,
        name: record.name,
        repoPath: record.repoPath,
        maxIterations: effective?.maxIterations ?? record.maxIterations,
        allowlist: record.allowlist,
        effectiveAllowlist: config?.project.allowlist && effective && effective.errors.length === 0 ? effective.allowlist : null,
        defaultWorkflow: config?.project.workflow?.default ?? null,
        defaultMode: config?.project.workflow?.mode ?? null,
        agents: [...projectAgents(record), ...(config ? configAgents(config) : [])],
        config: { ...status, errors: [...status.errors, ...formatConfigErrors(effective?.errors ?? [])] },
        recordMaxIterations: record.maxIterations,
        maxIterationsSource: config?.project.maxIterations !== undefined ? "repository file" : "project",
        settings: effectiveSettings(file, server, record.settings),
        models: recordModels(record),
        history: (await configHistory(store, projectConfigStream(record.id))).slice(0, 20),
        webhook: record.webhook ? { url: maskedUrl(record.webhook.url), format: record.webhook.format } : null,
      } satisfies ProjectOverview;
    }),
  );
}
