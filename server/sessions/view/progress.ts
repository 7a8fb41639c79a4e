// Where a session stands, folded incrementally from its events: the workflow engine's
// TaskState plus when the current step was scheduled and started (for the "who is working,
// for how long" line) and how the session ended. `statusOf` is the browser-safe part that
// the session view shows and every live update carries. `progressFold` is the same fold as a
// replay fold with snapshots (server/events/snapshots.ts), so a long session's page starts from
// the nearest snapshot instead of folding every event (docs/scaling.md, "Long sessions").
import type { StreamFold } from "../../events/snapshots";
import type { FoldEvent } from "../../events/types";
import {
  allVerdicts,
  definitionFor,
  evolve,
  initialTaskState,
  outcomeOf,
  stageFigures,
  startedTask,
  type StageFigures,
  type StageVerdicts,
  type StartedTask,
  type TaskState,
} from "../../task-engine";
import { TASK_FOLD_VERSION } from "../../workflow/task-fold";
import { stageCap } from "../../workflow/transition";
import { failureOf, type Failure } from "./entries";

interface StepTiming {
  stepId: string;
  scheduledAt: string;
  startedAt: string | null;
  attempt: number | null;
  runnerId: string | null;
  /** Set when a failed attempt waits for its retry. */
  retryAt: string | null;
}

/** The session in numbers, over all its events (the page holds only its latest entries). */
export interface SessionTally {
  verdicts: number;
  approvals: number;
  testCommands: number;
  testsPassed: number;
  stateChanges: number;
}

export interface SessionProgress {
  /** The task's state, its `thread` left empty. */
  task: TaskState;
  timing: StepTiming | null;
  final: { outcome: string; failure: Failure | null; unresolved: string[]; reason: string | null } | null;
  tally: SessionTally;
}

const NO_TALLY: SessionTally = { verdicts: 0, approvals: 0, testCommands: 0, testsPassed: 0, stateChanges: 0 };

export const initialProgress: SessionProgress = { task: initialTaskState, timing: null, final: null, tally: NO_TALLY };

function counted(tally: SessionTally, event: FoldEvent): SessionTally {
  const data = event.data as { decision?: unknown; passed?: unknown };
  switch (event.type) {
    case "ReviewVerdictRecorded":
      return { ...tally, verdicts: tally.verdicts + 1, approvals: tally.approvals + (data.decision === "approve" ? 1 : 0) };
    case "TestCommandRecorded":
      return { ...tally, testCommands: tally.testCommands + 1, testsPassed: tally.testsPassed + (data.passed === true ? 1 : 0) };
    case "SessionStateChanged":
      return { ...tally, stateChanges: tally.stateChanges + 1 };
    default:
      return tally;
  }
}

/**
 * The task state without its conversation thread: the view never shows it (prompts read it
 * from the task fold), and it grows with every message, so a long session's snapshot would be
 * mostly thread (about 1.1 MB at 10,000 events of a review loop, read on every page view).
 */
function withoutThread(task: TaskState): TaskState {
  return "thread" in task && task.thread.length > 0 ? { ...task, thread: [] } : task;
}

export function advance(progress: SessionProgress, event: FoldEvent): SessionProgress {
  const task = withoutThread(evolve(progress.task, event));
  const data = event.data as Record<string, unknown>;
  let { timing, final } = progress;
  switch (event.type) {
    case "StepScheduled":
      timing = {
        stepId: String(data.stepId),
        scheduledAt: event.recordedAt,
        startedAt: null,
        attempt: null,
        runnerId: null,
        retryAt: null,
      };
      break;
    case "StepStarted":
      if (timing && timing.stepId === data.stepId)
        timing = { ...timing, startedAt: event.recordedAt, attempt: Number(data.attempt), runnerId: String(data.runnerId), retryAt: null };
      break;
    case "StepFailed":
      if (timing && timing.stepId === data.stepId)
        timing = { ...timing, startedAt: null, retryAt: typeof data.retryAt === "string" ? data.retryAt : null };
      break;
    case "StepReleased":
      if (timing && timing.stepId === data.stepId) timing = { ...timing, startedAt: null };
      break;
    case "SessionForked":
      final = null;
      timing = null;
      break;
    case "SessionFinalized": {
      const f = event.data as {
        outcome: string;
        reason: string | null;
        unresolved: string[];
        errorClass: string | null;
        diagnosis: string | null;
        iterations: number;
      };
      final = { outcome: f.outcome, reason: f.reason, unresolved: f.unresolved, failure: failureOf({ kind: "finalized", ...f }) };
      break;
    }
  }
  if (!task.step) timing = null;
  return { task, timing, final, tally: counted(progress.tally, event) };
}

