// Which workflow a session decides with (server/workflow/context.ts): the snapshot it started
// with, checked once and kept, else the built-in it names; a session without a task, or naming
// no built-in, is an internal error that says so.
import { describe, expect, it } from "vitest";
import type { AppEvent } from "../../server/events/catalog";
import { BUILTIN_WORKFLOWS, definitionFor, foldTask, type TaskState } from "../../server/task-engine";
import { BASE_COMMIT, expectValidEvents, recorded, type TaskConfig } from "../helpers/decider";

/** A small user workflow, as a session's TaskStarted holds it. */
const SNAPSHOT = {
  id: "mine",
  version: 2,
  title: "Mine",
  modes: ["implementation"],
  initial: "start",
  global: { cancel: "cancelled", step_failed: "cancelled" },
  states: {
    start: { type: "wait", on: { start: [{ target: "talk" }] } },
    talk: {
      type: "step",
      step: { role: "coder", output: "text", phase: "discussion", instruction: "Talk." },
      on: { done: [{ target: "cancelled" }] },
    },
    cancelled: { type: "terminal", outcome: "cancelled" },
  },
};

function session(extra: Partial<TaskConfig> | null): TaskState {
  const events: AppEvent[] = [{ type: "SessionCreated", data: { title: "T", workflow: "mine", state: "start" } }];
  if (extra)
    events.push({
      type: "TaskStarted",
      data: {
        workflow: "review_loop",
        workflowVersion: 1,
        mode: "implementation",
        prompt: "p",
        maxIterations: 3,
        project: { id: "p", name: "P", repoPath: "/repo", baseCommit: BASE_COMMIT, allowlist: [] },
        agents: {},
        ...extra,
      },
    });
  expectValidEvents(events);
  return foldTask(recorded(events));
}

function thrown(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error("expected an error");
}

describe("definitionFor", () => {
  it("a session's snapshot is its workflow, checked once and kept for the next decision", () => {
    const state = session({ workflow: "mine", workflowVersion: 2, definition: SNAPSHOT });
    const def = definitionFor(state);
    expect(def).toMatchObject({ id: "mine", version: 2, maxIterations: 3 });
    expect(definitionFor(state)).toBe(def);
  });

  it("without a snapshot, the built-in the session names", () => {
    expect(definitionFor(session({}))).toBe(BUILTIN_WORKFLOWS.review_loop);
  });

  it("a session without a task, or naming no built-in, is an internal error saying which", () => {
    expect(thrown(() => definitionFor(session(null)))).toEqual({ code: "INTERNAL", message: "the session has no task, so no workflow" });
    expect(thrown(() => definitionFor(session({ workflow: "gone" })))).toEqual({ code: "INTERNAL", message: 'unknown workflow "gone"' });
  });
});
