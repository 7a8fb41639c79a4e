// A session as the workflow engine sees it, folded from its events by `evolveWith`: a union
// on `status` (the Decider pattern), each member carrying only what exists then. `none`: no
// task started (yet), only the workflow state and a step; `active`: the task runs, with its
// configuration and the loop's progress; `finished`: the same, plus its outcome.
//
// The engine's fields are what the definition language has for any workflow: the FSM, steps
// and iterations, stages (where the session is, iterations per stage, the stages completed),
// a person asked, the budget. A started task also carries an extension's slice, `pipeline`
// (its type `S`; Forge's is server/forge/state.ts), folded by the extension (extension.ts)
// from the same events: the engine starts it, resets it on a rerun, and hands it every other
// event of a started task.
import type { AgentRole, ThreadMessage } from "../agents/types";
import type { TaskSpec } from "../events/agent-outputs";
import type { BlobRef } from "../events/blobs";
import { isAppEvent, type AppEventOf, type AppFoldEvent } from "../events/catalog";
import { isWorkflowStep } from "../events/step-contract";
import type { FoldEvent } from "../events/types";

/** What a task started with (TaskStarted): workflow, mode, prompt, project and agents. */
export type TaskConfig = AppEventOf<"TaskStarted">["data"];

/** Where a staged workflow is; for an unstaged one, no stage ever starts. */
export interface Stages {
  /** The stage the session is in (null before the first). */
  current: string | null;
  /** Iterations per stage: 1 when the stage starts (what its cap counts). */
  iterations: Record<string, number>;
  /**
   * Runs per stage: each time its work (a step of the stage other than a critique) was
   * scheduled. A stage entered again without a new iteration (Check after a fix loop in
   * Coding) ran again though its iteration did not move.
   */
  runs: Record<string, number>;
  completed: string[];
}

export const noStages: Stages = { current: null, iterations: {}, runs: {}, completed: [] };

/** Why the session waits for a person (PersonNeeded). */
export type PersonNeeded = AppEventOf<"PersonNeeded">["data"];

/** What the session spent, against its budget: agent calls (reserved when scheduled) and tokens, in all and per stage. */
export interface Usage {
  calls: number;
  tokens: number;
  byStage: Record<string, { calls: number; inputTokens: number; outputTokens: number }>;
}

export const noUsage: Usage = { calls: 0, tokens: 0, byStage: {} };

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

/**
 * The thread's window a task's state keeps, all a prompt reads of it (prompt.ts threadContext):
 * at least the latest THREAD_SHOWN messages, from a start that moves in steps of
 * THREAD_WINDOW_STEP, so that successive prompts share their start (a stable prefix a
 * provider caches: docs/scaling.md, "Prompt economics"); each message cut to THREAD_TEXT_CHARS.
 */
export const THREAD_SHOWN = 20;
export const THREAD_WINDOW_STEP = 10;
export const THREAD_TEXT_CHARS = 4000;

/**
 * The thread with `message` added, bounded to its window: a long session's state (and each of
 * its replay snapshots) stays the same size whatever its length, so its latest state is one
 * small row to read (docs/scaling.md, "LangGraph side by side").
 */
function withMessage<S>(state: TaskProgress<S>, message: ThreadMessage): Pick<TaskProgress<S>, "thread" | "threadCount"> {
  const threadCount = state.threadCount + 1;
  const from = Math.floor(Math.max(0, threadCount - THREAD_SHOWN) / THREAD_WINDOW_STEP) * THREAD_WINDOW_STEP;
  // The number, counted from the thread's first message, of the first one kept.
  const firstKept = state.threadCount - state.thread.length;
  const thread = [...state.thread, { from: message.from, text: message.text.slice(0, THREAD_TEXT_CHARS) }];
  return { thread: thread.slice(Math.max(0, from - firstKept)), threadCount };
}

export interface NoTask extends SessionBase {
  status: "none";
}

