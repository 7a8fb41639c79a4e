// Given / when / then for the workflow decider (Emmett style): given these events, when
// this command, then exactly these events or this AppError. Every event the decider emits
// is run through the event catalog, so a passing test also proves the events are valid and
// that nothing in them would be stripped on append. Also: a session-history builder that
// writes the events a real session records (engine + runner) without calling the decider.
import crypto from "node:crypto";
import { expect } from "vitest";
import { AppError, type AppErrorCode, type ErrorClass } from "../../server/errors";
import type { BlobRef } from "../../server/events/blobs";
import { appRegistry, type AppEvent, type AppEventType } from "../../server/events/catalog";
import type { RecordedEvent } from "../../server/events/types";
import type { AgentRole } from "../../server/agents/types";
import type { ParsedOutput } from "../../server/events/agent-outputs";
import type { AgentStepOutput, ChangedFile, CommandResultOutput, CommandsStepOutput, StepInput } from "../../server/events/step-contract";
import { forgeExtension } from "../../server/forge/extension";
import type { WorkflowDefinition } from "../../server/workflow/definition";
import { decide, type DecideContext, foldTask, type StartedTask, type TaskCommand } from "../../server/task-engine";

type EventOf<T extends AppEventType> = Extract<AppEvent, { type: T }>;
export type TaskConfig = EventOf<"TaskStarted">["data"];

/** An expected event: its type and the data fields that matter (matched recursively). */
export type ExpectedEvent = { [T in AppEventType]: { type: T; data?: Partial<EventOf<T>["data"]> } }[AppEventType];

/** RFC 4122-shaped ids from a counter: `prefix` keeps history ids apart from decided ones. */
export function counterIds(prefix = "00000000"): () => string {
  let n = 0;
  return () => `${prefix}-0000-4000-8000-${(++n).toString(16).padStart(12, "0")}`;
}

/** The id the decider's n-th `newId()` call returns in a fresh test context. */
export function decidedId(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

export function testContext(definition: WorkflowDefinition): DecideContext {
  return { definition, extension: forgeExtension, newId: counterIds(), maxAttempts: 4, stepTimeoutMs: 600_000 };
}

/** Events as the store hands them back: versions 1, 2, 3, ... in one stream. */
export function recorded(events: readonly AppEvent[], fromVersion = 1): RecordedEvent[] {
  return events.map((e, i) => {
    const version = fromVersion + i;
    return {
      position: version,
      txId: version,
      eventId: `ffffffff-0000-4000-8000-${version.toString(16).padStart(12, "0")}`,
      streamId: "session-under-test",
      version,
      type: e.type,
      data: e.data,
      metadata: { actor: { kind: "system", id: "test" }, correlationId: "test", causationId: null, schemaVersion: 1 },
      recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, version)).toISOString(),
    };
  });
}

/** Valid per the catalog, and lossless: encoding does not drop or rewrite any field. */
export function expectValidEvents(events: readonly { type: string; data: unknown }[]): void {
  for (const e of events) {
    const encoded = appRegistry.encode(e.type, e.data);
    expect(encoded.data, `${e.type} loses fields when encoded`).toEqual(e.data);
  }
}

export interface Outcome {
  events: AppEvent[];
  /** The state after the given events and the emitted ones (a task has started by then). */
  state: StartedTask;
}

