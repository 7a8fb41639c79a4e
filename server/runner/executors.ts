// Step executors: what a runner does with a claimed step, by kind (each kind's executor is part
// of its entry, ./step-kinds.ts). Failures are thrown as StepExecutionError with a class from
// the error taxonomy; anything else is internal_error.
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
