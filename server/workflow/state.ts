// A session as the workflow engine sees it, folded from its events by `evolve`: a union on
// `status` (the Decider pattern), each member carrying only what exists then. `none`: no
// task started (yet), only the workflow state and a step; `active`: the task runs, with its
// configuration and the loop's progress; `finished`: the same, plus its outcome.
import type { AgentRole, ThreadMessage } from "../agents/types";
import type { TaskSpec } from "../events/agent-outputs";
import type { BlobRef } from "../events/blobs";
import type { AppEvent, AppEventOf } from "../events/catalog";
import { isWorkflowStep } from "../events/step-contract";
import type { RecordedEvent } from "../events/types";

/** What a task started with (TaskStarted): workflow, mode, prompt, project and agents. */
export type TaskConfig = AppEventOf<"TaskStarted">["data"];

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
function started(state: NoTask, config: TaskConfig): ActiveTask {
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
  };
}

/** A started task running again (a fork of a finished one continues past its end). */
function resumed(state: StartedTask): ActiveTask {
  if (state.status === "active") return state;
  const { outcome: _outcome, ...progress } = state;
  return { ...progress, status: "active" };
}

export function evolve(state: TaskState, recorded: RecordedEvent): TaskState {
  const event = recorded as RecordedEvent & AppEvent;
  const next: TaskState = { ...state, version: recorded.version };
  switch (event.type) {
    case "SessionCreated":
      return { ...next, fsm: event.data.state };
    case "TaskStarted":
      return next.status === "none"
        ? started(next, event.data)
        : { ...resumed(next), config: event.data, head: event.data.project.baseCommit, iteration: 1 };
    case "SessionForked": {
      // A fork continues from the inherited state; a rerun restarts the loop from scratch.
      if (next.status === "none") return { ...next, fsm: event.data.state, step: null };
      const forked: ActiveTask = { ...resumed(next), fsm: event.data.state, step: null };
      if (event.data.reason !== "rerun") return forked;
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
      };
    }
    case "SessionStateChanged":
      // Leaving a state ends its step; the step's outcome event alone does not (the engine
      // decides on a history that already holds that outcome).
      return { ...next, fsm: event.data.to, step: null };
    case "StepScheduled":
      // Steps of other kinds (the runner's own) are no part of the workflow.
      if (!isWorkflowStep(event.data)) return next;
      return { ...next, step: { id: event.data.stepId, state: event.data.input.state, role: event.data.input.role } };
    default:
      return next.status === "none" ? next : evolveTask(next, event);
  }
}

/** The events that change a started task's progress. */
function evolveTask(state: StartedTask, event: RecordedEvent & AppEvent): TaskState {
  switch (event.type) {
    case "IterationStarted":
      return { ...state, iteration: event.data.iteration };
    case "StepStarted":
      if (!state.step || state.step.id !== event.data.stepId) return state;
      return { ...state, invocations: { ...state.invocations, [state.step.role]: (state.invocations[state.step.role] ?? 0) + 1 } };
    case "AgentOutputRecorded":
      return {
        ...state,
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
    default:
      return state;
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

export function foldTask(events: RecordedEvent[]): TaskState {
  return events.reduce(evolve, initialTaskState);
}
