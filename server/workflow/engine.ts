// The workflow engine as a pure decider: `evolve` folds a session's events into TaskState,
// `decide` turns a command (operator action or step result) into new events by walking
// the session's workflow definition. No I/O, no clock, no random ids: those come in
// through `DecideContext`, so every transition is reproducible from the log.
import { AppError, type ErrorClass } from "../errors";
import type { AppEvent } from "../events/catalog";
import type { BlobRef } from "../events/blobs";
import type { NewEvent, RecordedEvent } from "../events/types";
import type { AgentRole, ThreadMessage } from "../agents/types";
import type { StateSpec, StepSpec, Transition, WorkflowDefinition } from "./definition";
import {
  enforceReviewRule,
  filesOutside,
  parseStrictJson,
  ZReviewVerdict,
  ZTaskSpec,
  ZTestPlan,
  type ReviewFinding,
  type TaskSpec,
  type TestPlan,
} from "./outputs";

type EventOf<T extends AppEvent["type"]> = Extract<AppEvent, { type: T }>;
type TaskStartedData = EventOf<"TaskStarted">["data"];

export interface ChangedFile {
  path: string;
  status: "added" | "modified" | "deleted" | "renamed";
  previousPath?: string;
}

/** What an agent step hands back to the engine (recorded in StepCompleted.output). */
export interface AgentStepOutput {
  kind: "agent";
  agentId: string;
  raw: BlobRef;
  preview: string;
  simulated: boolean;
  usage?: { inputTokens: number; outputTokens: number };
  commit?: { commit: string; parent: string; empty: boolean; changedFiles: ChangedFile[]; diff: BlobRef };
}

export interface CommandResultOutput {
  argv: string[];
  status: "ran" | "refused";
  exitCode: number | null;
  expectedExitCode: number;
  durationMs: number;
  stdoutTail: string;
  stderrTail: string;
  errorClass: ErrorClass | null;
  reason: string | null;
}

export interface CommandsStepOutput {
  kind: "commands";
  results: CommandResultOutput[];
}

export type StepOutput = AgentStepOutput | CommandsStepOutput;

/** The input snapshot a step is scheduled with: everything the runner needs, nothing more. */
export interface StepInput {
  workflow: string;
  state: string;
  role: AgentRole;
  phase: StepSpec["phase"];
  output: StepSpec["output"];
  prompt: string;
  context: ThreadMessage[];
  agent: unknown;
  /** Earlier invocations of this role in the session (the runner adds attempt − 1). */
  invocation: number;
  workspace: { repoPath: string; baseCommit: string; head: string };
  /** Diff to show the agent (reviewer, tester): a blob the runner loads. */
  diff: BlobRef | null;
  commands: TestPlan["commands"];
  allowlist: string[][];
}

export interface TaskState {
  version: number;
  status: "none" | "active" | "finished";
  config: TaskStartedData | null;
  fsm: string;
  iteration: number;
  thread: ThreadMessage[];
  step: { id: string; state: string; role: AgentRole } | null;
  invocations: Partial<Record<AgentRole, number>>;
  head: string | null;
  /** The latest commit and its parent: a rejected execution is rolled back to the parent. */
  lastCommit: { commit: string; parent: string } | null;
  lastDiff: BlobRef | null;
  lastVerdict: { decision: string; findings: ReviewFinding[]; summary: string } | null;
  lastTestPlan: TestPlan | null;
  /** Problems of the latest round: shown to the coder next time, listed if the cap is hit. */
  openIssues: string[];
  taskSpec: TaskSpec | null;
  outcome: string | null;
}

export const initialTaskState: TaskState = {
  version: 0,
  status: "none",
  config: null,
  fsm: "",
  iteration: 0,
  thread: [],
  step: null,
  invocations: {},
  head: null,
  lastCommit: null,
  lastDiff: null,
  lastVerdict: null,
  lastTestPlan: null,
  openIssues: [],
  taskSpec: null,
  outcome: null,
};

const THREAD_PREVIEW_CHARS = 4000;

