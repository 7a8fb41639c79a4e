// The engine's extension point (server/workflow/extension.ts) with an extension of the test's
// own, not Forge's: the engine starts the slice, hands it every other event of a started task
// and resets it on a rerun; a guard, an output kind, a staged step's input and prompt, and
// what a completed stage freezes are the extension's answers, reached through DecideContext.
import { describe, expect, it } from "vitest";
import type { AppEvent } from "../../server/events/catalog";
import { isWorkflowStep } from "../../server/events/step-contract";
import type { RecordedEvent } from "../../server/events/types";
import { loadDefinition } from "../../server/workflow/definition";
import {
  decide,
  foldWith,
  type ActiveTask,
  type DecideContext,
  type TaskCommand,
  type WorkflowExtension,
} from "../../server/workflow/engine";
import { agentOutput, BASE_COMMIT, counterIds, expectValidEvents, recorded, type TaskConfig } from "../helpers/decider";

/** The test's slice: the types of the events the engine handed it, in order. */
interface Seen {
  types: string[];
}

const unread = () => {
  throw new Error("the toy workflow has no such step");
};

const toy: WorkflowExtension<Seen> = {
  initial: { types: [] },
  evolve: (slice, event) => ({ types: [...slice.types, event.type] }),
  openIssues: (event) => (event.type === "SystemReplied" ? [`the toy read: ${event.data.text}`] : null),
  guards: {
    // "Modifying" when a person said anything before the start: the toy's own reading.
    modifying: (task) => task.pipeline.types.includes("OperatorMessagePosted"),
    change_invalid: () => false,
    layer_prd: () => false,
    layer_design: () => false,
    layer_plan: () => false,
  },
  outputs: {
    draft: (reading) => ({
      events: [reading.recordOutput(null, []), { type: "SystemReplied", data: { text: `draft of ${reading.stage?.name}` } }],
      trigger: "done",
    }),
    critique: unread,
    route: unread,
  },
  textsToRead: () => [],
  frozen: (task, stage) => [{ path: `${stage}.md`, hash: `${task.pipeline.types.length}` }],
  stagedInput: (task, stage, step) => ({
    stage: stage.name,
    iteration: task.stages.iterations[stage.name] ?? 1,
    writes: stage.spec.writes,
    collect: stage.spec.artifacts,
    materialize: [],
    protect: [],
    attach: [],
    feedbackHistory: `${step.role} saw ${task.pipeline.types.length} events\n`,
  }),
  commands: () => null,
  prompt: (task, stage) => [`The toy's line for ${stage.name}, after ${task.pipeline.types.join(", ")}.`],
};

const def = loadDefinition({
  id: "toy",
  version: 1,
  title: "Toy",
  modes: ["implementation"],
  initial: "start",
  global: { cancel: "cancelled", step_failed: "cancelled" },
  stages: { write: { title: "Write", writes: ["write.md"], artifacts: ["write.md"] } },
  states: {
    start: {
      type: "wait",
      on: {
        start: [
          { target: "polishing", guard: "modifying" },
          { target: "writing", reason: "fresh" },
        ],
      },
    },
    writing: {
      type: "step",
      stage: "write",
      step: { role: "planner", output: "draft", phase: "draft", instruction: "Write it." },
      on: { done: [{ target: "completed" }] },
    },
    polishing: {
      type: "step",
      stage: "write",
      step: { role: "planner", output: "draft", phase: "draft", instruction: "Polish it." },
      on: { done: [{ target: "completed" }] },
    },
    completed: { type: "terminal", outcome: "completed" },
    cancelled: { type: "terminal", outcome: "cancelled" },
  },
});

const config: TaskConfig = {
  workflow: "toy",
  workflowVersion: 1,
  mode: "implementation",
  prompt: "A poem.",
  maxIterations: 3,
  project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [] },
  agents: { planner: { id: "planner" } },
};

/** The toy's session: each command decided on the history so far, with the toy extension. */
class Session {
  history: RecordedEvent[] = [];
  private readonly ctx: DecideContext<Seen> = {
    definition: def,
    extension: toy,
    newId: counterIds(),
    maxAttempts: 1,
    stepTimeoutMs: 1_000,
  };

  append(...events: AppEvent[]): this {
    expectValidEvents(events);
    this.history.push(...recorded(events, this.history.length + 1));
    return this;
  }

  do(command: TaskCommand): AppEvent[] {
    const emitted = decide(foldWith(toy, this.history), command, this.ctx) as AppEvent[];
    this.append(...emitted);
    return emitted;
  }

