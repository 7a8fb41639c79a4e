// A session as the workflow engine sees it, folded from its events by `evolve`: a union on
// `status` (the Decider pattern), each member carrying only what exists then. `none`: no
// task started (yet), only the workflow state and a step; `active`: the task runs, with its
// configuration and the loop's progress; `finished`: the same, plus its outcome.
import type { AgentRole, ThreadMessage } from "../agents/types";
import type { TaskSpec } from "../events/agent-outputs";
import { CHANGE_STAGE } from "../forge/artifacts";
import type { BlobRef } from "../events/blobs";
import type { AppEvent, AppEventOf } from "../events/catalog";
import { isWorkflowStep } from "../events/step-contract";
import type { FoldEvent, RecordedEvent } from "../events/types";

/** What a task started with (TaskStarted): workflow, mode, prompt, project and agents. */
export type TaskConfig = AppEventOf<"TaskStarted">["data"];

/** One version of a staged workflow's artifact, as the log recorded it (agent draft or person edit). */
export interface ArtifactEntry {
  stage: string;
  hash: string;
  blob: BlobRef;
  size: number;
  by: "agent" | "person";
  json?: unknown;
  problems: string[];
}

/** A person's edit of an artifact: what it was made on, and the person's text. */
export interface PersonEdit {
  base: BlobRef | null;
  edited: BlobRef;
}

/** What a staged workflow (the Forge pipeline) adds to a task's progress; empty for other workflows. */
export interface Pipeline {
  /** The stage the session is in (null before the first, and for unstaged workflows). */
  stage: string | null;
  /** Iterations per stage: 1 when the stage starts. */
  iterations: Record<string, number>;
  completed: string[];
  /** path → its current version. */
  artifacts: Record<string, ArtifactEntry>;
  /** path → a person's edits of it, oldest first (kept by every later redraft). */
  edits: Record<string, PersonEdit[]>;
  /** path → an agent's redraft held back because it conflicted with a person's edit. */
  held: Record<string, { hash: string; blob: BlobRef; conflicts: number }>;
  feedback: Array<{ stage: string | null; iteration: number; source: "person" | "guidance" | "critic"; severity: string; text: string }>;
  /** stage → its critiques, oldest first. */
  critiques: Record<string, Array<{ blocking: string[]; text: string }>>;
  /** stage → the files its commits changed. */
  changed: Record<string, string[]>;
  /** Why the session waits for a person, while it does. */
  needed: AppEventOf<"PersonNeeded">["data"] | null;
  usage: { calls: number; tokens: number; byStage: Record<string, { calls: number; inputTokens: number; outputTokens: number }> };
  /** When the task started (ms since epoch), for the wall-time budget. */
  startedAtMs: number | null;
  /** A modify fork's change request (null in every other session). */
  change: Omit<AppEventOf<"ChangeRequested">["data"], "fingerprint"> | null;
}

export const emptyPipeline: Pipeline = {
  stage: null,
  iterations: {},
  completed: [],
  artifacts: {},
  edits: {},
  held: {},
  feedback: [],
  critiques: {},
  changed: {},
  needed: null,
  usage: { calls: 0, tokens: 0, byStage: {} },
  startedAtMs: null,
  change: null,
};

/** The step being worked on: scheduled, and its state not left yet. */
export interface StepRef {
  id: string;
  state: string;
  role: AgentRole;
}

interface SessionBase {
  /** Stream version of the last event folded. */
  version: number;
  /** The workflow state (FSM). */
  fsm: string;
  step: StepRef | null;
}

export interface NoTask extends SessionBase {
  status: "none";
}

