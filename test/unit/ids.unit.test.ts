// Time-ordered ids (server/events/ids.ts): events and steps are inserted into their indexes in
// the order their ids sort, so that each insert lands on the newest leaf page (docs/scaling.md).
import { describe, expect, it } from "vitest";
import { timeOrderedId } from "../../server/events/ids";
import { BUILTIN_WORKFLOWS, decide, decideContext, foldTask } from "../../server/task-engine";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("time-ordered ids", () => {
  it("are version-7 UUIDs that sort in the order they were made, within a millisecond too", () => {
    const ids = Array.from({ length: 2_000 }, () => timeOrderedId());
    expect(ids.every((id) => UUID_V7.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("are what the workflow schedules its steps with", () => {
    const reviewLoop = BUILTIN_WORKFLOWS.review_loop!;
    const before = timeOrderedId();
    const events = decide(
      foldTask([]),
      {
        type: "StartTask",
        title: "ids",
        config: {
          workflow: "review_loop",
          workflowVersion: 1,
          mode: "implementation",
          prompt: "p",
          maxIterations: 1,
          project: { id: "p", name: "P", repoPath: "/repo", baseCommit: "a".repeat(40), allowlist: [] },
          agents: { coder: { id: "coder" }, reviewer: { id: "reviewer" }, tester: { id: "tester" } },
        },
      },
      decideContext(reviewLoop),
    );
    const stepIds = events.filter((e) => e.type === "StepScheduled").map((e) => (e.data as { stepId: string }).stepId);
    expect(stepIds).toHaveLength(1);
    expect(stepIds[0]).toMatch(UUID_V7);
    expect(stepIds[0]! > before).toBe(true);
  });
});
