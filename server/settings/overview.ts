// The configuration as the settings pages show it (read-only): projects with their
// allowlists and agents, the repository's `.catcafe/` configuration as a new task would
// load it (committed at HEAD), the agent CLIs found on this machine, the brains and their
// check, and the workflow definitions and execution FSMs as graphs. Never a secret: API
// keys appear only as the NAME of their environment variable.
import { ZAgentConfig, type BrainAgentConfigInput } from "../agents/config";
import type { BrainCheckResult } from "../agents/brain-check";
import type { DetectedShell } from "../agents/shells/detect";
import { BUILTIN_FSMS } from "../config/builtins";
import { formatConfigErrors, loadProjectConfigAtCommit, loadSettings, type LoadedProjectConfig, type ProjectConfig } from "../config";
import { effectiveProjectSettings } from "../config/project-settings";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import { resolveBaseCommit } from "../workspaces";
import { BUILTIN_WORKFLOWS } from "../workflow/builtin";
import { fsmGraph, workflowGraph, type WorkflowGraph } from "./workflow-graph";
import { z } from "zod";

interface ProjectRecord {
  id: string;
  name: string;
  repoPath: string;
  allowlist: string[][];
  agents: Record<string, unknown>;
  maxIterations: number;
}

async function projectRecords(db: Queryable): Promise<ProjectRecord[]> {
  const r = await db.query<{
    id: string;
    name: string;
    repo_path: string;
    allowlist: string[][];
    agents: Record<string, unknown>;
    max_iterations: number;
  }>("SELECT id, name, repo_path, allowlist, agents, max_iterations FROM projects ORDER BY id");
  return r.rows.map((p) => ({
    id: p.id,
    name: p.name,
    repoPath: p.repo_path,
    allowlist: p.allowlist,
    agents: p.agents ?? {},
    maxIterations: p.max_iterations,
  }));
}

// --- the repository's .catcafe/ ---------------------------------------------------------

export interface RepoConfigStatus {
  /** The commit read (HEAD of the repository), or null when it could not be resolved. */
  commit: string | null;
  /** The repository has a `.catcafe/` directory at that commit. */
  found: boolean;
  configVersion: string | null;
  files: string[];
  /** `file: path: problem`, every one. */
  errors: string[];
  /** Why the repository could not be read from the web server, when it could not. */
  unreadable: string | null;
}

interface LoadedRepoConfig {
  status: RepoConfigStatus;
  config: ProjectConfig | null;
}

async function loadRepoConfig(project: ProjectRecord): Promise<LoadedRepoConfig> {
  let commit: string | null = null;
  try {
    commit = await resolveBaseCommit(project.repoPath);
    const settings = loadSettings();
    const loaded: LoadedProjectConfig = await loadProjectConfigAtCommit(project.repoPath, commit, {
      settings: settings.settings,
      settingsFile: settings.file,
    });
    const errors = formatConfigErrors([...(loaded.found ? settings.errors : []), ...loaded.errors]);
    return {
      status: {
        commit,
        found: loaded.found,
        configVersion: loaded.config?.configVersion ?? null,
        files: loaded.config?.files.map((f) => `.catcafe/${f}`) ?? [],
        errors,
        unreadable: null,
      },
      config: loaded.config,
    };
  } catch (err) {
    return {
      status: {
        commit,
        found: false,
        configVersion: null,
        files: [],
        errors: [],
        unreadable: err instanceof Error ? err.message : String(err),
      },
      config: null,
    };
  }
}

// --- projects and agents ----------------------------------------------------------------

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