export function evolve(state: TaskState, recorded: RecordedEvent): TaskState {
  const event = recorded as RecordedEvent & AppEvent;
  const next: TaskState = { ...state, version: recorded.version };
  switch (event.type) {
    case "TaskStarted":
      return { ...next, status: "active", config: event.data, head: event.data.project.baseCommit, iteration: 1 };
    case "SessionCreated":
      return { ...next, fsm: event.data.state };
    case "SessionForked": {
      // A fork continues from the inherited state; a rerun restarts the loop from scratch.
      const forked: TaskState = { ...next, fsm: event.data.state, status: next.config ? "active" : next.status, step: null, outcome: null };
      if (event.data.reason !== "rerun") return forked;
      return {
        ...forked,
        iteration: 1,
        openIssues: [],
        lastVerdict: null,
        lastCommit: null,
        lastDiff: null,
        lastTestPlan: null,
        taskSpec: null,
        head: next.config?.project.baseCommit ?? null,
      };
    }
    case "SessionStateChanged":
      // Leaving a state ends its step; the step's outcome event alone does not (the engine
      // decides on a history that already holds that outcome).
      return { ...next, fsm: event.data.to, step: null };
    case "IterationStarted":
      return { ...next, iteration: event.data.iteration };
    case "StepScheduled": {
      const input = event.data.input as unknown as StepInput;
      return { ...next, step: { id: event.data.stepId, state: input.state, role: input.role } };
    }
    case "StepStarted":
      if (!state.step || state.step.id !== event.data.stepId) return next;
      return { ...next, invocations: { ...state.invocations, [state.step.role]: (state.invocations[state.step.role] ?? 0) + 1 } };
    case "AgentOutputRecorded":
      return {
        ...next,
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
        ...next,
        head: event.data.commit,
        lastCommit: { commit: event.data.commit, parent: event.data.parent },
        lastDiff: event.data.diff,
      };
    case "ReviewVerdictRecorded":
      return {
        ...next,
        lastVerdict: { decision: event.data.decision, findings: event.data.findings, summary: event.data.summary },
        openIssues:
          event.data.decision === "approve"
            ? []
            : event.data.findings
                .map((f) => `[${f.severity}] ${f.file}${f.line ? `:${f.line}` : ""}: ${f.message}`)
                .concat(event.data.override ? [event.data.override] : []),
      };
    case "TestPlanRecorded":
      return { ...next, lastTestPlan: { summary: event.data.summary, commands: event.data.commands }, openIssues: [] };
    case "TestCommandRecorded":
      return event.data.passed
        ? next
        : {
            ...next,
            openIssues: [
              ...state.openIssues,
              `test ${event.data.argv.join(" ")}: ${event.data.reason ?? `exit ${event.data.exitCode}`} ${event.data.stderrTail || event.data.stdoutTail}`
                .trim()
                .slice(0, 1000),
            ],
          };
    case "TaskSpecRecorded":
      return { ...next, taskSpec: event.data.spec as unknown as TaskSpec };
    case "ExecutionRejected":
      // The rejected changes are discarded: the next attempt starts from before them.
      return { ...next, openIssues: event.data.reasons, head: state.lastCommit?.parent ?? state.head };
    case "OperatorMessagePosted":
      return { ...next, thread: [...state.thread, { from: "operator", text: event.data.text }] };
    case "SystemReplied":
      return { ...next, thread: [...state.thread, { from: "system", text: event.data.text }] };
    case "SessionFinalized":
      return { ...next, status: "finished", outcome: event.data.outcome, step: null };
    default:
      return next;
  }
}

export function foldTask(events: RecordedEvent[]): TaskState {
  return events.reduce(evolve, initialTaskState);
}

// ---------------------------------------------------------------------------------------

export type TaskCommand =
  | { type: "StartTask"; title: string; config: TaskStartedData }
  /** Fires the definition's start trigger: after StartTask, or in a rerun fork. */
  | { type: "Begin" }
  | { type: "Confirm"; via: EventOf<"OperatorConfirmed">["data"]["via"] }
  | { type: "FollowUp"; text: string }
  | { type: "Cancel"; reason: string }
  | { type: "StepSucceeded"; stepId: string; attempt: number; output: StepOutput; rawText: string | null }
  | { type: "StepGaveUp"; stepId: string; attempt: number; errorClass: ErrorClass; message: string };

