import { describe, expect, it } from "vitest";
import { stateLabel } from "@/lib/state-labels";

describe("stateLabel", () => {
  it("speaks people's words for the built-in states", () => {
    expect(stateLabel("awaiting_operator_confirm")).toBe("Waiting for your confirm");
    expect(stateLabel("max_iterations_reached")).toBe("Out of iterations");
    expect(stateLabel("approved")).toBe("Approved");
    expect(stateLabel("bake_off")).toBe("Bake-off running");
    expect(stateLabel("not_chosen")).toBe("Not chosen");
  });

  it("reads a workflow's own state id as words", () => {
    expect(stateLabel("code_review")).toBe("Code review");
    expect(stateLabel("ship-it")).toBe("Ship it");
    expect(stateLabel("x")).toBe("X");
  });

  it("never reads an id as nothing", () => {
    expect(stateLabel("")).toBe("");
    expect(stateLabel("__")).toBe("__");
  });
});
