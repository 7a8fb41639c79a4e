// Each project's configuration as the settings pages show it (read-only): the admin's
// project record (repository, allowlist, iteration cap, agents per role) beside the
// repository's `.catcafe/` as a new task would load it (committed at HEAD), with the
// allowlist and defaults that result. Never a secret: keys appear only as variable names.
import { ZAgentConfig } from "../agents/config";
import { formatConfigErrors, type ProjectConfig } from "../config";
import { loadConfigAtHead, type RepoConfigStatus } from "../config/at-head";
import { effectiveProjectSettings } from "../config/project-settings";
import type { Queryable } from "../db/pool";
import { listProjectRecords, type Project } from "./projects";

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

export async function projectsOverview(db: Queryable): Promise<ProjectOverview[]> {
  const records = await listProjectRecords(db);
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
      };
    }),
  );
}
