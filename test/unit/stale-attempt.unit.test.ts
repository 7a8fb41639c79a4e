// The steps projection's refusal (SQLSTATE CCS01 from catcafe_apply_step_event) as the
// application sees it: a StaleAttemptError naming the step, the attempt and what was refused,
// read from the error's detail; any other database error is not a refusal.
import { describe, expect, it } from "vitest";
import { StaleAttemptError, staleAttemptOf } from "../../server/runner/steps-projection";

describe("staleAttemptOf", () => {
  it("reads the step, the attempt and what was refused from the refusal's detail", () => {
    const err = staleAttemptOf({ code: "CCS01", detail: JSON.stringify({ stepId: "st-1", attempt: 2, what: "start" }) });
    expect(err).toBeInstanceOf(StaleAttemptError);
    expect(err).toMatchObject({
      code: "CONFLICT",
      message: "step st-1: start from attempt 2 rejected: that attempt no longer holds the step",
      details: { stepId: "st-1", attempt: 2 },
    });
  });

  it("says what it can when the detail is missing", () => {
    expect(staleAttemptOf({ code: "CCS01" })?.message).toBe("step ?: event from attempt 0 rejected: that attempt no longer holds the step");
  });

  it("is null for any other error", () => {
    expect(staleAttemptOf({ code: "23505", detail: "{}" })).toBeNull();
    expect(staleAttemptOf(new Error("boom"))).toBeNull();
    expect(staleAttemptOf(undefined)).toBeNull();
  });
});