function projectAgents(record: ProjectRecord): AgentOverview[] {
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
  const records = await projectRecords(db);
  return Promise.all(
    records.map(async (record) => {
      const { status, config } = await loadRepoConfig(record);
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

// --- shells -----------------------------------------------------------------------------

export interface ConfiguredShell {
  projectId: string;
  id: string;
  kind: string;
  command: string;
  capabilities: string[];
  builtin: boolean;
}

export interface ShellsOverview {
  /** The agent CLIs looked for on the web server's machine (runners may differ). */
  detected: DetectedShell[] | null;
  /** Why detection is not available, when it is not. */
  unavailable: string | null;
  detectedAt: string | null;
  configured: ConfiguredShell[];
}

const DETECT_CACHE_MS = 60_000;
let detection: { at: number; result: Promise<DetectedShell[]> } | null = null;

/**
 * Detection runs each CLI twice (`--version`, `--help`): cached for a minute. The module is
 * loaded on first use, so a detection module that cannot load in this process makes this
 * section "not available" instead of taking the whole API down with it.
 */
function detectCached(now = Date.now()): Promise<DetectedShell[]> {
  if (!detection || now - detection.at > DETECT_CACHE_MS) {
    const result = import("../agents/shells/detect").then(({ detectShells }) => detectShells({ timeoutMs: 15_000 }));
    detection = { at: now, result };
    result.catch(() => {
      detection = null;
    });
  }
  return detection.result;
}

export async function shellsOverview(db: Queryable): Promise<ShellsOverview> {
  const records = await projectRecords(db);
  const configs = await Promise.all(records.map(async (r) => ({ id: r.id, loaded: await loadRepoConfig(r) })));
  const configured = configs.flatMap(({ id, loaded }) =>
    Object.values(loaded.config?.shells ?? {}).map((s) => ({
      projectId: id,
      id: s.id,
      kind: s.kind,
      command: s.command,
      capabilities: [...s.capabilities],
      builtin: s.builtin,
    })),
  );
  try {
    const detected = await detectCached();
    return { detected, unavailable: null, detectedAt: new Date(detection?.at ?? Date.now()).toISOString(), configured };
  } catch (err) {
    return {
      detected: null,
      unavailable: `shell detection failed: ${err instanceof Error ? err.message : String(err)}`,
      detectedAt: null,
      configured,
    };
  }
}

// --- brains -----------------------------------------------------------------------------

export interface BrainOverview {
  projectId: string;
  source: "project" | "config";
  id: string;
  provider: string;
  model: string;
  baseUrl: string | null;
  /** The name of the variable holding the key (never its value). */
  apiKeyEnv: string | null;
  /** Whether that variable is set in the web server's environment (where Check runs). */
  keySet: boolean | null;
  minIntervalMs: number | null;
  capabilities: string[];
  simulated: boolean;
  /** HTTP brains can be checked; the scripted brain answers from its script. */
  checkable: boolean;
  /** Roles whose agent uses it. */
  usedBy: string[];
}

interface ResolvedCheckTarget {
  overview: BrainOverview;
  input: BrainAgentConfigInput | null;
}

async function brainTargets(db: Queryable): Promise<ResolvedCheckTarget[]> {
  const records = await projectRecords(db);
  const perProject = await Promise.all(
    records.map(async (record): Promise<ResolvedCheckTarget[]> => {
      const targets: ResolvedCheckTarget[] = [];
      for (const [role, raw] of Object.entries(record.agents)) {
        const parsed = ZAgentConfig.safeParse(raw);
        if (!parsed.success) continue;
        const a = parsed.data;
        if (a.kind !== "openai" && a.kind !== "anthropic" && a.kind !== "scripted") continue;
        const http = a.kind === "openai" || a.kind === "anthropic" ? a : null;
        const existing = targets.find((t) => t.overview.id === a.id);
        if (existing) {
          existing.overview.usedBy.push(role);
          continue;
        }
        targets.push({
          overview: {
            projectId: record.id,
            source: "project",
            id: a.id,
            provider: a.kind,
            model: http?.model ?? "scripted",
            baseUrl: http?.baseUrl ?? null,
            apiKeyEnv: http?.apiKeyEnv ?? null,
            keySet: http?.apiKeyEnv ? Boolean(process.env[http.apiKeyEnv]) : null,
            minIntervalMs: http?.rateLimit.minIntervalMs ?? null,
            capabilities: [],
            simulated: a.kind === "scripted",
            checkable: http !== null,
            usedBy: [role],
          },
          input: http,
        });
      }
      const { config } = await loadRepoConfig(record);
      for (const b of Object.values(config?.brains ?? {})) {
        const http = b.provider === "openai" || b.provider === "anthropic";
        targets.push({
          overview: {
            projectId: record.id,
            source: "config",
            id: b.id,
            provider: b.provider,
            model: b.model,
            baseUrl: b.baseUrl ?? null,
            apiKeyEnv: b.apiKeyEnv ?? null,
            keySet: b.apiKeyEnv ? Boolean(process.env[b.apiKeyEnv]) : null,
            minIntervalMs: b.rateLimit.minIntervalMs,
            capabilities: [...b.capabilities],
            simulated: b.provider === "scripted",
            checkable: http,
            usedBy: config!.agents.filter((a) => a.brain.id === b.id).map((a) => `${a.role} (${a.id})`),
          },
          input: http
            ? {
                kind: b.provider as "openai" | "anthropic",
                id: b.id,
                model: b.model,
                ...(b.baseUrl ? { baseUrl: b.baseUrl } : {}),
                ...(b.apiKeyEnv ? { apiKeyEnv: b.apiKeyEnv } : {}),
                rateLimit: { minIntervalMs: b.rateLimit.minIntervalMs },
              }
            : null,
        });
      }
      return targets;
    }),
  );
  return perProject.flat();
}

export async function brainsOverview(db: Queryable): Promise<BrainOverview[]> {
  return (await brainTargets(db)).map((t) => t.overview);
}

/** What the settings page's Check button shows: the check, or why it could not run. */
export type BrainCheckOutcome = { ok: true; result: BrainCheckResult } | { ok: false; error: string };

export const ZCheckBrainInput = z.object({
  projectId: z.string().min(1).max(100),
  source: z.enum(["project", "config"]),
  brainId: z.string().min(1).max(100),
});
export type TCheckBrainInput = z.input<typeof ZCheckBrainInput>;

/**
 * Checks a configured brain (connectivity, key, model, rate limit). The brain is looked up
 * on the server by its project and id: a caller can never point the check at another URL.
 */
export async function checkConfiguredBrain(db: Queryable, raw: TCheckBrainInput): Promise<BrainCheckResult & { brain: BrainOverview }> {
  const input = ZCheckBrainInput.parse(raw);
  const target = (await brainTargets(db)).find(
    (t) => t.overview.projectId === input.projectId && t.overview.source === input.source && t.overview.id === input.brainId,
  );
  if (!target) throw new AppError("NOT_FOUND", `no brain "${input.brainId}" in project ${input.projectId} (${input.source})`);
  if (!target.input)
    throw new AppError(
      "PRECONDITION_FAILED",
      `brain "${input.brainId}" is ${target.overview.provider}: it answers from its script and has nothing to check`,
    );
  const { checkBrain } = await import("../agents/brain-check");
  const result = await checkBrain(target.input);
  return { ...result, brain: target.overview };
}

// --- workflows --------------------------------------------------------------------------

export interface WorkflowsOverview {
  workflows: WorkflowGraph[];
  fsms: WorkflowGraph[];
  /** Projects whose `.catcafe/` could not be loaded: their workflows are not listed. */
  problems: Array<{ projectId: string; errors: string[] }>;
}

export async function workflowsOverview(db: Queryable): Promise<WorkflowsOverview> {
  const workflows = Object.values(BUILTIN_WORKFLOWS).map((d) => workflowGraph(d, "builtin"));
  const fsms = Object.entries(BUILTIN_FSMS).map(([id, f]) => fsmGraph(id, f, "builtin"));
  const problems: WorkflowsOverview["problems"] = [];
  for (const record of await projectRecords(db)) {
    const { status, config } = await loadRepoConfig(record);
    if (status.errors.length) problems.push({ projectId: record.id, errors: status.errors });
    if (!config) continue;
    for (const def of Object.values(config.workflows)) workflows.push(workflowGraph(def, record.id));
    for (const [id, fsm] of Object.entries(config.fsms)) if (!BUILTIN_FSMS[id]) fsms.push(fsmGraph(id, fsm, record.id));
  }
  return { workflows, fsms, problems };
}