  get state(): ActiveTask<Seen> {
    const s = foldWith(toy, this.history);
    if (s.status !== "active") throw new Error(`the session is ${s.status}`);
    return s;
  }
}

const created: AppEvent[] = [
  { type: "SessionCreated", data: { title: "T", workflow: "toy", state: "start" } },
  { type: "TaskStarted", data: config },
];

describe("the engine with an extension of its own", () => {
  it("starts the slice with the task, hands it every other event of a started task, and starts it again on a rerun", () => {
    const s = new Session();
    s.do({ type: "StartTask", title: "T", config });
    // SessionCreated, TaskStarted, SessionStateChanged and StepScheduled are the engine's alone.
    expect(s.history.map((e) => e.type)).toEqual(["SessionCreated", "TaskStarted", "SessionStateChanged", "StageStarted", "StepScheduled"]);
    expect(s.state.pipeline).toEqual({ types: ["StageStarted"] });
    s.append({ type: "OperatorMessagePosted", data: { text: "hi" } });
    expect(s.state.pipeline).toEqual({ types: ["StageStarted", "OperatorMessagePosted"] });
    s.append({
      type: "SessionForked",
      data: { parentId: "p", atVersion: 6, reason: "rerun", title: "T", workflow: "toy", state: "start" },
    });
    expect(s.state.pipeline).toEqual({ types: [] });
  });

  it("a guard the engine leaves to the extension is the extension's answer", () => {
    const fresh = new Session().append(...created);
    expect(fresh.do({ type: "Begin" })[0]).toMatchObject({ type: "SessionStateChanged", data: { to: "writing" } });
    const modifying = new Session().append(...created, { type: "OperatorMessagePosted", data: { text: "make it rhyme" } });
    expect(modifying.do({ type: "Begin" })[0]).toMatchObject({ type: "SessionStateChanged", data: { to: "polishing" } });
  });

  it("a staged step's input and prompt carry what the extension adds; its output is the extension's to read; the stage freezes what it says", () => {
    const s = new Session();
    const started = s.do({ type: "StartTask", title: "T", config });
    const scheduled = started.at(-1);
    if (scheduled?.type !== "StepScheduled" || !isWorkflowStep(scheduled.data)) throw new Error("no workflow step scheduled");
    const { input } = scheduled.data;
    expect(input.forge).toEqual({
      stage: "write",
      iteration: 1,
      writes: ["write.md"],
      collect: ["write.md"],
      materialize: [],
      protect: [],
      attach: [],
      feedbackHistory: "planner saw 1 events\n",
    });
    expect(input.prompt).toContain("\nStage: write (Write), iteration 1 of at most 3.\nThe toy's line for write, after StageStarted.");

    const stepId = scheduled.data.stepId;
    const output = agentOutput("done");
    const out = s.do({ type: "StepSucceeded", stepId, attempt: 1, output, rawText: "done" });
    expect(out.map((e) => e.type)).toEqual([
      "AgentOutputRecorded",
      "SystemReplied",
      "SessionStateChanged",
      "StageCompleted",
      "SessionFinalized",
    ]);
    expect(out[1]).toEqual({ type: "SystemReplied", data: { text: "draft of write" } });
    // Folded after AgentOutputRecorded and SystemReplied: three events seen when the stage completes.
    expect(out[3]).toEqual({ type: "StageCompleted", data: { stage: "write", artifacts: [{ path: "write.md", hash: "3" }] } });
    expect(out[4]).toMatchObject({ type: "SessionFinalized", data: { outcome: "completed", unresolved: [] } });
    // What the extension says one of its events leaves open becomes the round's open issues.
    expect(foldWith(toy, s.history)).toMatchObject({ status: "finished", openIssues: ["the toy read: draft of write"] });
  });

  it("what an extension's event leaves open is the round's open issues, also when the event leaves its slice as it was", () => {
    const unchanged: WorkflowExtension<Seen> = { ...toy, evolve: (slice) => slice };
    const history = recorded([...created, { type: "SystemReplied", data: { text: "a note" } }], 1);
    const before = foldWith(unchanged, history.slice(0, -1));
    const after = foldWith(unchanged, history);
    if (before.status !== "active" || after.status !== "active") throw new Error("the task did not start");
    expect(after.pipeline).toBe(before.pipeline);
    expect(after.openIssues).toEqual(["the toy read: a note"]);
    // An event it has nothing to say about leaves the state's issues alone.
    const quiet = foldWith(unchanged, [
      ...history,
      ...recorded([{ type: "OperatorMessagePosted", data: { text: "ok" } }], history.length + 1),
    ]);
    expect(quiet).toMatchObject({ openIssues: ["the toy read: a note"], version: history.length + 1 });
  });
});
