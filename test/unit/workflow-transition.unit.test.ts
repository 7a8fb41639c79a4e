// Walking a definition (server/workflow/transition.ts): fire and enter called directly —
// their refusals, and what they record when a caller gives no ending — and small user
// workflows that put a guard's transitions in another order than the built-ins, or start a
// modify session in a later stage than the one that finished.
import { describe, expect, it } from "vitest";
import type { AppEvent } from "../../server/events/catalog";
import type { RecordedEvent } from "../../server/events/types";
import { type ActiveTask, BUILTIN_WORKFLOWS, decide, foldTask, type TaskCommand } from "../../server/task-engine";
import { loadDefinition, type WorkflowDefinition } from "../../server/workflow/definition";
import { currentState, enter, fire } from "../../server/workflow/transition";
import { mini } from "../helpers/workflow-json";
import { agentOutput, BASE_COMMIT, blobRef, expectValidEvents, recorded, testContext, type TaskConfig } from "../helpers/decider";

const forge = BUILTIN_WORKFLOWS.forge!;

function config(def: WorkflowDefinition, mode: string): TaskConfig {
  return {
    workflow: def.id,
    workflowVersion: def.version,
    mode,
    prompt: "A word counter.",
    maxIterations: 3,
    project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [] },
    agents: { planner: { id: "planner" }, coder: { id: "coder" }, reviewer: { id: "reviewer" } },
  };
}

/** A session of `def` driven through the decider, each command decided on the history so far. */
class Session {
  history: RecordedEvent[] = [];

  constructor(
    readonly def: WorkflowDefinition,
    mode: string,
  ) {
    this.do({ type: "StartTask", title: "T", config: config(def, mode) });
  }

  get state(): ActiveTask {
    const s = foldTask(this.history);
    if (s.status !== "active") throw new Error(`the session is ${s.status}`);
    return s;
  }

  append(events: AppEvent[]): void {
    expectValidEvents(events);
    this.history.push(...recorded(events, this.history.length + 1));
  }

  do(command: TaskCommand): AppEvent[] {
    const emitted = decide(foldTask(this.history), command, testContext(this.def)) as AppEvent[];
    this.append(emitted);
    return emitted;
  }

  /** The current step answers `reply`, writing `files` (a staged step's artifacts). */
  answer(reply: string, files: Record<string, string> = {}): AppEvent[] {
    const artifacts = Object.entries(files).map(([path, text]) => ({
      path,
      hash: blobRef(text).blob,
      blob: blobRef(text),
      size: text.length,
    }));
    const output = agentOutput(reply, Object.keys(files).length ? { forge: { artifacts, refusedWrites: [], held: [], warnings: [] } } : {});
    return this.do({ type: "StepSucceeded", stepId: this.state.step!.id, attempt: 1, output, rawText: reply });
  }
}

const stateChanges = (events: AppEvent[]) =>
  events.flatMap((e) => (e.type === "SessionStateChanged" ? [`${e.data.from}→${e.data.to}`] : []));

/** What `fn` throws: its code and message. */
function thrown(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    const e = err as { code: string; message: string };
    return { code: e.code, message: e.message };
  }
  throw new Error("expected a refusal");
}

/** A forge session put in `fsm` (as a Continue would), in `stage`. */
function forgeAt(fsm: string, stage: string): ActiveTask {
  const events: AppEvent[] = [
    { type: "SessionCreated", data: { title: "T", workflow: "forge", state: "start" } },
    { type: "TaskStarted", data: config(forge, "new") },
    { type: "SessionStateChanged", data: { from: "start", to: fsm, reason: "continued" } },
    { type: "StageStarted", data: { stage } },
  ];
  expectValidEvents(events);
  const s = foldTask(recorded(events));
  if (s.status !== "active") throw new Error("not active");
  return s;
}

const verdict = (decision: "approve" | "changes_requested") =>
  JSON.stringify({
    decision,
    summary: decision,
    findings: decision === "approve" ? [] : [{ severity: "major", file: "a.js", message: "fix it" }],
  });

