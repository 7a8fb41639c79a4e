// The colour family of a state name (lib/state-tone.ts): the workflow's, the Forge's and a
// conversation's states, and an unknown one.
import { describe, expect, it } from "vitest";
import { stateTone } from "../../lib/state-tone";

describe("stateTone", () => {
  it("reads the tone from the name, first rule first", () => {
    expect(
      Object.fromEntries(
        [
          "awaiting_operator_confirm",
          "building",
          "approved",
          "failed",
          "cancelled",
          "waiting_for_approval",
          "open",
          "stalled",
          "terminated",
          "zebra",
        ].map((s) => [s, stateTone(s)]),
      ),
    ).toEqual({
      awaiting_operator_confirm: "waiting",
      building: "active",
      approved: "success",
      failed: "failure",
      cancelled: "muted",
      waiting_for_approval: "waiting",
      open: "active",
      stalled: "waiting",
      terminated: "muted",
      zebra: "neutral",
    });
  });
});
