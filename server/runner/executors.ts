// Step executors: what a runner does with a claimed step, by kind. Failures are thrown as
// StepExecutionError with a class from the error taxonomy; anything else is internal_error.
import { z } from "zod";
import type { ErrorClass } from "../errors";
import type { ClaimedStep } from "./dispatch";

export interface StepContext {
  /** Aborted on cancel, on lost lease, on timeout and on shutdown. */
  signal: AbortSignal;
}

export type StepExecutor = (step: ClaimedStep, ctx: StepContext) => Promise<unknown>;

export class StepExecutionError extends Error {
  constructor(
    readonly errorClass: ErrorClass,
    message: string,
    readonly retryable: boolean,
    /** A provider's Retry-After: the retry waits at least this long (and at least the backoff). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "StepExecutionError";
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

const ZEchoInput = z.object({
  message: z.string(),
  delayMs: z.number().int().nonnegative().max(3_600_000).default(0),
});

/** A trivial built-in step: waits `delayMs` (abortable), then returns the message. */
export const echoExecutor: StepExecutor = async (step, ctx) => {
  const parsed = ZEchoInput.safeParse(step.input);
  if (!parsed.success) throw new StepExecutionError("tool_error", `invalid echo input: ${parsed.error.message}`, false);
  if (parsed.data.delayMs > 0) await sleep(parsed.data.delayMs, ctx.signal);
  return { echo: parsed.data.message };
};

export const builtinExecutors: Record<string, StepExecutor> = {
  echo: echoExecutor,
};
