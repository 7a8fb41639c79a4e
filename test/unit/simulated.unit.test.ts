// Simulated agents said plainly (lib/simulated.ts): which agents count, the demo's id as the
// server's, and a warning worded for each workflow that never names another's content.
import { describe, expect, it } from "vitest";
import { allSimulated, DEMO_PROJECT, simulatedWarning } from "../../lib/simulated";
import { DEMO_PROJECT_ID } from "../../server/demo/content";

describe("simulated agents said plainly", () => {
  it("counts a record as simulated only when it has agents and every one is scripted", () => {
    expect(allSimulated([{ kind: "scripted" }, { kind: "scripted" }])).toBe(true);
    expect(allSimulated([{ kind: "scripted" }, { kind: "claude" }])).toBe(false);
    expect(allSimulated([])).toBe(false);
    expect(DEMO_PROJECT).toBe(DEMO_PROJECT_ID);
  });

  it("words the warning for the workflow and the project", () => {
    expect(simulatedWarning("review_loop", "demo")).toMatch(/slugify\(\)/);
    expect(simulatedWarning("forge", "demo")).toMatch(/word counter/);
    expect(simulatedWarning("forge", "demo")).not.toMatch(/slugify/);
    expect(simulatedWarning("review_loop", "shop")).toMatch(/catcafe-simulated\//);
    expect(simulatedWarning("review_loop", "shop")).not.toMatch(/slugify/);
    expect(simulatedWarning("forge", "shop")).toMatch(/stops at its first stage/);
    expect(simulatedWarning("conversation", "demo")).toMatch(/conversation/);
  });
});