export interface DecideContext {
  definition: WorkflowDefinition;
  newId: () => string;
  /** Attempts per agent step (1 + retries with backoff for retryable failures). */
  maxAttempts: number;
  stepTimeoutMs: number;
}

type Emitted = NewEvent & AppEvent;

/** `/confirm` as a word of its own, or a line that is just "confirm" / "confirmed" / "go ahead". */
const CONFIRM_SIGNAL = /(^|\s)\/confirm\b(?![/\w])|^\s*(confirm|confirmed|go ahead)[.!]?\s*$/im;

export function hasConfirmSignal(text: string): boolean {
  return CONFIRM_SIGNAL.test(text);
}

function currentState(def: WorkflowDefinition, state: TaskState): StateSpec {
  const spec = def.states[state.fsm];
  if (!spec) throw new AppError("INTERNAL", `session is in state "${state.fsm}", which workflow ${def.id} does not define`);
  return spec;
}

function guardHolds(guard: Transition["guard"], state: TaskState): boolean {
  const cap = state.config?.maxIterations ?? 0;
  switch (guard) {
    case undefined:
      return true;
    case "under_cap":
      return state.iteration < cap;
    case "at_cap":
      return state.iteration >= cap;
    case "mode_proposal":
      return state.config?.mode === "proposal";
    case "mode_implementation":
      return state.config?.mode === "implementation";
  }
}

/** Fires `trigger` in the current state: the transition, then entering the target. */
function fire(
  def: WorkflowDefinition,
  ctx: DecideContext,
  state: TaskState,
  trigger: string,
  extra: { errorClass?: ErrorClass; diagnosis?: string } = {},
): Emitted[] {
  const spec = currentState(def, state);
  let target: string;
  let transition: Transition | undefined;
  if (trigger === "cancel" || trigger === "step_failed") {
    target = def.global[trigger];
  } else {
    if (spec.type === "terminal") throw new AppError("PRECONDITION_FAILED", `session already finished (${state.outcome ?? state.fsm})`);
    transition = spec.on[trigger]?.find((t) => guardHolds(t.guard, state));
    if (!transition) throw new AppError("INTERNAL", `workflow ${def.id}: no transition from "${state.fsm}" on "${trigger}"`);
    target = transition.target;
  }
  const reason = transition?.reason ?? (trigger === "cancel" || trigger === "step_failed" ? trigger : trigger);
  const events: Emitted[] = [{ type: "SessionStateChanged", data: { from: state.fsm, to: target, reason } }];
  let entered: TaskState = { ...state, fsm: target };
  if (transition?.iterate) {
    const iteration = state.iteration + 1;
    events.push({ type: "IterationStarted", data: { iteration, reason: transition.reason ?? trigger } });
    entered = { ...entered, iteration };
  }
  const targetSpec = def.states[target]!;
  if (targetSpec.type === "step") {
    events.push(scheduleStep(ctx, entered, target, targetSpec.step));
  } else if (targetSpec.type === "terminal") {
    const failed = targetSpec.outcome !== "approved" && targetSpec.outcome !== "done";
    events.push({
      type: "SessionFinalized",
      data: {
        outcome: targetSpec.outcome,
        reason: transition?.reason ?? (trigger === "cancel" ? "cancelled by an operator" : null),
        iterations: entered.iteration,
        unresolved: failed ? state.openIssues : [],
        errorClass: extra.errorClass ?? (trigger === "cancel" ? "cancelled" : null),
        diagnosis: extra.diagnosis ?? null,
      },
    });
  }
  return events;
}