export function workflowSpec(definition: WorkflowDefinition) {
  return {
    given(events: readonly AppEvent[]) {
      expectValidEvents(events);
      const history = recorded(events);
      return {
        when(command: TaskCommand) {
          const run = (): Outcome => {
            const emitted = decide(foldTask(history), command, testContext(definition)) as AppEvent[];
            expectValidEvents(emitted);
            const state = foldTask([...history, ...recorded(emitted, history.length + 1)]);
            if (state.status === "none") throw new Error("no task has started after these events");
            return { events: emitted, state };
          };
          return {
            /** Exactly these events, in this order (data matched on the fields given). */
            then(expected: readonly ExpectedEvent[]): Outcome {
              const outcome = run();
              expect(outcome.events.map((e) => e.type)).toEqual(expected.map((e) => e.type));
              expect(outcome.events).toMatchObject(expected.map((e) => ({ type: e.type, ...(e.data ? { data: e.data } : {}) })));
              return outcome;
            },
            thenNothing(): void {
              expect(run().events).toEqual([]);
            },
            thenThrows(code: AppErrorCode, message: string | RegExp): AppError {
              let thrown: unknown;
              try {
                run();
              } catch (err) {
                thrown = err;
              }
              expect(thrown, "the decider did not throw").toBeInstanceOf(AppError);
              const error = thrown as AppError;
              expect(error.code).toBe(code);
              if (typeof message === "string") expect(error.message).toBe(message);
              else expect(error.message).toMatch(message);
              return error;
            },
          };
        },
      };
    },
  };
}

// ---- Fixtures ---------------------------------------------------------------------------

export const BASE_COMMIT = "a".repeat(40);

export function blobRef(content: string, mediaType = "text/plain; charset=utf-8"): BlobRef {
  return { blob: crypto.createHash("sha256").update(content).digest("hex"), size: Buffer.byteLength(content), mediaType };
}

export function commitSha(label: string): string {
  return crypto.createHash("sha1").update(label).digest("hex");
}

/** An agent step's output: the whole reply is `text` (raw blob + preview). */
export function agentOutput(text: string, extra: Partial<AgentStepOutput> = {}): AgentStepOutput {
  return { kind: "agent", agentId: "scripted-agent", raw: blobRef(text), preview: text.slice(0, 500), simulated: true, ...extra };
}

export interface BuildCommit {
  commit: string;
  parent: string;
  empty: boolean;
  changedFiles: ChangedFile[];
  diff: BlobRef;
}

export function buildCommit(label: string, changedFiles: ChangedFile[], parent = BASE_COMMIT): BuildCommit {
  return {
    commit: commitSha(label),
    parent,
    empty: changedFiles.length === 0,
    changedFiles,
    diff: blobRef(`diff --git ${label}`, "text/x-diff"),
  };
}

export function commandResult(argv: string[], extra: Partial<CommandResultOutput> = {}): CommandResultOutput {
  return {
    argv,
    status: "ran",
    exitCode: 0,
    expectedExitCode: 0,
    durationMs: 120,
    stdoutTail: "ok",
    stderrTail: "",
    errorClass: null,
    reason: null,
    ...extra,
  };
}

export function commandsOutput(results: CommandResultOutput[]): CommandsStepOutput {
  return { kind: "commands", results };
}

export function succeeded(stepId: string, output: AgentStepOutput | CommandsStepOutput, attempt = 1): TaskCommand {
  return { type: "StepSucceeded", stepId, attempt, output, rawText: output.kind === "agent" ? output.preview : null };
}

export function gaveUp(stepId: string, errorClass: ErrorClass, message: string, attempt = 4): TaskCommand {
  return { type: "StepGaveUp", stepId, attempt, errorClass, message };
}

// ---- Session histories --------------------------------------------------------------------

/**
 * Writes a session's events by hand, the way the engine and the runner record them:
 * `enter` records the transition (and the step it schedules, claimed by a runner);
 * `stepDone` / `agentSaid` record the runner's result and the engine's reading of it.
 */
export class SessionHistory {
  readonly events: AppEvent[] = [];
  fsm = "";
  iteration = 0;
  stepId: string | null = null;
  private stepRole: AgentRole | null = null;
  private config: TaskConfig | null = null;
  private readonly nextId = counterIds("11111111");

  constructor(readonly definition: WorkflowDefinition) {}

  add(...events: AppEvent[]): this {
    this.events.push(...events);
    return this;
  }