describe("transition: fire and enter called directly", () => {
  it("a state, a trigger or a target the workflow does not define is refused by name; a finished session moves no more", () => {
    const idea = forgeAt("idea_draft", "idea");
    expect(thrown(() => currentState(forge, { ...idea, fsm: "nowhere" }))).toEqual({
      code: "INTERNAL",
      message: 'session is in state "nowhere", which workflow forge does not define',
    });
    expect(thrown(() => fire(testContext(forge), idea, "approve"))).toEqual({
      code: "INTERNAL",
      message: 'workflow forge: no transition from "idea_draft" on "approve"',
    });
    expect(
      thrown(() =>
        enter(testContext(forge), idea, "nowhere", { reason: "r", finalReason: null, iterate: false, trigger: "continue", ending: {} }),
      ),
    ).toEqual({ code: "INTERNAL", message: 'workflow forge: "idea_draft" leads to "nowhere", which it does not define' });
    expect(thrown(() => fire(testContext(forge), { ...idea, fsm: "completed" }, "done"))).toEqual({
      code: "CONFLICT",
      message: "the session already finished (completed): it moved on",
    });
  });

  it("a wait state waits for a person, but the initial one (waiting to start) does not", () => {
    const idea = forgeAt("idea_draft", "idea");
    const entry = { reason: "r", finalReason: null, iterate: false, trigger: "continue", ending: {} } as const;
    const changed = (target: string) =>
      enter(testContext(forge), idea, target, entry).find((e) => e.type === "SessionStateChanged")?.data as { waitsFor?: string };
    expect(forge.states[forge.initial]!.type).toBe("wait");
    expect(changed(forge.initial)).not.toHaveProperty("waitsFor");
    expect(changed("idea_review")).toMatchObject({ waitsFor: "person" });
  });

  it("without an ending: a failed agent and a looping critic are said so, and a cancel is classed as cancelled", () => {
    const failed = fire(testContext(forge), forgeAt("idea_draft", "idea"), "step_failed");
    expect(failed.find((e) => e.type === "PersonNeeded")?.data).toEqual({
      stage: "idea",
      cause: "agent_failed",
      message: "the agent failed",
      errorClass: null,
      resume: "idea_draft",
    });
    const loops = fire(testContext(forge), forgeAt("prd_critic", "prd"), "escalate");
    expect(stateChanges(loops as AppEvent[])).toEqual(["prd_critic→prd_stopped"]);
    expect(loops.find((e) => e.type === "PersonNeeded")?.data).toEqual({
      stage: "prd",
      cause: "loop",
      message: "the critic loops",
      errorClass: null,
      resume: null,
    });
    const cancelled = fire(testContext(forge), forgeAt("idea_draft", "idea"), "cancel");
    expect(cancelled.find((e) => e.type === "SessionFinalized")?.data).toEqual({
      outcome: "cancelled",
      reason: "cancelled by an operator",
      iterations: 1,
      unresolved: [],
      errorClass: "cancelled",
      diagnosis: null,
    });
  });
});

