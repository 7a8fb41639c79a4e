// A project's agents per role as an operator wires them (req X2, docs/configuration.md
// "Roles"): which roles its workflows need and who plays each (the repository's
// `.catcafe/agents.json` or the project record), a role's new agent judged before it is saved
// (ZAgentConfig and the access rules in force, each problem at its field), the Check of an
// agent before binding it, and each workflow's readiness — the roles no agent plays, named in
// the words a start refuses with (server/config/run.ts).
import { z } from "zod";
import { agentAccessRefusals, agentEnvPolicy, CLI_DEFAULT_KEY_ENV } from "../agents/access";
import { ZAgentConfig, type AgentConfig } from "../agents/config";
import { checkBrain, type BrainCheckResult } from "../agents/brain-check";
import { AGENT_ROLES, ZAgentRole, type AgentRole } from "../agents/types";
import { loadConfigAtHead } from "../config/at-head";
import { notReadyMessage, unboundRoles, workflowRoles } from "../config/run";
import { withOverride, type Settings, type SettingsOverride } from "../config/schemas";
import type { Queryable } from "../db/pool";
import type { EventStore } from "../events/store";
import { BUILTIN_WORKFLOWS } from "../task-engine";
import type { WorkflowDefinition } from "../workflow/definition";
import { serverOverride } from "../config/overrides";
import { loadSettings, webSettingsPath } from "../config/settings";
import { getProject, listProjectRecords, type Project } from "./projects";

/** The settings in force for a project's override now (settings.json, the server's overrides, the project's). */
export async function settingsInForce(store: EventStore, project: SettingsOverride | undefined): Promise<Settings> {
  const file = loadSettings(webSettingsPath()).settings;
  return withOverride(withOverride(file, (await serverOverride(store)).override), project);
}

// --- a role's agent, judged ----------------------------------------------------------------

export interface AgentProblem {
  field: string;
  path: string;
  message: string;
}

/**
 * Problems of the agent `raw` for `role` under `settings`: its schema's (ZAgentConfig, each at
 * its path), then the access rules' (a key or passed variable the admin's list refuses).
 */
export function agentProblems(role: string, raw: unknown, settings: Settings): AgentProblem[] {
  const field = `agents.${role}`;
  const parsed = ZAgentConfig.safeParse(raw);
  if (!parsed.success)
    return parsed.error.issues.map((issue) => ({
      field,
      path: [field, ...issue.path.map(String)].join("."),
      message: issue.message,
    }));
  return agentAccessRefusals(parsed.data, agentEnvPolicy(settings)).map((r) => ({
    field,
    path: `${field}.${r.field}`,
    message: `${r.name}: ${r.message}`,
  }));
}

/** The project's agents after `changes` (role → agent, or null to unbind). */
export function withAgentChanges(
  agents: Record<string, unknown>,
  changes: Partial<Record<AgentRole, Record<string, unknown> | null>>,
): Record<string, unknown> {
  const next = { ...agents };
  for (const [role, agent] of Object.entries(changes)) {
    if (agent === null) delete next[role];
    else if (agent !== undefined) next[role] = agent;
  }
  return next;
}

// --- readiness ------------------------------------------------------------------------------

export interface WorkflowReadiness {
  projectId: string;
  workflow: string;
  /** The roles it runs an agent for. */
  roles: AgentRole[];
  /** Those no agent plays. */
  missing: AgentRole[];
  ready: boolean;
  /** Why it is not ready (the start's own words), or null. */
  reason: string | null;
}

function readiness(project: Project, config: Awaited<ReturnType<typeof loadConfigAtHead>>["config"], def: WorkflowDefinition) {
  const roles = workflowRoles(def);
  const missing = unboundRoles(project, config, roles);
  return {
    projectId: project.id,
    workflow: def.id,
    roles,
    missing,
    ready: missing.length === 0,
    reason: missing.length ? notReadyMessage(project.id, def.id, missing) : null,
  };
}

/** Each project's workflows (the built-ins and its own at HEAD), ready or not; one project with `projectId`. */
export async function workflowReadiness(db: Queryable, projectId?: string): Promise<WorkflowReadiness[]> {
  const records = projectId ? [await getProject(db, projectId)] : await listProjectRecords(db);
  const all = await Promise.all(
    records.map(async (record) => {
      const { config } = await loadConfigAtHead(record.repoPath);
      const defs = [...Object.values(BUILTIN_WORKFLOWS), ...Object.values(config?.workflows ?? {})];
      return defs.map((def) => readiness(record, config, def));
    }),
  );
  return all.flat();
}

