// The steps projection's refusal (SQLSTATE CCS01 from catcafe_apply_step_event) as the
// application sees it: a StaleAttemptError naming the step, the attempt and what was refused,
// read from the error's detail; any other database error is not a refusal. The projection's
// `apply` (a rebuild's; live, the trigger applies the events) passes the same on.
import { describe, expect, it } from "vitest";
import type { Tx } from "../../server/db/pool";
import type { RecordedEvent } from "../../server/events/types";
import { StaleAttemptError, staleAttemptOf, stepsProjection } from "../../server/runner/steps-projection";

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

describe("the steps projection's apply", () => {
  const event = (type: string): RecordedEvent => ({
    position: 1,
    txId: 1,
    eventId: `e-${type}`,
    streamId: "s-1",
    version: 1,
    type,
    data: { stepId: "st-1" },
    metadata: { actor: { kind: "system", id: "test" }, correlationId: "c-1", causationId: null, schemaVersion: 1 },
    recordedAt: "2026-11-26T00:00:00.000Z",
  });
  /** A transaction that keeps what it was asked, and answers with `fail` when given one. */
  const txThat = (fail?: unknown) => {
    const calls: unknown[][] = [];
    const tx = {
      query: async (...args: unknown[]) => {
        calls.push(args);
        if (fail !== undefined) throw fail;
        return { rows: [], rowCount: 0 };
      },
    } as unknown as Tx;
    return { tx, calls };
  };

  it("in a rebuild, applies only the Step* events, in one query; live, or without one, asks nothing", async () => {
    const rebuild = txThat();
    await stepsProjection.apply(rebuild.tx, [event("SessionCreated"), event("StepScheduled"), event("StepStarted")], "rebuild");
    expect(rebuild.calls).toHaveLength(1);
    expect((rebuild.calls[0]![1] as unknown[][])[0]).toEqual(["StepScheduled", "StepStarted"]);
    const live = txThat();
    await stepsProjection.apply(live.tx, [event("StepStarted")], "live");
    const none = txThat();
    await stepsProjection.apply(none.tx, [event("SessionCreated")], "rebuild");
    expect([live.calls, none.calls]).toEqual([[], []]);
  });

  it("a refusal in a rebuild comes back as a StaleAttemptError, any other failure as itself", async () => {
    const refusal = { code: "CCS01", detail: JSON.stringify({ stepId: "st-1", attempt: 2, what: "StepCompleted" }) };
    const refused = await stepsProjection.apply(txThat(refusal).tx, [event("StepCompleted")], "rebuild").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StaleAttemptError);
    expect((refused as Error).message).toBe("step st-1: StepCompleted from attempt 2 rejected: that attempt no longer holds the step");
    const broken = new Error("relation steps does not exist");
    await expect(stepsProjection.apply(txThat(broken).tx, [event("StepCompleted")], "rebuild")).rejects.toBe(broken);
  });
});