/** Everything a started task has, running or finished. */
interface TaskProgress extends SessionBase {
  config: TaskConfig;
  iteration: number;
  thread: ThreadMessage[];
  invocations: Partial<Record<AgentRole, number>>;
  /** The commit the next step works from. */
  head: string;
  /** The latest commit and its parent: a rejected execution is rolled back to the parent. */
  lastCommit: { commit: string; parent: string } | null;
  lastDiff: BlobRef | null;
  /** The latest bundle of the session's commits (it holds `head` too after a rollback). */
  bundle: BlobRef | null;
  lastVerdict: Pick<AppEventOf<"ReviewVerdictRecorded">["data"], "decision" | "findings" | "summary"> | null;
  lastTestPlan: Pick<AppEventOf<"TestPlanRecorded">["data"], "summary" | "commands"> | null;
  /** Problems of the latest round: shown to the coder next time, listed if the cap is hit. */
  openIssues: string[];
  taskSpec: TaskSpec | null;
  pipeline: Pipeline;
}

export interface ActiveTask extends TaskProgress {
  status: "active";
}

export interface FinishedTask extends TaskProgress {
  status: "finished";
  outcome: string;
}

export type StartedTask = ActiveTask | FinishedTask;
export type TaskState = NoTask | StartedTask;

export const initialTaskState: TaskState = { status: "none", version: 0, fsm: "", step: null };

/** The progress of a task that just started. */
function started(state: NoTask, config: TaskConfig, recordedAt: string): ActiveTask {
  return {
    ...state,
    status: "active",
    config,
    iteration: 1,
    thread: [],
    invocations: {},
    head: config.project.baseCommit,
    lastCommit: null,
    lastDiff: null,
    bundle: null,
    lastVerdict: null,
    lastTestPlan: null,
    openIssues: [],
    taskSpec: null,
    pipeline: { ...emptyPipeline, startedAtMs: msOf(recordedAt) },
  };
}

function msOf(recordedAt: string): number | null {
  const ms = Date.parse(recordedAt);
  return Number.isFinite(ms) ? ms : null;
}

function restartedBudget(pipeline: Pipeline, recordedAt: string): Pipeline {
  return { ...pipeline, usage: emptyPipeline.usage, startedAtMs: msOf(recordedAt) ?? pipeline.startedAtMs };
}

/** A started task running again (a fork of a finished one continues past its end). */
function resumed(state: StartedTask): ActiveTask {
  if (state.status === "active") return state;
  const { outcome: _outcome, ...progress } = state;
  return { ...progress, status: "active" };
}

/** Reads only what a replay fetches (FoldEvent): version, type, data and recordedAt. */
export function evolve(state: TaskState, recorded: FoldEvent): TaskState {
  const event = recorded as FoldEvent & AppEvent;
  const next: TaskState = { ...state, version: recorded.version };
  switch (event.type) {
    case "SessionCreated":
      return { ...next, fsm: event.data.state };
    case "TaskStarted":
      return next.status === "none"
        ? started(next, event.data, recorded.recordedAt)
        : { ...resumed(next), config: event.data, head: event.data.project.baseCommit, iteration: 1 };
    case "SessionForked": {
      // A fork continues from the state inherited at its position; a rerun restarts the loop
      // from scratch; a fork of a finished position is a finished copy. A fork's budget is
      // its own: spending and the wall clock start again.
      if (next.status === "none") return { ...next, fsm: event.data.state, step: null };
      if (next.status === "finished" && event.data.outcome) return { ...next, step: null };
      const forked: ActiveTask = { ...resumed(next), fsm: event.data.state, step: null };
      if (event.data.reason !== "rerun") return { ...forked, pipeline: restartedBudget(forked.pipeline, recorded.recordedAt) };
      return {
        ...forked,
        iteration: 1,
        openIssues: [],
        lastVerdict: null,
        lastCommit: null,
        lastDiff: null,
        bundle: null,
        lastTestPlan: null,
        taskSpec: null,
        head: forked.config.project.baseCommit,
        pipeline: { ...emptyPipeline, startedAtMs: msOf(recorded.recordedAt) ?? forked.pipeline.startedAtMs },
      };
    }
    case "SessionResumed": {
      if (next.status === "none") return next;
      const active = resumed(next);
      return {
        ...active,
        step: null,
        config: event.data.budget ? { ...active.config, budget: event.data.budget } : active.config,
        pipeline: { ...active.pipeline, startedAtMs: msOf(recorded.recordedAt) ?? active.pipeline.startedAtMs },
      };
    }
    case "SessionStateChanged":
      // Leaving a state ends its step; the step's outcome event alone does not (the engine
      // decides on a history that already holds that outcome). A person's errand ends too.
      return next.status === "none"
        ? { ...next, fsm: event.data.to, step: null }
        : { ...next, fsm: event.data.to, step: null, pipeline: next.pipeline.needed ? { ...next.pipeline, needed: null } : next.pipeline };
    case "StepScheduled": {
      // Steps of other kinds (the runner's own) are no part of the workflow.
      if (!isWorkflowStep(event.data)) return next;
      const step = { id: event.data.stepId, state: event.data.input.state, role: event.data.input.role };
      if (next.status === "none" || event.data.kind !== "agent") return { ...next, step };
      // Each agent call counts against the budget when it is scheduled (its reservation).
      const stage = event.data.input.forge?.stage ?? null;
      return { ...next, step, pipeline: withUsage(next.pipeline, stage, { calls: 1, inputTokens: 0, outputTokens: 0 }) };
    }
    default:
      return next.status === "none" ? next : evolveTask(next, event);
  }
}

