// The runtime execution context of a run (req M6): run id, time, per role the agent,
// shell, brain and FSM it runs with, and the MCP servers its agent CLIs get, snapshotted into the session's events
// when the task starts (secrets redacted; API keys by variable name only, their values are
// never read here). Reading it back adds what the run produced since: each agent step's
// FSM history and the artifacts (outputs, commits, diffs, test results).
import crypto from "node:crypto";
import { z } from "zod";
import type { McpServer } from "../agents/mcp";
import { ZAgentRole, type AgentRole } from "../agents/types";
import type { AppEvent, AppEventOf } from "../events/catalog";
import { isWorkflowStep, type RunLimits } from "../events/step-contract";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import type { AgentBinding } from "./bind";
import { EXECUTION_FSM_V1, RUN_EVENTS } from "./builtins";
import type { ProjectConfig } from "./project-config";
import { redactSecrets } from "./secrets";
import { BUILTIN_FSM_ID, CONFIG_DIR, ZFsmDefinition, type FsmDefinition } from "./schemas";

export type RuntimeContextData = Extract<AppEvent, { type: "RuntimeContextRecorded" }>["data"];

const ZJsonRecord = z.record(z.string(), z.json());

/**
 * One role's agent in the runtime context: what RuntimeContextRecorded.agents holds per role
 * (the event declares it JSON) and what reading it back parses it with.
 */
export const ZRuntimeAgentSnapshot = z.object({
  agentId: z.string(),
  role: ZAgentRole,
  source: z.enum(["config", "project"]),
  /** The agents.json entry with its defaults applied (null for a project-record agent). */
  agent: ZJsonRecord.nullable(),
  shell: ZJsonRecord.nullable(),
  brain: ZJsonRecord.nullable(),
  /** Recorded from a parsed definition, so the same schema reads it back unchanged. */
  fsm: z.object({ id: z.string(), definition: ZFsmDefinition, initialState: z.string() }),
  /** The kind of runtime agent the runner creates (scripted, command, openai, ...). */
  runtimeKind: z.string(),
});
export type RuntimeAgentSnapshot = z.output<typeof ZRuntimeAgentSnapshot>;
const ZRuntimeAgentSnapshots = z.record(z.string(), ZRuntimeAgentSnapshot);

export function newRunId(): string {
  return `run-${crypto.randomBytes(6).toString("hex")}`;
}

/** Drops `undefined` (events hold JSON) and redacts anything secret-looking. */
function snapshot<T>(value: T): T {
  return redactSecrets(JSON.parse(JSON.stringify(value)) as T);
}

function bindingSnapshot(binding: AgentBinding): RuntimeAgentSnapshot {
  const { index: _index, ...agent } = binding.agent;
  // A scripted brain's replies are in the runtime agent config already; here only how many.
  const { responses, ...brain } = binding.brain ?? { responses: undefined };
  return {
    agentId: binding.agentId,
    role: binding.role,
    source: "config",
    agent: snapshot(agent),
    shell: binding.shell ? snapshot(binding.shell) : null,
    brain: binding.brain ? snapshot({ ...brain, ...(responses ? { scriptedResponses: responses.length } : {}) }) : null,
    fsm: { id: binding.fsm.id, definition: snapshot(binding.fsm.definition), initialState: binding.fsm.definition.initial },
    runtimeKind: binding.runtime.kind,
  };
}

/** A role played by an agent from the project record (no `.catcafe/` entry): the built-in FSM. */
function projectAgentSnapshot(role: AgentRole, agent: { id: string; kind: string }): RuntimeAgentSnapshot {
  return {
    agentId: agent.id,
    role,
    source: "project",
    agent: null,
    shell: null,
    brain: null,
    fsm: { id: BUILTIN_FSM_ID, definition: EXECUTION_FSM_V1, initialState: EXECUTION_FSM_V1.initial },
    runtimeKind: agent.kind,
  };
}

export interface RuntimeContextInput {
  runId: string;
  createdAt: Date;
  commit: string;
  config: ProjectConfig;
  bindings: Partial<Record<AgentRole, AgentBinding>>;
  /** Roles played by agents of the project record, with those agents' configurations. */
  projectAgents: Partial<Record<AgentRole, { id: string; kind: string }>>;
  /** The MCP servers the run's agent CLIs are handed (recorded here, not under settings). */
  mcpServers: readonly McpServer[];
}

