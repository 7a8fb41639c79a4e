// Step executors: what a runner does with a claimed step, by kind (each kind's executor is part
// of its entry, ./step-kinds.ts). Failures are thrown as StepExecutionError with a class from
// the error taxonomy; anything else is internal_error.
import { isAppError, type ErrorClass } from "../errors";
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

/**
 * Thrown when this runner cannot run a step it claimed (its clone is gone, or lacks the
 * commit the step starts from and no recorded bundle brings it): the runner hands the step
 * back to the others, uncharged, and never claims it again (docs/scaling.md, "Which runner
 * runs a step"). `missing` says what, with the paths and the commit.
 */
export class StepNotRunnableHere extends Error {
  constructor(readonly missing: string) {
    super(`cannot run this step here: ${missing}`);
    this.name = "StepNotRunnableHere";
  }
}

/**
 * For a `.catch` on ensureCommit: a commit this clone lacks and cannot restore from the
 * session's bundles (NOT_FOUND) is this runner's lack, not the step's failure; another
 * runner's clone may have it.
 */
export function notRunnableWhenNotFound(err: unknown): never {
  throw isAppError(err, "NOT_FOUND") ? new StepNotRunnableHere(err.message) : err;
}