// --- the role pickers' page -----------------------------------------------------------------

export interface RoleBinding {
  role: AgentRole;
  /** Workflows that run an agent for it. */
  neededBy: string[];
  /** The project record's agent for it, as the picker edits it (literal env values left out). */
  record: Record<string, unknown> | null;
  /** The `.catcafe/agents.json` agent that plays it (which comes first at a start), or null. */
  repository: { id: string; shell: string | null; brain: string | null } | null;
}

export interface ProjectRoles {
  projectId: string;
  name: string;
  roles: RoleBinding[];
  /** The variables an agent may receive now (access.agentEnv in force): what a brain's key may be read from. */
  agentEnv: string[];
  /** The variables a delivery token may be read from (access.deliveryTokenEnv in force). */
  deliveryTokenEnv: string[];
  /** Each agent CLI as the live runners found it (none when no runner reported). */
  shells: Array<{ shell: string; sightings: ShellSighting[] }>;
  readiness: WorkflowReadiness[];
}

/** What the picker shows of a record agent: all but literal variables' values (a command's `env`). */
function editable(agent: unknown): Record<string, unknown> | null {
  if (typeof agent !== "object" || agent === null) return null;
  const { env, ...rest } = agent as Record<string, unknown>;
  return env && typeof env === "object" ? { ...rest, env: Object.fromEntries(Object.keys(env).map((k) => [k, "…"])) } : rest;
}

export async function projectRoles(
  deps: { pool: Queryable; store: EventStore; runnerShells?: RoleCheckDeps["runnerShells"] },
  projectId: string,
): Promise<ProjectRoles> {
  const project = await getProject(deps.pool, projectId);
  const { config } = await loadConfigAtHead(project.repoPath);
  const defs = [...Object.values(BUILTIN_WORKFLOWS), ...Object.values(config?.workflows ?? {})];
  const settings = await settingsInForce(deps.store, project.settings);
  const roles = AGENT_ROLES.map((role): RoleBinding => {
    const repo = config?.agents.filter((a) => a.role === role).sort((a, b) => b.priority - a.priority || a.index - b.index)[0];
    return {
      role,
      neededBy: defs.filter((d) => workflowRoles(d).includes(role)).map((d) => d.id),
      record: editable(project.agents[role]),
      repository: repo ? { id: repo.id, shell: repo.shell.id, brain: repo.brain.id } : null,
    };
  });
  return {
    projectId: project.id,
    name: project.name,
    roles: roles.filter((r) => r.neededBy.length || r.record || r.repository),
    agentEnv: settings.access.agentEnv,
    deliveryTokenEnv: settings.access.deliveryTokenEnv,
    shells: await (async () => {
      const recorded = deps.runnerShells ? await deps.runnerShells() : [];
      return SHELL_KINDS.map((shell) => ({ shell, sightings: sightings(recorded, shell) }));
    })(),
    readiness: defs.map((d) => readiness(project, config, d)),
  };
}

// --- Check, before a role is bound --------------------------------------------------------

export const ZCheckRoleInput = z.object({
  projectId: z.string().min(1).max(100),
  role: ZAgentRole,
  /** The agent as the picker would save it. */
  agent: z.record(z.string(), z.unknown()),
});

const SHELL_KINDS = ["claude", "codex", "gemini"] as const;

/** What one runner (or the web server) found of an agent CLI. */
export interface ShellSighting {
  where: string;
  installed: boolean;
  version: string | null;
  supported: boolean;
  problems: string[];
  /** The CLI's default key variable on that runner and whether it is set (null: not reported). */
  keyEnv: { name: string; set: boolean } | null;
}

export type RoleCheck =
  | { ok: false; kind: string; message: string; problems: AgentProblem[] }
  | { ok: boolean; kind: "openai" | "anthropic"; message: string; brain: BrainCheckResult; problems: [] }
  | { ok: boolean; kind: "claude" | "codex" | "gemini"; message: string; shells: ShellSighting[]; keyEnv: string; problems: [] }
  | { ok: true; kind: "command" | "scripted"; message: string; problems: [] };

export interface RoleCheckDeps {
  pool: Queryable;
  store: EventStore;
  /** Agent CLIs each live runner recorded (runners.shells), by where it runs. */
  runnerShells: () => Promise<Array<{ where: string; shells: unknown }>>;
}