/** The events that change a started task's progress. */
function evolveTask(state: StartedTask, event: FoldEvent & AppEvent): TaskState {
  switch (event.type) {
    case "IterationStarted":
      return event.data.stage
        ? {
            ...state,
            iteration: event.data.iteration,
            pipeline: { ...state.pipeline, iterations: { ...state.pipeline.iterations, [event.data.stage]: event.data.iteration } },
          }
        : { ...state, iteration: event.data.iteration };
    case "StepStarted":
      if (!state.step || state.step.id !== event.data.stepId) return state;
      return { ...state, invocations: { ...state.invocations, [state.step.role]: (state.invocations[state.step.role] ?? 0) + 1 } };
    case "AgentOutputRecorded":
      return {
        ...state,
        pipeline: event.data.usage ? withUsage(state.pipeline, state.pipeline.stage, { calls: 0, ...event.data.usage }) : state.pipeline,
        openIssues: event.data.validationErrors.length
          ? event.data.validationErrors.map((e) => `${event.data.role} output rejected: ${e}`)
          : state.openIssues,
        thread: [
          ...state.thread,
          {
            from: event.data.role,
            text: event.data.validationErrors.length ? `(invalid output) ${event.data.preview}` : event.data.preview,
          },
        ],
      };
    case "WorkspaceCommitted":
      return {
        ...state,
        pipeline: state.pipeline.stage
          ? {
              ...state.pipeline,
              changed: {
                ...state.pipeline.changed,
                [state.pipeline.stage]: [
                  ...new Set([...(state.pipeline.changed[state.pipeline.stage] ?? []), ...event.data.changedFiles.map((f) => f.path)]),
                ],
              },
            }
          : state.pipeline,
        head: event.data.commit,
        lastCommit: { commit: event.data.commit, parent: event.data.parent },
        lastDiff: event.data.diff,
        bundle: event.data.bundle ?? state.bundle,
      };
    case "ReviewVerdictRecorded":
      return {
        ...state,
        lastVerdict: { decision: event.data.decision, findings: event.data.findings, summary: event.data.summary },
        openIssues:
          event.data.decision === "approve"
            ? []
            : event.data.findings
                .map((f) => `[${f.severity}] ${f.file}${f.line ? `:${f.line}` : ""}: ${f.message}`)
                .concat(event.data.override ? [event.data.override] : []),
      };
    case "TestPlanRecorded":
      return { ...state, lastTestPlan: { summary: event.data.summary, commands: event.data.commands }, openIssues: [] };
    case "TestCommandRecorded":
      return event.data.passed
        ? state
        : {
            ...state,
            openIssues: [
              ...state.openIssues,
              `test ${event.data.argv.join(" ")}: ${event.data.reason ?? `exit ${event.data.exitCode}`} ${event.data.stderrTail || event.data.stdoutTail}`
                .trim()
                .slice(0, 1000),
            ],
          };
    case "StageStarted":
      return { ...state, iteration: 1, pipeline: evolvePipeline(state.pipeline, event, state.iteration) };
    case "StageReopened":
      return {
        ...state,
        iteration: state.pipeline.iterations[event.data.stage] ?? 1,
        pipeline: evolvePipeline(state.pipeline, event, state.iteration),
      };
    case "CritiqueRecorded":
      return {
        ...state,
        openIssues: event.data.findings.filter((f) => f.severity !== "minor").map((f) => `[${f.severity}] ${f.id}: ${f.message}`),
        pipeline: evolvePipeline(state.pipeline, event, state.iteration),
      };
    case "TaskSpecRecorded":
      return { ...state, taskSpec: event.data.spec };
    case "ExecutionRejected":
      // The rejected changes are discarded: the next attempt starts from before them.
      return { ...state, openIssues: event.data.reasons, head: state.lastCommit?.parent ?? state.head };
    case "OperatorMessagePosted":
      return { ...state, thread: [...state.thread, { from: "operator", text: event.data.text }] };
    case "SystemReplied":
      return { ...state, thread: [...state.thread, { from: "system", text: event.data.text }] };
    case "SessionFinalized":
      return { ...state, status: "finished", outcome: event.data.outcome, step: null };
    case "ChangeRequested": {
      // A modify fork: the change is the next instruction, and the loop (each stage it runs,
      // for a staged workflow) counts its iterations again from the first.
      const { fingerprint: _fingerprint, ...change } = event.data;
      return {
        ...state,
        iteration: 0,
        openIssues: [`Change requested: ${event.data.text}`],
        thread: [...state.thread, { from: "operator", text: `Change requested: ${event.data.text}` }],
        // An earlier change's triage (a modify of a modify) is not this one's.
        pipeline: {
          ...state.pipeline,
          change,
          iterations: {},
          artifacts: Object.fromEntries(Object.entries(state.pipeline.artifacts).filter(([, a]) => a.stage !== CHANGE_STAGE)),
        },
      };
    }
    default:
      return { ...state, pipeline: evolvePipeline(state.pipeline, event, state.iteration) };
  }
}