/** Everything a started task has, running or finished; `S` is the extension's slice. */
interface TaskProgress<S> extends SessionBase {
  config: TaskConfig;
  iteration: number;
  /** The thread's window (THREAD_SHOWN), each message cut to THREAD_TEXT_CHARS: what prompts carry (prompt.ts); the log keeps them all. */
  thread: ThreadMessage[];
  /** How many messages the thread has had in all (the window's start is counted from it). */
  threadCount: number;
  invocations: Partial<Record<AgentRole, number>>;
  /** The commit the next step works from. */
  head: string;
  /** The latest commit and its parent: a rejected execution is rolled back to the parent. */
  lastCommit: { commit: string; parent: string } | null;
  lastDiff: BlobRef | null;
  /**
   * How many thread messages there were when the latest commit was made (its build's message
   * the last of them): a prompt shows the change under review right after that message
   * (docs/scaling.md, "Prompt economics"). Null before the first commit.
   */
  lastDiffAfter: number | null;
  /** The latest bundle of the session's commits (it holds `head` too after a rollback). */
  bundle: BlobRef | null;
  lastVerdict: Pick<AppEventOf<"ReviewVerdictRecorded">["data"], "decision" | "findings" | "summary"> | null;
  lastTestPlan: Pick<AppEventOf<"TestPlanRecorded">["data"], "summary" | "commands"> | null;
  /** Problems of the latest round: shown to the coder next time, listed if the cap is hit. */
  openIssues: string[];
  taskSpec: TaskSpec | null;
  stages: Stages;
  /** Why the session waits for a person, while it does. */
  needed: PersonNeeded | null;
  usage: Usage;
  /** When the task started (ms since epoch), for the wall-time budget. */
  startedAtMs: number | null;
  /** The extension's slice (Forge's pipeline: its artifacts, critiques, feedback). */
  pipeline: S;
}

export interface ActiveTask<S> extends TaskProgress<S> {
  status: "active";
}

export interface FinishedTask<S> extends TaskProgress<S> {
  status: "finished";
  outcome: string;
}

export type StartedTask<S> = ActiveTask<S> | FinishedTask<S>;
export type TaskState<S> = NoTask | StartedTask<S>;

export const initialTaskState: NoTask = { status: "none", version: 0, fsm: "", step: null };

/**
 * An extension's slice and its fold (the part of WorkflowExtension, extension.ts, that the
 * fold reads). Pure, like evolve: no reads, no parsing (the log's data is typed already).
 */
export interface SliceFold<S> {
  /** The slice of a task that just started (and of a rerun). */
  initial: S;
  /**
   * One event of a started task folded into the slice, given the task as it was before the
   * event; the same slice back when the event is none of its business.
   */
  evolve(slice: S, event: AppFoldEvent, task: StartedTask<S>): S;
  /** The problems one of its events leaves for the next round (a critique's findings); null for the others. */
  openIssues(event: AppFoldEvent): string[] | null;
}

/** The progress of a task that just started. */
function started<S>(slice: SliceFold<S>, state: NoTask, config: TaskConfig, recordedAt: string): ActiveTask<S> {
  return {
    ...state,
    status: "active",
    config,
    iteration: 1,
    thread: [],
    threadCount: 0,
    invocations: {},
    head: config.project.baseCommit,
    lastCommit: null,
    lastDiff: null,
    lastDiffAfter: null,
    bundle: null,
    lastVerdict: null,
    lastTestPlan: null,
    openIssues: [],
    taskSpec: null,
    stages: noStages,
    needed: null,
    usage: noUsage,
    startedAtMs: msOf(recordedAt),
    pipeline: slice.initial,
  };
}

function msOf(recordedAt: string): number | null {
  const ms = Date.parse(recordedAt);
  return Number.isFinite(ms) ? ms : null;
}

/** A started task running again (a fork of a finished one continues past its end). */
function resumed<S>(state: StartedTask<S>): ActiveTask<S> {
  if (state.status === "active") return state;
  const { outcome: _outcome, ...progress } = state;
  return { ...progress, status: "active" };
}