function promptFor(state: TaskState, spec: StepSpec): string {
  const config = state.config!;
  const parts = [spec.instruction, `\nTask:\n${config.prompt}`];
  if (state.taskSpec && (spec.role === "executor" || spec.role === "tester")) {
    parts.push(`\nTaskSpec:\n${JSON.stringify(state.taskSpec, null, 2)}`);
  }
  if ((spec.phase === "build" || spec.phase === "execute") && state.openIssues.length) {
    parts.push(`\nResolve these from the previous round:\n${state.openIssues.map((i) => `- ${i}`).join("\n")}`);
  }
  return parts.join("\n");
}

function scheduleStep(ctx: DecideContext, state: TaskState, stateName: string, spec: StepSpec): Emitted {
  const config = state.config!;
  const input: StepInput = {
    workflow: ctx.definition.id,
    state: stateName,
    role: spec.role,
    phase: spec.phase,
    output: spec.output,
    prompt: promptFor(state, spec),
    context: state.thread.slice(-20).map((m) => ({ from: m.from, text: m.text.slice(0, THREAD_PREVIEW_CHARS) })),
    agent: config.agents[spec.role] ?? null,
    invocation: state.invocations[spec.role] ?? 0,
    workspace: { repoPath: config.project.repoPath, baseCommit: config.project.baseCommit, head: state.head ?? config.project.baseCommit },
    diff: spec.phase === "verdict" || spec.phase === "test" ? state.lastDiff : null,
    commands: spec.output === "commands" ? (state.lastTestPlan?.commands ?? []) : [],
    allowlist: config.project.allowlist,
  };
  return {
    type: "StepScheduled",
    data: {
      stepId: ctx.newId(),
      kind: spec.output === "commands" ? "commands" : "agent",
      input: input as never,
      timeoutMs: ctx.stepTimeoutMs,
      // Commands are not retried: a failing test is an answer, not an accident.
      maxAttempts: spec.output === "commands" ? 1 : ctx.maxAttempts,
    },
  };
}

/** Interprets a step's output against what its state requires: events + the trigger it fires. */
interface Interpretation {
  events: Emitted[];
  trigger: string;
  /** Why the output was rejected, when it was: carried into the outcome if the session ends. */
  failure?: { errorClass: ErrorClass; diagnosis: string };
}

const schemaFailure = (errors: string[]) => ({ errorClass: "schema_invalid" as const, diagnosis: errors.join("; ").slice(0, 500) });

