// The workflow definitions and execution FSMs as the settings pages draw them: the built-in
// ones and those of each project's `.catcafe/runtimes.json` at HEAD, as graphs. A project
// whose configuration does not load is listed with its errors instead of its workflows.
import { BUILTIN_FSMS } from "../config/builtins";
import { loadConfigAtHead } from "../config/at-head";
import type { Queryable } from "../db/pool";
import { BUILTIN_WORKFLOWS } from "../task-engine";
import type { WorkflowDefinition } from "../workflow/definition";
import { fsmGraph, workflowGraph, type WorkflowGraph } from "../config/graph";
import { listProjectRecords } from "./projects";

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
  for (const record of await listProjectRecords(db)) {
    const { status, config } = await loadConfigAtHead(record.repoPath);
    if (status.errors.length) problems.push({ projectId: record.id, errors: status.errors });
    if (!config) continue;
    for (const def of Object.values(config.workflows)) workflows.push(workflowGraph(def, record.id));
    for (const [id, fsm] of Object.entries(config.fsms)) if (!BUILTIN_FSMS[id]) fsms.push(fsmGraph(id, fsm, record.id));
  }
  return { workflows, fsms, problems };
}

/** A workflow a task can be started with: a built-in (any project) or one of a project's own. */
export interface StartableWorkflow {
  id: string;
  title: string;
  modes: string[];
  /** The project whose `.catcafe/runtimes.json` (at HEAD) defines it; null for a built-in. */
  projectId: string | null;
}

/** What the new-task form offers: the built-ins, and each project's own workflows at HEAD. */
export async function startableWorkflows(db: Queryable): Promise<StartableWorkflow[]> {
  const option = (d: WorkflowDefinition, projectId: string | null) => ({ id: d.id, title: d.title, modes: d.modes, projectId });
  const workflows = Object.values(BUILTIN_WORKFLOWS).map((d) => option(d, null));
  for (const record of await listProjectRecords(db)) {
    const { config } = await loadConfigAtHead(record.repoPath);
    for (const def of Object.values(config?.workflows ?? {})) workflows.push(option(def, record.id));
  }
  return workflows;
}