/** Reads only what a replay fetches (FoldEvent): version, type, data and recordedAt. */
export function evolveWith<S>(slice: SliceFold<S>, state: TaskState<S>, recorded: FoldEvent): TaskState<S> {
  const next: TaskState<S> = { ...state, version: recorded.version };
  if (!isAppEvent(recorded)) return next;
  const event = recorded;
  switch (event.type) {
    case "SessionCreated":
      return { ...next, fsm: event.data.state };
    case "TaskStarted":
      return next.status === "none"
        ? started(slice, next, event.data, recorded.recordedAt)
        : { ...resumed(next), config: event.data, head: event.data.project.baseCommit, iteration: 1 };
    case "SessionForked": {
      // A fork continues from the state inherited at its position; a rerun restarts the loop
      // from scratch; a fork of a finished position is a finished copy. A fork's budget is
      // its own: spending and the wall clock start again.
      if (next.status === "none") return { ...next, fsm: event.data.state, step: null };
      if (next.status === "finished" && event.data.outcome) return { ...next, step: null };
      const forked: ActiveTask<S> = { ...resumed(next), fsm: event.data.state, step: null };
      const startedAtMs = msOf(recorded.recordedAt) ?? forked.startedAtMs;
      if (event.data.reason !== "rerun") return { ...forked, usage: noUsage, startedAtMs };
      return {
        ...forked,
        iteration: 1,
        openIssues: [],
        lastVerdict: null,
        lastCommit: null,
        lastDiff: null,
        lastDiffAfter: null,
        bundle: null,
        lastTestPlan: null,
        taskSpec: null,
        head: forked.config.project.baseCommit,
        stages: noStages,
        needed: null,
        usage: noUsage,
        startedAtMs,
        pipeline: slice.initial,
      };
    }
    case "SessionResumed": {
      if (next.status === "none") return next;
      const active = resumed(next);
      return {
        ...active,
        step: null,
        config: event.data.budget ? { ...active.config, budget: event.data.budget } : active.config,
        startedAtMs: msOf(recorded.recordedAt) ?? active.startedAtMs,
      };
    }
    case "SessionStateChanged":
      // Leaving a state ends its step; the step's outcome event alone does not (the engine
      // decides on a history that already holds that outcome). A person's errand ends too.
      return next.status === "none"
        ? { ...next, fsm: event.data.to, step: null }
        : { ...next, fsm: event.data.to, step: null, ...(next.needed ? { needed: null } : {}) };
    case "StepScheduled": {
      // Steps of other kinds (the runner's own) are no part of the workflow.
      if (!isWorkflowStep(event.data)) return next;
      const step = { id: event.data.stepId, state: event.data.input.state, role: event.data.input.role };
      if (next.status === "none") return { ...next, step };
      // The stage its input names (a staged step's part of the contract, `input.forge`) runs.
      const stage = event.data.input.forge?.stage ?? null;
      const stages =
        stage && event.data.input.phase !== "critique"
          ? { ...next.stages, runs: { ...next.stages.runs, [stage]: (next.stages.runs[stage] ?? 0) + 1 } }
          : next.stages;
      if (event.data.kind !== "agent") return { ...next, step, stages };
      // Each agent call counts against the budget when it is scheduled (its reservation).
      return { ...next, step, stages, usage: withUsage(next.usage, stage, { calls: 1, inputTokens: 0, outputTokens: 0 }) };
    }
    default:
      return next.status === "none" ? next : evolveStarted(slice, next, event);
  }
}

/** Any other event of a started task: the engine's fields, then the extension's slice. */
function evolveStarted<S>(slice: SliceFold<S>, state: StartedTask<S>, event: AppFoldEvent): StartedTask<S> {
  const next = evolveProgress(state, event);
  const pipeline = slice.evolve(state.pipeline, event, state);
  const openIssues = slice.openIssues(event);
  if (pipeline === state.pipeline && openIssues === null) return next;
  return { ...next, pipeline, ...(openIssues ? { openIssues } : {}) };
}