function interpret(state: TaskState, spec: StepSpec, cmd: Extract<TaskCommand, { type: "StepSucceeded" }>): Interpretation {
  const { stepId, attempt, output } = cmd;
  if (output.kind === "commands") {
    const events: Emitted[] = output.results.map((r, index) => ({
      type: "TestCommandRecorded",
      data: { stepId, index, ...r, passed: r.status === "ran" && r.exitCode === r.expectedExitCode },
    }));
    const failed = output.results.find((r) => !(r.status === "ran" && r.exitCode === r.expectedExitCode));
    if (output.results.length > 0 && !failed) return { events, trigger: "tests_passed" };
    const diagnosis = failed ? `${failed.argv.join(" ")}: ${failed.reason ?? `exit ${failed.exitCode}`}` : "the test plan had no commands";
    return { events, trigger: "tests_failed", failure: { errorClass: failed?.errorClass ?? "command_failed", diagnosis } };
  }
  const text = cmd.rawText ?? output.preview;
  const recordOutput = (parsed: unknown, validationErrors: string[]): Emitted => ({
    type: "AgentOutputRecorded",
    data: {
      stepId,
      attempt,
      role: spec.role,
      agentId: output.agentId,
      phase: spec.phase,
      raw: output.raw,
      preview: output.preview,
      parsed: (parsed ?? null) as never,
      validationErrors,
      simulated: output.simulated,
      ...(output.usage ? { usage: output.usage } : {}),
    },
  });
  const committed: Emitted[] = output.commit ? [{ type: "WorkspaceCommitted", data: { stepId, ...output.commit } }] : [];
  switch (spec.output) {
    case "text":
      return { events: [recordOutput(null, [])], trigger: "done" };
    case "build":
      return { events: [recordOutput(null, []), ...committed], trigger: "done" };
    case "review_verdict": {
      const parsed = parseStrictJson(text, ZReviewVerdict);
      if (!parsed.ok)
        return { events: [recordOutput(null, parsed.errors)], trigger: "schema_invalid", failure: schemaFailure(parsed.errors) };
      const enforced = enforceReviewRule(parsed.value);
      return {
        events: [
          recordOutput(parsed.value, []),
          {
            type: "ReviewVerdictRecorded",
            data: {
              stepId,
              decision: enforced.decision,
              modelDecision: parsed.value.decision,
              override: enforced.override,
              summary: parsed.value.summary,
              findings: parsed.value.findings,
            },
          },
        ],
        trigger: enforced.decision,
      };
    }
    case "test_plan": {
      const parsed = parseStrictJson(text, ZTestPlan);
      if (!parsed.ok)
        return { events: [recordOutput(null, parsed.errors)], trigger: "schema_invalid", failure: schemaFailure(parsed.errors) };
      return {
        events: [recordOutput(parsed.value, []), { type: "TestPlanRecorded", data: { stepId, ...parsed.value } }],
        trigger: "plan_valid",
      };
    }
    case "task_spec": {
      const parsed = parseStrictJson(text, ZTaskSpec);
      if (!parsed.ok)
        return { events: [recordOutput(null, parsed.errors)], trigger: "task_spec_invalid", failure: schemaFailure(parsed.errors) };
      const allowed = manifestGlobs(state, "planner");
      const outside = allowed ? filesOutside(parsed.value.files, allowed) : [];
      if (outside.length) {
        const problem = `files outside the planner's manifest (${allowed!.join(", ")}): ${outside.join(", ")}`;
        return { events: [recordOutput(parsed.value, [problem])], trigger: "task_spec_invalid", failure: schemaFailure([problem]) };
      }
      return {
        events: [recordOutput(parsed.value, []), { type: "TaskSpecRecorded", data: { stepId, spec: parsed.value as never } }],
        trigger: "task_spec_valid",
      };
    }
    case "execution": {
      const reasons = executionProblems(state, output);
      const events = [recordOutput(null, []), ...committed];
      if (reasons.length) {
        return {
          events: [...events, { type: "ExecutionRejected", data: { stepId, reasons } }],
          trigger: "execution_rejected",
          failure: { errorClass: "tool_error", diagnosis: reasons.join("; ") },
        };
      }
      return { events, trigger: "execution_done" };
    }
    case "commands":
      throw new AppError("INTERNAL", "a commands step returned agent output");
  }
}

function manifestGlobs(state: TaskState, role: AgentRole): string[] | null {
  const agent = state.config?.agents[role] as { manifest?: { allowedFiles?: string[] } } | undefined;
  return agent?.manifest?.allowedFiles ?? null;
}

/** The orchestrator's check of an executor's work: from git, never from the agent's word. */
function executionProblems(state: TaskState, output: AgentStepOutput): string[] {
  const changed = (output.commit?.changedFiles ?? []).flatMap((f) => (f.previousPath ? [f.path, f.previousPath] : [f.path]));
  if (changed.length === 0) return ["no files changed: the TaskSpec was not carried out"];
  const problems: string[] = [];
  const manifest = manifestGlobs(state, "executor");
  if (manifest) {
    const outside = filesOutside(changed, manifest);
    if (outside.length) problems.push(`changed files outside the executor's manifest (${manifest.join(", ")}): ${outside.join(", ")}`);
  }
  if (state.taskSpec) {
    const notInSpec = filesOutside(changed, state.taskSpec.files);
    if (notInSpec.length) problems.push(`changed files the TaskSpec does not name: ${notInSpec.join(", ")}`);
  }
  return problems;
}