function withUsage(p: Pipeline, stage: string | null, add: { calls: number; inputTokens: number; outputTokens: number }): Pipeline {
  const key = stage ?? "(none)";
  const was = p.usage.byStage[key] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
  return {
    ...p,
    usage: {
      calls: p.usage.calls + add.calls,
      tokens: p.usage.tokens + add.inputTokens + add.outputTokens,
      byStage: {
        ...p.usage.byStage,
        [key]: {
          calls: was.calls + add.calls,
          inputTokens: was.inputTokens + add.inputTokens,
          outputTokens: was.outputTokens + add.outputTokens,
        },
      },
    },
  };
}

/** The events of a staged workflow (stages, artifacts, critiques, a person's part). */
function evolvePipeline(p: Pipeline, event: FoldEvent & AppEvent, iteration: number): Pipeline {
  switch (event.type) {
    case "StageStarted":
      return {
        ...p,
        stage: event.data.stage,
        iterations: { ...p.iterations, [event.data.stage]: 1 },
        completed: p.completed.filter((s) => s !== event.data.stage),
        needed: null,
      };
    case "StageReopened":
      return { ...p, stage: event.data.stage, completed: p.completed.filter((s) => s !== event.data.stage), needed: null };
    case "StageCompleted":
      return { ...p, completed: [...p.completed.filter((s) => s !== event.data.stage), event.data.stage] };
    case "ArtifactRecorded":
    case "ArtifactEdited": {
      const { stage, hash, blob, size, json, problems, path } = event.data;
      const by = event.type === "ArtifactEdited" ? "person" : "agent";
      const entry: ArtifactEntry = { stage, hash, blob, size, by, problems, ...(json !== undefined ? { json } : {}) };
      const { [path]: _held, ...held } = p.held;
      // A person who takes the agent's held-back version over their own lets go of their
      // earlier edits of that file; any other edit joins them, to be kept by every redraft.
      const accepted = event.type === "ArtifactEdited" && p.held[path]?.hash === hash;
      const edits =
        event.type !== "ArtifactEdited"
          ? p.edits
          : accepted
            ? { ...p.edits, [path]: [] }
            : { ...p.edits, [path]: [...(p.edits[path] ?? []), { base: p.artifacts[path]?.blob ?? null, edited: blob }] };
      // A person's edit settles what was held back for that file; an agent's draft does not.
      return { ...p, artifacts: { ...p.artifacts, [path]: entry }, edits, held: event.type === "ArtifactEdited" ? held : p.held };
    }
    case "ArtifactDraftHeld":
      return {
        ...p,
        held: { ...p.held, [event.data.path]: { hash: event.data.hash, blob: event.data.blob, conflicts: event.data.conflicts } },
      };
    case "FeedbackGiven":
      return {
        ...p,
        feedback: [
          ...p.feedback,
          {
            stage: event.data.stage,
            iteration: event.data.iteration,
            source: event.data.source,
            severity: event.data.severity,
            text: event.data.text,
          },
        ],
      };
    case "CritiqueRecorded": {
      const blocking = event.data.findings.filter((f) => f.severity === "blocking").map((f) => f.id);
      const text = [event.data.summary, ...event.data.findings.map((f) => f.message)].join("\n");
      const stageCritiques = [...(p.critiques[event.data.stage] ?? []), { blocking, text }];
      return {
        ...p,
        critiques: { ...p.critiques, [event.data.stage]: stageCritiques },
        feedback:
          event.data.decision === "pass"
            ? p.feedback
            : [...p.feedback, { stage: event.data.stage, iteration, source: "critic", severity: "normal", text }],
      };
    }
    case "CheckRouted":
      // The triage's reason is feedback to the stage it sends the pipeline back to.
      return {
        ...p,
        feedback: [
          ...p.feedback,
          { stage: event.data.goto, iteration, source: "critic", severity: "normal", text: `check failed: ${event.data.reason}` },
        ],
      };
    case "PersonNeeded":
      return { ...p, needed: event.data };
    case "PersonChose":
    case "GatePassed":
      return { ...p, needed: null };
    default:
      return p;
  }
}

/** The task's part of a state, null before a task started: for readers that show any session. */
export function startedTask(state: TaskState): StartedTask | null {
  return state.status === "none" ? null : state;
}

/** How a finished task ended; null while it runs or before it started. */
export function outcomeOf(state: TaskState): string | null {
  return state.status === "finished" ? state.outcome : null;
}

/** The state once `events` (about to be emitted) are appended: the decider reuses evolve on them. */
export function applyEmitted<S extends TaskState>(state: S, events: ReadonlyArray<{ type: string; data: unknown }>): TaskState {
  return events.reduce<TaskState>((s, e, i) => evolve(s, recordedAs(e, state.version + i + 1)), state);
}

/** Only type, data, version and recordedAt are read by evolve. */
function recordedAs(e: { type: string; data: unknown }, version: number): RecordedEvent {
  return {
    position: 0,
    txId: 0,
    eventId: "",
    streamId: "",
    version,
    type: e.type,
    data: e.data,
    metadata: { actor: { kind: "system", id: "engine" }, correlationId: "", causationId: null, schemaVersion: 1 },
    recordedAt: "",
  };
}

export function foldTask(events: RecordedEvent[]): TaskState {
  return events.reduce(evolve, initialTaskState);
}