/** The engine's part of a started task's progress. */
function evolveProgress<S>(state: StartedTask<S>, event: AppFoldEvent): StartedTask<S> {
  switch (event.type) {
    case "IterationStarted":
      return event.data.stage
        ? {
            ...state,
            iteration: event.data.iteration,
            stages: { ...state.stages, iterations: { ...state.stages.iterations, [event.data.stage]: event.data.iteration } },
          }
        : { ...state, iteration: event.data.iteration };
    case "StepStarted":
      if (!state.step || state.step.id !== event.data.stepId) return state;
      return { ...state, invocations: { ...state.invocations, [state.step.role]: (state.invocations[state.step.role] ?? 0) + 1 } };
    case "AgentOutputRecorded":
      return {
        ...state,
        usage: event.data.usage ? withUsage(state.usage, state.stages.current, { calls: 0, ...event.data.usage }) : state.usage,
        openIssues: event.data.validationErrors.length
          ? event.data.validationErrors.map((e) => `${event.data.role} output rejected: ${e}`)
          : state.openIssues,
        ...withMessage(state, {
          from: event.data.role,
          text: event.data.validationErrors.length ? `(invalid output) ${event.data.preview}` : event.data.preview,
        }),
      };
    case "WorkspaceCommitted":
      return {
        ...state,
        head: event.data.commit,
        lastCommit: { commit: event.data.commit, parent: event.data.parent },
        lastDiff: event.data.diff,
        lastDiffAfter: state.threadCount,
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
      return {
        ...state,
        iteration: 1,
        stages: {
          ...state.stages,
          current: event.data.stage,
          iterations: { ...state.stages.iterations, [event.data.stage]: 1 },
          completed: state.stages.completed.filter((s) => s !== event.data.stage),
        },
        needed: null,
      };
    case "StageReopened":
      return {
        ...state,
        iteration: state.stages.iterations[event.data.stage] ?? 1,
        stages: { ...state.stages, current: event.data.stage, completed: state.stages.completed.filter((s) => s !== event.data.stage) },
        needed: null,
      };
    case "StageCompleted":
      return {
        ...state,
        stages: { ...state.stages, completed: [...state.stages.completed.filter((s) => s !== event.data.stage), event.data.stage] },
      };
    case "PersonNeeded":
      return { ...state, needed: event.data };
    case "PersonChose":
    case "GatePassed":
      return { ...state, needed: null };
    case "TaskSpecRecorded":
      return { ...state, taskSpec: event.data.spec };
    case "ExecutionRejected":
      // The rejected changes are discarded: the next attempt starts from before them.
      return { ...state, openIssues: event.data.reasons, head: state.lastCommit?.parent ?? state.head };
    case "OperatorMessagePosted":
      return { ...state, ...withMessage(state, { from: "operator", text: event.data.text }) };
    case "SystemReplied":
      return { ...state, ...withMessage(state, { from: "system", text: event.data.text }) };
    case "SessionFinalized":
      return { ...state, status: "finished", outcome: event.data.outcome, step: null };
    case "BakeOffContender": {
      // A bake-off's contender (docs/bake-off.md): its own task, with its coder, and no bake-off of its own.
      const { bakeOff: _bakeOff, ...config } = state.config;
      return { ...state, config: { ...config, agents: { ...config.agents, coder: event.data.agent } } };
    }
    case "ChangeRequested":
      // A modify fork: the change is the next instruction, and the loop (each stage it runs,
      // for a staged workflow) counts its iterations again from the first.
      return {
        ...state,
        iteration: 0,
        openIssues: [`Change requested: ${event.data.text}`],
        ...withMessage(state, { from: "operator", text: `Change requested: ${event.data.text}` }),
        stages: { ...state.stages, iterations: {}, runs: {} },
      };
    default:
      return state;
  }
}

function withUsage(usage: Usage, stage: string | null, add: { calls: number; inputTokens: number; outputTokens: number }): Usage {
  const key = stage ?? "(none)";
  const was = usage.byStage[key] ?? { calls: 0, inputTokens: 0, outputTokens: 0 };
  return {
    calls: usage.calls + add.calls,
    tokens: usage.tokens + add.inputTokens + add.outputTokens,
    byStage: {
      ...usage.byStage,
      [key]: {
        calls: was.calls + add.calls,
        inputTokens: was.inputTokens + add.inputTokens,
        outputTokens: was.outputTokens + add.outputTokens,
      },
    },
  };
}

/** The task's part of a state, null before a task started: for readers that show any session. */
export function startedTask<S>(state: TaskState<S>): StartedTask<S> | null {
  return state.status === "none" ? null : state;
}

/** How a finished task ended; null while it runs or before it started. */
export function outcomeOf<S>(state: TaskState<S>): string | null {
  return state.status === "finished" ? state.outcome : null;
}

/**
 * The state once `events` (about to be emitted) are appended: the decider reuses evolve on them,
 * as the versions they will be recorded at (evolve reads a FoldEvent: no ids, no metadata; the
 * time is not known yet).
 */
export function applyEmitted<S>(
  slice: SliceFold<S>,
  state: TaskState<S>,
  events: ReadonlyArray<{ type: string; data: unknown }>,
): TaskState<S> {
  return events.reduce<TaskState<S>>(
    (s, e, i) => evolveWith(slice, s, { version: state.version + i + 1, type: e.type, data: e.data, recordedAt: "" }),
    state,
  );
}

export function foldWith<S>(slice: SliceFold<S>, events: readonly FoldEvent[]): TaskState<S> {
  return events.reduce<TaskState<S>>((state, event) => evolveWith(slice, state, event), initialTaskState);
}
