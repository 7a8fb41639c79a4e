// Starting a task for a target agent (`catcafe go`, req M8): run a workflow for an agent and a task.
// The agent (an id from `.catcafe/agents.json` or the project's own agents, or a role name)
// picks the role; the role picks the workflow unless one is named (planner and executor
// only play `planning`); the agent must be the one the run would bind to that role, so
// the run really is that agent's. Then it is an ordinary task start.
import { z } from "zod";
import { AGENT_ROLES, type AgentRole } from "../agents/types";
import { agentStepsByRole, bindWorkflowRoles } from "../config/bind";
import { defaultMode, loadRunConfig, resolveWorkflow, runSettings } from "../config/run";
import type { ProjectConfig } from "../config/project-config";
import { AppError } from "../errors";
import type { Actor } from "../events/catalog";
import { serverOverride } from "../projects/config-edits";
import { getProject, type Project } from "../projects/projects";
import { startTask, ZStartTaskInput, type TaskDeps } from "./commands";
import { BUILTIN_WORKFLOWS } from "../task-engine";
import type { WorkflowDefinition } from "../workflow/definition";
import { resolveBaseCommit } from "../workspaces";
import { webSettingsPath } from "../config/settings";

export const ZStartForAgentInput = ZStartTaskInput.extend({
  /** An agent id, or a role (coder, reviewer, tester, planner, executor). */
  agent: z.string().trim().min(1, "name the agent (an agent id or a role)").max(100),
});
export type TStartForAgentInput = z.input<typeof ZStartForAgentInput>;

export interface StartForAgentResult {
  sessionId: string;
  version: number;
  workflow: string;
  mode: string;
  role: AgentRole;
  /** The agent that plays the role in this run. */
  agentId: string;
}

interface TargetAgent {
  role: AgentRole;
  /** null when the target was given as a role: whoever plays it. */
  agentId: string | null;
}

function isRole(name: string): name is AgentRole {
  return (AGENT_ROLES as readonly string[]).includes(name);
}

/** The id of the project record's agent for a role (the agents a project without `.catcafe/` runs). */
function recordAgentId(project: Project, role: AgentRole): string | null {
  const agent = project.agents[role] as { id?: unknown } | undefined;
  return typeof agent?.id === "string" ? agent.id : null;
}

function findTarget(name: string, project: Project, config: ProjectConfig | null): TargetAgent {
  const configured = config?.agents.find((a) => a.id === name);
  if (configured) return { role: configured.role, agentId: configured.id };
  const recordRole = AGENT_ROLES.find((role) => recordAgentId(project, role) === name);
  if (recordRole) return { role: recordRole, agentId: name };
  if (isRole(name)) return { role: name, agentId: null };
  const known = [
    ...new Set([...(config?.agents.map((a) => a.id) ?? []), ...AGENT_ROLES.flatMap((r) => recordAgentId(project, r) ?? [])]),
  ].sort();
  throw new AppError(
    "NOT_FOUND",
    `project ${project.id} has no agent "${name}" (agents: ${known.join(", ") || "none"}; or name a role: ${AGENT_ROLES.join(", ")})`,
  );
}

/** The named workflow, else the project's default when it uses the role, else the first built-in that does. */
function chooseWorkflow(requested: string | undefined, role: AgentRole, config: ProjectConfig | null): WorkflowDefinition {
  const usesRole = (d: WorkflowDefinition) => [...agentStepsByRole(d).keys()].includes(role);
  if (requested) {
    const { definition } = resolveWorkflow(requested, config);
    if (!usesRole(definition))
      throw new AppError("INVALID_INPUT", `workflow ${requested} has no step for a ${role}: choose a workflow the agent plays a part in`);
    return definition;
  }
  const defaultId = config?.project.workflow?.default ?? "review_loop";
  const projectDefault = BUILTIN_WORKFLOWS[defaultId] ?? config?.workflows[defaultId];
  if (projectDefault && usesRole(projectDefault)) return projectDefault;
  const found = Object.values(BUILTIN_WORKFLOWS).find(usesRole);
  if (!found) throw new AppError("INVALID_INPUT", `no workflow has a step for a ${role}`);
  return found;
}

/** Whom the run binds to `role`: the highest-priority `.catcafe/` agent, else the project record's. */
function boundAgentId(
  role: AgentRole,
  project: Project,
  config: ProjectConfig | null,
  definition: WorkflowDefinition,
  mode: string,
): string | null {
  if (config) {
    const bound = bindWorkflowRoles(config, definition, mode).bindings[role];
    if (bound) return bound.agentId;
  }
  return recordAgentId(project, role);
}

export async function startTaskForAgent(deps: TaskDeps, raw: TStartForAgentInput, actor: Actor): Promise<StartForAgentResult> {
  const input = ZStartForAgentInput.parse(raw);
  const project = await getProject(deps.pool, input.projectId);
  // The configuration the start will run with: `.catcafe/` as committed at HEAD.
  const config = await loadRunConfig(
    project,
    await resolveBaseCommit(project.repoPath),
    runSettings(project, { settingsFile: webSettingsPath(), server: (await serverOverride(deps.store)).override }),
  );
  const target = findTarget(input.agent, project, config);
  const definition = chooseWorkflow(input.workflow, target.role, config);
  const mode = input.mode ?? defaultMode(definition, config?.project.workflow?.mode);
  if (!definition.modes.includes(mode))
    throw new AppError("INVALID_INPUT", `workflow ${definition.id} runs in ${definition.modes.join(" or ")} mode, not ${mode}`);
  // A `.catcafe/` agent named by id plays its role in this run whatever its priority; the
  // project record's agent, or a role named, is whoever the run binds.
  const chosenConfigAgent = target.agentId && config?.agents.some((a) => a.id === target.agentId) ? target.agentId : null;
  const bound = chosenConfigAgent ?? boundAgentId(target.role, project, config, definition, mode);
  if (!bound) throw new AppError("PRECONDITION_FAILED", `project ${project.id} has no agent for the ${target.role} role`);
  if (target.agentId && bound !== target.agentId) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `agent ${target.agentId} plays ${target.role}, but this run would give that role to ${bound} (.catcafe/agents.json plays it): name ${bound}, or remove it from agents.json`,
    );
  }
  const { agent: _agent, ...start } = input;
  const started = await startTask(deps, { ...start, workflow: definition.id, mode }, actor, {
    ...(chosenConfigAgent ? { chosen: { [target.role]: chosenConfigAgent } } : {}),
  });
  return { ...started, workflow: definition.id, mode, role: target.role, agentId: bound };
}