/** The RuntimeContextRecorded event data for a run about to start. */
export function runtimeContextData(input: RuntimeContextInput): RuntimeContextData {
  const agents: Record<string, RuntimeAgentSnapshot> = {};
  for (const [role, binding] of Object.entries(input.bindings)) agents[role] = bindingSnapshot(binding);
  for (const [role, agent] of Object.entries(input.projectAgents)) agents[role] = projectAgentSnapshot(role as AgentRole, agent);
  const { $schema: _schema, ...project } = input.config.project;
  const { $schema: _settingsSchema, mcpServers: _mcpServers, ...settings } = input.config.settings;
  return {
    runId: input.runId,
    createdAt: input.createdAt.toISOString(),
    source: { dir: CONFIG_DIR, commit: input.commit, files: input.config.files, configVersion: input.config.configVersion },
    settings: snapshot(settings),
    project: snapshot(project),
    roles: Object.fromEntries(Object.entries(agents).map(([role, a]) => [role, { agentId: a.agentId, source: a.source }])),
    agents,
    mcpServers: snapshot([...input.mcpServers]),
  };
}

// --- reading it back ---------------------------------------------------------------------

export interface FsmStep {
  event: string;
  from: string;
  /** Null when the FSM has no transition for the event (recorded, not hidden). */
  to: string | null;
  emitted: string[];
  at: string;
}

export interface AgentRun {
  stepId: string;
  role: AgentRole;
  agentId: string;
  workflowState: string;
  attempt: number;
  fsmState: string;
  history: FsmStep[];
}

export type RuntimeArtifact =
  | { kind: "agent_output"; stepId: string; role: string; agentId: string; blob: string; size: number; at: string }
  | { kind: "commit"; stepId: string; commit: string; files: string[]; at: string }
  | { kind: "diff"; stepId: string; blob: string; size: number; at: string }
  | { kind: "test_result"; stepId: string; argv: string[]; passed: boolean; at: string };

export interface RuntimeContext {
  sessionId: string;
  runId: string;
  createdAt: string;
  /** False for a session started without `.catcafe/`: the context is derived from TaskStarted. */
  recorded: boolean;
  /** The ancestor session whose start recorded it, for a fork (rerun) that inherited it. */
  inheritedFrom: string | null;
  source: RuntimeContextData["source"] | { dir: null; commit: string; files: []; configVersion: null };
  settings: unknown;
  project: unknown;
  /** The limits in force (TaskStarted.limits); null for sessions started before they were recorded. */
  limits: RunLimits | null;
  /** The workflow it runs: id, version, and whether it is the repository's own (snapshotted). */
  workflow: { id: string; version: number; userDefined: boolean };
  roles: RuntimeContextData["roles"];
  agents: Record<string, RuntimeAgentSnapshot>;
  /** The MCP servers handed to the agent CLIs (secrets by variable name only); empty: none. */
  mcpServers: unknown[];
  runs: AgentRun[];
  artifacts: RuntimeArtifact[];
}

function advance(fsm: FsmDefinition, run: AgentRun, event: string, at: string): void {
  const transition = fsm.states[run.fsmState]?.on[event];
  run.history.push({ event, from: run.fsmState, to: transition?.target ?? null, emitted: transition?.emit ?? [], at });
  if (transition) run.fsmState = transition.target;
}

function workflowOf(config: AppEventOf<"TaskStarted">["data"]): RuntimeContext["workflow"] {
  return { id: config.workflow, version: config.workflowVersion, userDefined: config.definition !== undefined };
}