  /** SessionCreated + TaskStarted (what StartTask records before its first transition). */
  created(config: TaskConfig, title = "Add a --verbose flag"): this {
    this.fsm = this.definition.initial;
    this.iteration = 1;
    this.config = config;
    return this.add(
      { type: "SessionCreated", data: { title, workflow: this.definition.id, state: this.definition.initial } },
      { type: "TaskStarted", data: config },
    );
  }

  /** The transition into `to`: state change, iteration if counted, step scheduled + started. */
  enter(to: string, options: { reason?: string; iterate?: string } = {}): this {
    this.add({ type: "SessionStateChanged", data: { from: this.fsm, to, reason: options.reason ?? "done" } });
    this.fsm = to;
    if (options.iterate) {
      this.iteration += 1;
      this.add({ type: "IterationStarted", data: { iteration: this.iteration, reason: options.iterate } });
    }
    const spec = this.definition.states[to];
    if (spec?.type === "step") {
      const stepId = this.nextId();
      const kind = spec.step.output === "commands" ? "commands" : "agent";
      this.add(
        {
          type: "StepScheduled",
          data: {
            stepId,
            kind,
            input: this.stepInput(to, spec.step),
            timeoutMs: 600_000,
            maxAttempts: kind === "commands" ? 1 : 4,
          },
        },
        { type: "StepStarted", data: { stepId, attempt: 1, runnerId: "runner-1", leaseExpiresAt: "2026-01-01T00:10:00.000Z" } },
      );
      this.stepId = stepId;
      this.stepRole = spec.step.role;
    } else {
      this.stepId = null;
      this.stepRole = null;
    }
    if (spec?.type === "terminal") {
      this.add({
        type: "SessionFinalized",
        data: {
          outcome: spec.outcome,
          reason: options.reason ?? null,
          iterations: this.iteration,
          unresolved: [],
          errorClass: null,
          diagnosis: null,
        },
      });
    }
    return this;
  }

  /** The input a step scheduled in `state` records (the parts the engine reads back are exact). */
  private stepInput(state: string, step: { role: AgentRole; phase: StepInput["phase"]; output: StepInput["output"] }): StepInput {
    const project = this.config?.project;
    const baseCommit = project?.baseCommit ?? BASE_COMMIT;
    return {
      workflow: this.definition.id,
      state,
      role: step.role,
      phase: step.phase,
      output: step.output,
      prompt: `(the ${step.role}'s instruction)`,
      context: [],
      agent: this.config?.agents[step.role] ?? null,
      invocation: 0,
      workspace: { repoPath: project?.repoPath ?? "/srv/repo", baseCommit, head: baseCommit },
      diff: null,
      commands: [],
      allowlist: project?.allowlist ?? [],
    };
  }

  /** The runner recorded the current step's completion. */
  stepCompleted(output: AgentStepOutput | CommandsStepOutput): this {
    return this.add({ type: "StepCompleted", data: { stepId: this.current(), attempt: 1, output } });
  }

  /** The current agent step completed with `text`; the engine recorded the output (+ extra events). */
  agentSaid(
    text: string,
    options: { parsed?: ParsedOutput; validationErrors?: string[]; commit?: BuildCommit; then?: AppEvent[] } = {},
  ): this {
    const stepId = this.current();
    const output = agentOutput(text, options.commit ? { commit: options.commit } : {});
    const spec = this.definition.states[this.fsm];
    const phase = spec?.type === "step" ? spec.step.phase : "discussion";
    this.stepCompleted(output);
    this.add({
      type: "AgentOutputRecorded",
      data: {
        stepId,
        attempt: 1,
        role: this.stepRole!,
        agentId: output.agentId,
        phase,
        raw: output.raw,
        preview: output.preview,
        parsed: options.parsed ?? null,
        validationErrors: options.validationErrors ?? [],
        simulated: output.simulated,
      },
    });
    if (options.commit) this.add({ type: "WorkspaceCommitted", data: { stepId, ...options.commit } });
    return this.add(...(options.then ?? []));
  }

  current(): string {
    if (!this.stepId) throw new Error(`no step is running in "${this.fsm}"`);
    return this.stepId;
  }
}
