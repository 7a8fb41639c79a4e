// What a step's agent is told (server/workflow/prompt.ts, with Forge's lines from
// server/forge/steps.ts), called directly: the TaskSpec only
// for those who carry it out, the previous round's issues only for those who change the work
// (or route a failed check), and the end of the thread, each message shortened.
import { describe, expect, it } from "vitest";
import type { AppEvent } from "../../server/events/catalog";
import { forgeExtension } from "../../server/forge/extension";
import { BUILTIN_WORKFLOWS, foldTask, type ActiveTask } from "../../server/task-engine";
import type { StepSpec, WorkflowDefinition } from "../../server/workflow/definition";
import {
  promptFor as enginePrompt,
  promptParts as enginePromptParts,
  threadContext,
  threadIndexAfter,
  type PromptStage,
} from "../../server/workflow/prompt";
import { BASE_COMMIT, expectValidEvents, recorded, type TaskConfig } from "../helpers/decider";

const STEP = "22222222-0000-4000-8000-000000000001";

/** The prompt as the application's engine writes it: with Forge's lines for a staged step. */
function promptFor(state: ActiveTask, spec: StepSpec, stage: PromptStage | null = null): string {
  return enginePrompt(forgeExtension, state, spec, stage);
}
const reviewLoop = BUILTIN_WORKFLOWS.review_loop!;
const planning = BUILTIN_WORKFLOWS.planning!;
const forge = BUILTIN_WORKFLOWS.forge!;

function task(def: WorkflowDefinition, events: AppEvent[] = []): ActiveTask {
  const config: TaskConfig = {
    workflow: def.id,
    workflowVersion: def.version,
    mode: def.modes[0]!,
    prompt: "A word counter.",
    maxIterations: 3,
    project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [] },
    agents: {},
  };
  const all: AppEvent[] = [
    { type: "SessionCreated", data: { title: "T", workflow: def.id, state: def.initial } },
    { type: "TaskStarted", data: config },
    ...events,
  ];
  expectValidEvents(all);
  const s = foldTask(recorded(all));
  if (s.status !== "active") throw new Error("the task is not active");
  return s;
}

function step(def: WorkflowDefinition, name: string): StepSpec {
  const s = def.states[name];
  if (s?.type !== "step") throw new Error(`${name} is not a step state`);
  return s.step;
}

const taskSpec = { title: "Counter", description: "Count words.", acceptanceCriteria: ["counts"], files: ["src/a.js"], tests: [] };
const rejected: AppEvent = {
  type: "ExecutionRejected",
  data: { stepId: STEP, reasons: ["changed files the TaskSpec does not name: b.js"] },
};
const RESOLVE = "Resolve these from the previous round:\n- changed files the TaskSpec does not name: b.js";

describe("prompt: the TaskSpec and the previous round's issues", () => {
  it("the TaskSpec goes to the executor and the tester, once there is one; never to another role", () => {
    const specified = task(planning, [{ type: "TaskSpecRecorded", data: { stepId: STEP, spec: taskSpec } }]);
    const shown = `TaskSpec:\n${JSON.stringify(taskSpec, null, 2)}`;
    expect(promptFor(specified, step(planning, "executing"))).toContain(shown);
    expect(promptFor(specified, step(planning, "testing"))).toContain(shown);
    expect(promptFor(specified, step(planning, "planning"))).not.toContain("TaskSpec:");
    // Without one (the review loop never has one), the tester is told of none.
    expect(promptFor(task(reviewLoop), step(reviewLoop, "testing"))).not.toContain("TaskSpec:");
  });

  it("the issues go to a build, an execution, a draft and a route; not to a verdict, a critique or a test plan", () => {
    const issues = (def: WorkflowDefinition, name: string) => promptFor(task(def, [rejected]), step(def, name)).includes(RESOLVE);
    expect(issues(reviewLoop, "building")).toBe(true);
    expect(issues(planning, "executing")).toBe(true);
    expect(issues(forge, "prd_draft")).toBe(true);
    expect(issues(forge, "check_triage")).toBe(true);
    expect(issues(reviewLoop, "reviewing")).toBe(false);
    expect(issues(forge, "prd_critic")).toBe(false);
    expect(issues(reviewLoop, "testing")).toBe(false);
    // Without issues, nothing is said of them.
    expect(promptFor(task(reviewLoop), step(reviewLoop, "building"))).not.toContain("Resolve these");
  });
});

describe("prompt: a stage's feedback", () => {
  it("one line each, oldest first, only the stage's own", () => {
    const feedback = (stage: string, text: string, source: "person" | "guidance" = "person"): AppEvent => ({
      type: "FeedbackGiven",
      data: { stage, iteration: 1, source, severity: source === "guidance" ? "critical" : "normal", text },
    });
    const state = task(forge, [
      feedback("prd", "Shorter."),
      feedback("idea", "Not this one."),
      feedback("prd", "Name the users.", "guidance"),
    ]);
    const prompt = promptFor(state, step(forge, "prd_draft"), { name: "prd", spec: forge.stages!.prd!, cap: 5 });
    expect(prompt).toContain(
      "\nFeedback on this stage so far (oldest first):\n- [person, iteration 1] Shorter.\n- [guidance, critical, iteration 1] Name the users.",
    );
    expect(prompt).not.toContain("Not this one.");
  });
});