/** The context of `sessionId`'s run (null when it is not a task), with its runs and artifacts so far. */
export function runtimeContextFromEvents(sessionId: string, events: readonly RecordedEvent[]): RuntimeContext | null {
  const typed = events as ReadonlyArray<RecordedEvent & AppEvent>;
  const recordedEvent = typed.find((e) => e.type === "RuntimeContextRecorded");
  const started = typed.find((e) => e.type === "TaskStarted");
  if (!started || started.type !== "TaskStarted") return null;

  let context: RuntimeContext;
  if (recordedEvent && recordedEvent.type === "RuntimeContextRecorded") {
    const d = recordedEvent.data;
    context = {
      sessionId,
      runId: d.runId,
      createdAt: d.createdAt,
      recorded: true,
      inheritedFrom: recordedEvent.streamId === sessionId ? null : recordedEvent.streamId,
      source: d.source,
      settings: d.settings,
      project: d.project,
      limits: started.data.limits ?? null,
      workflow: workflowOf(started.data),
      roles: d.roles,
      agents: ZRuntimeAgentSnapshots.parse(d.agents),
      mcpServers: d.mcpServers ?? started.data.mcpServers ?? [],
      runs: [],
      artifacts: [],
    };
  } else {
    const agents: Record<string, RuntimeAgentSnapshot> = {};
    for (const [role, agent] of Object.entries(started.data.agents)) {
      agents[role] = projectAgentSnapshot(role as AgentRole, { id: String(agent?.id ?? role), kind: String(agent?.kind ?? "unknown") });
    }
    context = {
      sessionId,
      runId: started.streamId,
      createdAt: started.recordedAt,
      recorded: false,
      inheritedFrom: started.streamId === sessionId ? null : started.streamId,
      source: { dir: null, commit: started.data.project.baseCommit, files: [], configVersion: null },
      settings: null,
      project: null,
      limits: started.data.limits ?? null,
      workflow: workflowOf(started.data),
      roles: Object.fromEntries(Object.entries(agents).map(([role, a]) => [role, { agentId: a.agentId, source: a.source }])),
      agents,
      mcpServers: started.data.mcpServers ?? [],
      runs: [],
      artifacts: [],
    };
  }

  const steps = new Map<string, { role: AgentRole; state: string }>();
  const current = new Map<string, AgentRun>();
  for (const e of typed) {
    switch (e.type) {
      case "StepScheduled": {
        if (isWorkflowStep(e.data) && e.data.kind === "agent")
          steps.set(e.data.stepId, { role: e.data.input.role, state: e.data.input.state });
        break;
      }
      case "StepStarted": {
        const step = steps.get(e.data.stepId);
        if (!step) break;
        const agent = context.agents[step.role];
        const fsm = agent?.fsm.definition ?? EXECUTION_FSM_V1;
        const run: AgentRun = {
          stepId: e.data.stepId,
          role: step.role,
          agentId: agent?.agentId ?? step.role,
          workflowState: step.state,
          attempt: e.data.attempt,
          fsmState: fsm.initial,
          history: [],
        };
        advance(fsm, run, RUN_EVENTS.start, e.recordedAt);
        context.runs.push(run);
        current.set(e.data.stepId, run);
        break;
      }
      case "StepCompleted":
      case "StepFailed":
      case "StepCancelled": {
        const run = current.get(e.data.stepId);
        if (!run) break;
        const fsm = context.agents[run.role]?.fsm.definition ?? EXECUTION_FSM_V1;
        advance(fsm, run, e.type === "StepCompleted" ? RUN_EVENTS.success : RUN_EVENTS.error, e.recordedAt);
        current.delete(e.data.stepId);
        break;
      }
      case "AgentOutputRecorded":
        context.artifacts.push({
          kind: "agent_output",
          stepId: e.data.stepId,
          role: e.data.role,
          agentId: e.data.agentId,
          blob: e.data.raw.blob,
          size: e.data.raw.size,
          at: e.recordedAt,
        });
        break;
      case "WorkspaceCommitted":
        if (!e.data.empty)
          context.artifacts.push({
            kind: "commit",
            stepId: e.data.stepId,
            commit: e.data.commit,
            files: e.data.changedFiles.map((f) => f.path),
            at: e.recordedAt,
          });
        context.artifacts.push({ kind: "diff", stepId: e.data.stepId, blob: e.data.diff.blob, size: e.data.diff.size, at: e.recordedAt });
        break;
      case "TestCommandRecorded":
        context.artifacts.push({ kind: "test_result", stepId: e.data.stepId, argv: e.data.argv, passed: e.data.passed, at: e.recordedAt });
        break;
      default:
        break;
    }
  }
  return context;
}

/** The runtime execution context of a session (req M6), read from its events only. */
export async function getRuntimeContext(store: EventStore, sessionId: string): Promise<RuntimeContext | null> {
  return runtimeContextFromEvents(sessionId, await store.readStream(sessionId));
}