interface RecordedShell {
  shell: string;
  path: string | null;
  version: string | null;
  supported: boolean;
  problems?: string[];
  /** Absent in what runners of earlier versions recorded. */
  keyEnv?: { name: string; set: boolean };
}

function sightings(recorded: Array<{ where: string; shells: unknown }>, kind: string): ShellSighting[] {
  return recorded.flatMap(({ where, shells }) => {
    const found = Array.isArray(shells) ? (shells as RecordedShell[]).find((s) => s?.shell === kind) : undefined;
    if (!found)
      return Array.isArray(shells)
        ? [{ where, installed: false, version: null, supported: false, problems: ["not found"], keyEnv: null }]
        : [];
    return [
      {
        where,
        installed: found.path !== null,
        version: found.version,
        supported: found.supported,
        problems: found.problems ?? [],
        keyEnv: found.keyEnv ?? null,
      },
    ];
  });
}

/**
 * Whether the CLI can authenticate on a runner: its runs have a HOME of their own, so only the
 * key variable counts, and runners report whether the CLI's default one is set (never its value).
 */
function keyWords(sighting: ShellSighting, keyEnv: string): string {
  if (sighting.keyEnv?.name !== keyEnv) return `${sighting.where}: whether ${keyEnv} is set there is not reported (it signs in with it)`;
  return sighting.keyEnv.set
    ? `${sighting.where}: ${keyEnv} is set (it signs in with it)`
    : `${sighting.where}: ${keyEnv} is not set, so it cannot sign in there`;
}

/**
 * The Check button of a role picker: the agent judged as a save would judge it, then — a
 * brain — one cheap request to its endpoint (server/agents/brain-check.ts; with its key, which
 * the judgement above lets go only to the provider's own API or a host an admin named), an
 * agent CLI's detection by the live runners, or a command's validation.
 */
export async function checkRoleAgent(deps: RoleCheckDeps, raw: z.input<typeof ZCheckRoleInput>): Promise<RoleCheck> {
  const input = ZCheckRoleInput.parse(raw);
  const project = await getProject(deps.pool, input.projectId);
  const settings = await settingsInForce(deps.store, project.settings);
  const kind = typeof input.agent.kind === "string" ? input.agent.kind : "?";
  const problems = agentProblems(input.role, input.agent, settings);
  if (problems.length) return { ok: false, kind, message: problems.map((p) => `${p.path}: ${p.message}`).join("; "), problems };
  const agent = ZAgentConfig.parse(input.agent) as AgentConfig;
  switch (agent.kind) {
    case "openai":
    case "anthropic": {
      const brain = await checkBrain(input.agent as Parameters<typeof checkBrain>[0], {
        keyPolicy: agentEnvPolicy(settings),
        sendKey: true,
        privateHosts: settings.access.privateHosts,
      });
      return { ok: brain.ok, kind: agent.kind, message: brain.message, brain, problems: [] };
    }
    case "claude":
    case "codex":
    case "gemini": {
      const shells = sightings(await deps.runnerShells(), agent.kind);
      const usable = shells.filter((s) => s.installed && s.supported);
      const keyEnv = agent.apiKeyEnv ?? CLI_DEFAULT_KEY_ENV[agent.kind];
      const message = !shells.length
        ? `no live runner has reported its agent CLIs yet: ${agent.kind} is looked for when a runner starts`
        : usable.length
          ? `${agent.kind} ${usable[0]!.version ?? ""} is installed on ${usable.map((s) => s.where).join(", ")}; ${usable.map((s) => keyWords(s, keyEnv)).join("; ")}`
          : `${agent.kind} is not usable on any live runner: ${shells.map((s) => `${s.where}: ${s.problems.join("; ") || "not found"}`).join(" | ")}`;
      // Not ok when every runner that could run it says its key variable is not set there.
      const signsIn = usable.some((s) => s.keyEnv?.name !== keyEnv || s.keyEnv.set);
      return { ok: usable.length > 0 && signsIn, kind: agent.kind, message, shells, keyEnv, problems: [] };
    }
    case "command":
      return {
        ok: true,
        kind: "command",
        message: `valid: runs ${agent.argv[0]} with ${agent.argv.length - 1} argument(s) in the session's workspace, sandboxed, the prompt on ${agent.prompt === "arg" ? "its command line" : "standard input"}${agent.passEnv?.length ? `, receiving ${agent.passEnv.join(", ")}` : ""}`,
        problems: [],
      };
    case "scripted":
      return { ok: true, kind: "scripted", message: "simulated: canned replies, no model, no network", problems: [] };
  }
}