describe("prompt: a person's edits", () => {
  it("names every artifact of the stage a person edited, comma-separated", () => {
    const edited = (path: string): AppEvent => ({
      type: "ArtifactEdited",
      data: {
        baseHash: null,
        stage: "prd",
        path,
        hash: "a".repeat(64),
        blob: { blob: "b".repeat(64), size: 1, mediaType: "text/markdown; charset=utf-8" },
        size: 1,
        problems: [],
      },
    });
    const stage = forge.stages!.prd!;
    const state = task(forge, [edited(stage.artifacts[0]!), edited(stage.artifacts[1]!)]);
    expect(promptFor(state, step(forge, "prd_draft"), { name: "prd", spec: stage, cap: 5 })).toContain(
      `A person edited ${stage.artifacts[0]}, ${stage.artifacts[1]}: keep their text exactly as it is.`,
    );
  });
});

describe("prompt: the thread as context", () => {
  it("at least the last 20 messages, from a start that moves in steps of 10 (a stable prefix), each cut at 4,000 characters", () => {
    const thread = (n: number) =>
      threadContext(
        task(
          reviewLoop,
          Array.from({ length: n }, (_, i) => ({
            type: "OperatorMessagePosted" as const,
            data: { text: i === n - 1 ? "x".repeat(4_500) : `message ${i}` },
          })),
        ),
      );
    expect(thread(20)).toHaveLength(20);
    // 22 messages: the window still starts at the first (it moves once 30 are there).
    expect(thread(22)).toHaveLength(22);
    expect(thread(29)[0]).toEqual({ from: "operator", text: "message 0" });
    expect(thread(30)).toHaveLength(20);
    expect(thread(31)[0]).toEqual({ from: "operator", text: "message 10" });
    // Two successive calls share their start: the earlier thread is a prefix of the later one.
    expect(
      thread(25)
        .slice(0, 24)
        .map((m) => m.text),
    ).toEqual(
      thread(24)
        .slice(0, 24)
        .map((m, i) => (i === 23 ? "message 23" : m.text)),
    );
    const context = thread(22);
    expect(context.at(-1)).toEqual({ from: "operator", text: "x".repeat(4_000) });
  });
});

describe("prompt: where what a step made is shown in the thread", () => {
  const window = (threadCount: number, shown: number) => ({
    threadCount,
    thread: Array.from({ length: shown }, (_, i) => ({ from: "coder" as const, text: `m${threadCount - shown + i}` })),
  });

  it("after the message that was the last when it was made, counted in the window the prompt shows", () => {
    // Made after the 3rd of 5 messages, all shown: index 2.
    expect(threadIndexAfter(window(5, 5), 3)).toBe(2);
    // 35 messages, the window from the 11th: the 31st is at index 20.
    expect(threadIndexAfter(window(35, 25), 31)).toBe(20);
    expect(threadIndexAfter(window(35, 25), 35)).toBe(24);
  });

  it("nowhere in the thread when there was no message yet, nothing made, or its message left the window", () => {
    expect(threadIndexAfter(window(5, 5), 0)).toBeUndefined();
    expect(threadIndexAfter(window(5, 5), null)).toBeUndefined();
    expect(threadIndexAfter(window(35, 25), 10)).toBeUndefined();
    expect(threadIndexAfter(window(35, 25), 11)).toBe(0);
    expect(threadIndexAfter(window(5, 5), 6)).toBeUndefined();
  });
});

describe("prompt: a workflow's preamble", () => {
  it("opens the stable part of every call, before the task, and the Forge's carries the critic's format its critics refer to", () => {
    const preamble = forge.preamble!;
    expect(preamble).toMatch(/A critic replies with JSON only: \{"decision": "pass" \| "revise"/);
    const state = task(forge);
    const critic = forge.states.prd_critic!;
    if (critic.type !== "step") throw new Error("prd_critic is a step");
    const stage = { name: "prd", spec: forge.stages!.prd!, cap: 5 };
    const parts = enginePromptParts(forgeExtension, state, critic.step, stage, preamble);
    expect(parts.stable.startsWith(`${preamble}\n\nIdea:\nA word counter.\n`)).toBe(true);
    expect(parts.changing).toContain("Reply with the critic's JSON described at the top.");
    expect(parts.changing).not.toContain('"decision"');
    // Without a preamble (the built-in review loop has none) the stable part is the task's alone.
    const building = reviewLoop.states.building!;
    if (building.type !== "step") throw new Error("building is a step");
    expect(enginePromptParts(forgeExtension, task(reviewLoop), building.step).stable).toBe("Task:\nA word counter.\n");
  });
});
