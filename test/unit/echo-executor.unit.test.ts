// The built-in `echo` step (server/runner/echo.ts), the runner's own test step: it
// checks its input, waits `delayMs` unless its attempt is aborted first, then returns the
// message; failures are StepExecutionErrors with their class.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { builtinExecutors, echoStepKind } from "../../server/runner/echo";
import { StepExecutionError } from "../../server/runner/executors";
import { claimedStep } from "../helpers/steps";

const step = (input: unknown) => claimedStep("echo", input);
/** The echo step as a runner runs it: its entry parses the input, then runs it. */
const echoExecutor = echoStepKind.execute;

const live = () => new AbortController().signal;

describe("the echo step", () => {
  it("is the runner's built-in step", () => {
    expect(builtinExecutors).toEqual({ echo: echoExecutor });
  });

  it("returns its message, after its delay", async () => {
    expect(await echoExecutor(step({ message: "meow" }), { signal: live() })).toEqual({ echo: "meow" });
    const started = Date.now();
    expect(await echoExecutor(step({ message: "later", delayMs: 120 }), { signal: live() })).toEqual({ echo: "later" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it("an input without a message fails for good, as a tool error naming the field", async () => {
    const err = await echoExecutor(step({ delayMs: 5 }), { signal: live() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepExecutionError);
    expect(err).toMatchObject({ name: "StepExecutionError", errorClass: "tool_error", retryable: false });
    expect((err as Error).message).toMatch(/^invalid echo input: .*message/s);
  });

  it("an abort during the delay ends it at once with the abort's reason; an attempt aborted before it starts does not wait at all", async () => {
    const abort = new AbortController();
    const reason = new Error("cancelled by an operator");
    setTimeout(() => abort.abort(reason), 30);
    const started = Date.now();
    await expect(echoExecutor(step({ message: "never", delayMs: 60_000 }), { signal: abort.signal })).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(echoExecutor(step({ message: "never", delayMs: 60_000 }), { signal: abort.signal })).rejects.toBe(reason);
  });

  it("without a delay it does not wait: it answers even for an attempt already aborted", async () => {
    const abort = new AbortController();
    abort.abort(new Error("cancelled by an operator"));
    expect(await echoExecutor(step({ message: "at once", delayMs: 0 }), { signal: abort.signal })).toEqual({ echo: "at once" });
    expect(await echoExecutor(step({ message: "default" }), { signal: abort.signal })).toEqual({ echo: "default" });
  });

  it("leaves no listener on the attempt's signal once its delay ended, run out or aborted", async () => {
    const signal = live();
    await echoExecutor(step({ message: "done", delayMs: 5 }), { signal });
    expect(getEventListeners(signal, "abort")).toEqual([]);
    const abort = new AbortController();
    const aborted = echoExecutor(step({ message: "never", delayMs: 60_000 }), { signal: abort.signal });
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(1);
    abort.abort(new Error("cancelled by an operator"));
    await expect(aborted).rejects.toThrow("cancelled by an operator");
    expect(getEventListeners(abort.signal, "abort")).toEqual([]);
  });

  it("keeps a Retry-After with a failure", () => {
    const err = new StepExecutionError("provider_rate_limit", "slow down", true, 2_000);
    expect(err).toMatchObject({ errorClass: "provider_rate_limit", message: "slow down", retryable: true, retryAfterMs: 2_000 });
  });
});