describe("transition: guards in a user workflow's own order", () => {
  it("at_cap listed before under_cap holds only at the cap", () => {
    const json = mini();
    json.id = "cap_first";
    json.states.check!.on!.changes_requested = [
      { target: "stopped", guard: "at_cap", reason: "cap" },
      { target: "work", guard: "under_cap", iterate: true, reason: "changes_requested" },
    ];
    json.states.stopped = { type: "terminal", outcome: "max_iterations_reached" };
    const def = loadDefinition(json);
    // The session's cap is its own (maxIterations: 3): iterations 1 and 2 go round again, the third stops.
    const s = new Session(def, "implementation");
    const rounds = [1, 2, 3].map(() => {
      s.answer("built");
      return stateChanges(s.answer(verdict("changes_requested")));
    });
    expect(rounds).toEqual([["check→work"], ["check→work"], ["check→stopped"]]);
  });

  it("mode_implementation listed before mode_proposal holds only for an implementation", () => {
    const def = loadDefinition({
      id: "modes_swapped",
      version: 1,
      title: "Implementation first",
      modes: ["proposal", "implementation"],
      initial: "start",
      global: { cancel: "cancelled", step_failed: "failed" },
      states: {
        start: {
          type: "wait",
          on: {
            start: [
              { target: "building", guard: "mode_implementation" },
              { target: "proposing", guard: "mode_proposal" },
            ],
          },
        },
        building: {
          type: "step",
          step: { role: "coder", output: "build", phase: "build", instruction: "Build it." },
          on: { done: [{ target: "done" }] },
        },
        proposing: {
          type: "step",
          step: { role: "coder", output: "text", phase: "discussion", instruction: "Propose." },
          on: { done: [{ target: "done" }] },
        },
        done: { type: "terminal", outcome: "done" },
        failed: { type: "terminal", outcome: "failed" },
        cancelled: { type: "terminal", outcome: "cancelled" },
      },
    });
    expect(new Session(def, "proposal").state.fsm).toBe("proposing");
    expect(new Session(def, "implementation").state.fsm).toBe("building");
  });
});

describe("transition: a modify session of a staged user workflow", () => {
  it("starting in a later stage than the one that finished does not complete that one again", () => {
    const def = loadDefinition({
      id: "two_stages",
      version: 1,
      title: "Build, then polish on modify",
      modes: ["new"],
      initial: "start",
      global: { cancel: "cancelled", step_failed: "failed" },
      stages: {
        build: { title: "Build", writes: ["out.md"], artifacts: ["out.md"] },
        polish: { title: "Polish", writes: ["polish.md"], artifacts: ["polish.md"] },
      },
      modify: { state: "polish_draft" },
      states: {
        start: { type: "wait", on: { start: [{ target: "build_draft" }] } },
        build_draft: {
          type: "step",
          stage: "build",
          step: { role: "planner", output: "draft", phase: "draft", instruction: "Write out.md." },
          on: { done: [{ target: "completed" }] },
        },
        polish_draft: {
          type: "step",
          stage: "polish",
          step: { role: "planner", output: "draft", phase: "draft", instruction: "Write polish.md." },
          on: { done: [{ target: "completed" }] },
        },
        completed: { type: "terminal", outcome: "completed" },
        failed: { type: "terminal", outcome: "failed" },
        cancelled: { type: "terminal", outcome: "cancelled" },
      },
    });
    const s = new Session(def, "new");
    const finished = s.answer("written", { "out.md": "# Out\n" });
    expect(finished.map((e) => e.type)).toEqual([
      "AgentOutputRecorded",
      "ArtifactRecorded",
      "SessionStateChanged",
      "StageCompleted",
      "SessionFinalized",
    ]);
    // The modify fork as modifySession records it: the fork, the change, then the modify entry.
    s.append([
      {
        type: "SessionForked",
        data: {
          parentId: "base",
          atVersion: s.history.length,
          reason: "modify",
          title: "T (modify)",
          workflow: def.id,
          state: "completed",
        },
      },
      {
        type: "ChangeRequested",
        data: {
          text: "Polish it.",
          baseSessionId: "base",
          baseCommit: BASE_COMMIT,
          fingerprint: { files: 1, digest: "d", changedSinceBase: [], addedSinceBase: [], removedSinceBase: [] },
          basePlan: {},
        },
      },
    ]);
    expect(s.state.stages).toMatchObject({ current: "build", completed: ["build"] });
    const entered = s.do({ type: "Continue", state: def.modify!.state, reason: "change requested", iterate: false });
    expect(entered.map((e) => e.type)).toEqual(["SessionStateChanged", "StageStarted", "StepScheduled"]);
    expect(entered[1]).toEqual({ type: "StageStarted", data: { stage: "polish" } });
  });
});