export function decide(state: TaskState, command: TaskCommand, ctx: DecideContext): Emitted[] {
  const def = ctx.definition;
  switch (command.type) {
    case "StartTask": {
      if (state.status !== "none") throw new AppError("CONFLICT", "this session already exists");
      if (!def.modes.includes(command.config.mode)) {
        throw new AppError("INVALID_INPUT", `workflow ${def.id} has no mode "${command.config.mode}" (modes: ${def.modes.join(", ")})`);
      }
      const created: Emitted[] = [
        { type: "SessionCreated", data: { title: command.title, workflow: def.id, state: def.initial } },
        { type: "TaskStarted", data: command.config },
      ];
      const started = created.reduce<TaskState>((s, e, i) => evolve(s, { ...fakeRecorded(e), version: i + 1 }), state);
      return [...created, ...fire(def, ctx, started, "start")];
    }
    case "Begin":
      if (state.status !== "active" || state.fsm !== def.initial)
        throw new AppError("PRECONDITION_FAILED", `cannot begin: session is in "${state.fsm}"`);
      return fire(def, ctx, state, "start");
    case "Confirm": {
      requireActive(state);
      const spec = currentState(def, state);
      if (spec.type !== "wait" || !spec.on.confirm) {
        throw new AppError("CONFLICT", `nothing to confirm: the session already moved on (it is in "${state.fsm}")`, { state: state.fsm });
      }
      return [{ type: "OperatorConfirmed", data: { via: command.via } }, ...fire(def, ctx, state, "confirm")];
    }
    case "FollowUp": {
      const posted: Emitted = { type: "OperatorMessagePosted", data: { text: command.text } };
      if (state.status === "finished") {
        return [
          posted,
          { type: "SystemReplied", data: { text: `This session has finished (${state.outcome}). Rerun it to start a new execution.` } },
        ];
      }
      requireActive(state);
      const spec = currentState(def, state);
      if (spec.type === "wait" && spec.on.confirm) {
        if (hasConfirmSignal(command.text)) {
          const withMessage = evolve(state, { ...fakeRecorded(posted), version: state.version + 1 });
          return [posted, { type: "OperatorConfirmed", data: { via: "followup" } }, ...fire(def, ctx, withMessage, "confirm")];
        }
        return [
          posted,
          {
            type: "SystemReplied",
            data: {
              text: "Pending confirmation: nothing is built until an operator confirms (Confirm button, /confirm, or `catcafe task confirm`).",
            },
          },
        ];
      }
      return [posted];
    }
    case "Cancel": {
      if (state.status === "finished") throw new AppError("PRECONDITION_FAILED", `session already finished (${state.outcome})`);
      requireActive(state);
      const events: Emitted[] = [{ type: "CancelRequested", data: { reason: command.reason } }];
      if (state.step) events.push({ type: "StepCancelled", data: { stepId: state.step.id } });
      return [...events, ...fire(def, ctx, state, "cancel", { errorClass: "cancelled", diagnosis: command.reason })];
    }
    case "StepSucceeded": {
      if (state.status !== "active" || state.step?.id !== command.stepId) return [];
      const spec = def.states[state.step.state];
      if (!spec || spec.type !== "step") return [];
      const { events, trigger, failure } = interpret(state, spec.step, command);
      const after = events.reduce<TaskState>((s, e, i) => evolve(s, { ...fakeRecorded(e), version: state.version + i + 1 }), state);
      return [...events, ...fire(def, ctx, after, trigger, failure ?? {})];
    }
    case "StepGaveUp": {
      if (state.status !== "active" || state.step?.id !== command.stepId) return [];
      return fire(def, ctx, state, "step_failed", { errorClass: command.errorClass, diagnosis: command.message });
    }
  }
}

function requireActive(state: TaskState): void {
  if (state.status === "none") throw new AppError("NOT_FOUND", "no such task session");
  if (state.status === "finished") throw new AppError("CONFLICT", `the session already finished (${state.outcome}): it moved on`);
}

/** Lets decide reuse evolve on events it is about to emit (only type/data/version are read). */
function fakeRecorded(e: Emitted): RecordedEvent {
  return {
    position: 0,
    txId: 0,
    eventId: "",
    streamId: "",
    version: 0,
    type: e.type,
    data: e.data,
    metadata: { actor: { kind: "system", id: "engine" }, correlationId: "", causationId: null, schemaVersion: 1 },
    recordedAt: "",
  };
}