export function foldProgress(events: readonly FoldEvent[], from: SessionProgress = initialProgress): SessionProgress {
  return events.reduce(advance, from);
}

/** Bump when `advance`'s behaviour or SessionProgress's shape changes (the task fold's own version is in the name). */
const PROGRESS_FOLD_VERSION = 1;

/** `advance` as a replay fold: its snapshots are keyed by the task fold's version too, since it folds TaskState. */
export const progressFold: StreamFold<SessionProgress> = {
  name: `session_progress+task@${TASK_FOLD_VERSION}`,
  version: PROGRESS_FOLD_VERSION,
  initial: initialProgress,
  evolve: advance,
};

export interface SessionStatus {
  /** Stream version the status is as of. */
  version: number;
  /** The workflow state (FSM), e.g. `awaiting_operator_confirm`, `building`, `approved`. */
  state: string;
  status: TaskState["status"];
  mode: string | null;
  workflow: string | null;
  iteration: number;
  maxIterations: number | null;
  outcome: string | null;
  /** Its workflow has a modify entry: once finished, a person may modify it (a fork). */
  modifiable: boolean;
  /** The step being worked on, if any: which role, in which state, since when. */
  step: {
    id: string;
    role: string;
    state: string;
    scheduledAt: string | null;
    startedAt: string | null;
    attempt: number | null;
    runnerId: string | null;
    retryAt: string | null;
  } | null;
  final: SessionProgress["final"];
  /** Verdicts, test commands and state changes over the whole session. */
  tally: SessionTally;
  /** A staged session's (the Forge pipeline's) stages: runs and verdicts each (stageFigures); null for any other. */
  stages: StageFigures[] | null;
  /** Their verdicts added up (allVerdicts); null for an unstaged session. */
  stageVerdicts: StageVerdicts | null;
}

/** The cap the current iteration counts against: a staged workflow's stage's own, else the task's. */
function hasModifyEntry(task: StartedTask): boolean {
  try {
    return !!definitionFor(task).modify;
  } catch {
    return false;
  }
}

function capOf(task: StartedTask): number {
  if (!task.stages.current) return task.config.maxIterations;
  try {
    return stageCap(definitionFor(task), task, task.stages.current);
  } catch {
    return task.config.maxIterations;
  }
}

export function statusOf(progress: SessionProgress, fallbackState: string): SessionStatus {
  const { task, timing } = progress;
  const started = startedTask(task);
  const figures = started?.stages.current ? stageFigures(started) : null;
  const step = task.step
    ? {
        id: task.step.id,
        role: task.step.role,
        state: task.step.state,
        scheduledAt: timing?.stepId === task.step.id ? timing.scheduledAt : null,
        startedAt: timing?.stepId === task.step.id ? timing.startedAt : null,
        attempt: timing?.stepId === task.step.id ? timing.attempt : null,
        runnerId: timing?.stepId === task.step.id ? timing.runnerId : null,
        retryAt: timing?.stepId === task.step.id ? timing.retryAt : null,
      }
    : null;
  return {
    version: task.version,
    state: task.fsm || fallbackState,
    status: task.status,
    mode: started?.config.mode ?? null,
    workflow: started?.config.workflow ?? null,
    iteration: started?.iteration ?? 0,
    maxIterations: started ? capOf(started) : null,
    outcome: outcomeOf(task),
    modifiable: started ? hasModifyEntry(started) : false,
    step,
    final: progress.final,
    tally: progress.tally,
    stages: figures,
    stageVerdicts: figures ? allVerdicts(figures) : null,
  };
}
