// The step kind registry (docs/architecture.md, "Step kinds"): every kind of step a runner can
// run is one entry, made by `defineStepKind` — its input and output schemas, what a runner does
// with it, and how its session reacts to its outcome — and the runner looks the kind up instead
// of branching on it. An entry closes over its own types: it parses the step's input before
// executing, the executor's result before it is recorded, and both again before its reaction,
// so the registry holds entries of one erased type and no caller casts.
import type { z } from "zod";
import type { Tx } from "../db/pool";
import type { ErrorClass } from "../errors";
import { stepOutcomeOf, type OutcomeStep, type StepOutcome } from "../events/step-outcome";
import type { EventStore } from "../events/store";
import type { ClaimedStep, OutcomeReactor, ReactionFallback } from "./dispatch";
import { StepExecutionError, type StepContext, type StepExecutor } from "./executors";

type StepCompleted = Extract<StepOutcome, { type: "StepCompleted" }>;
type StepFailed = Extract<StepOutcome, { type: "StepFailed" }>;

/** A step's completion, its output parsed with its kind's schema. */
export type CompletedStep<O> = Omit<StepCompleted, "data"> & { data: Omit<StepCompleted["data"], "output"> & { output: O } };

/** What a kind reacts to: its step's completion, or a failure that will not be retried. */
export type FinalOutcome<O> = CompletedStep<O> | StepFailed;

/** What a kind's reaction gets, in the transaction that recorded the outcome. */
export interface StepReaction<I, O> {
  store: EventStore;
  sessionId: string;
  step: { id: string; kind: string; input: I };
  outcome: FinalOutcome<O>;
}

/** What a kind's fallback gets when its reaction failed (a defect), in a transaction of its own with the outcome. */
export interface ReactionFailure<I> {
  store: EventStore;
  sessionId: string;
  /** `input` is null when it does not parse: that may be the very defect the reaction failed on. */
  step: { id: string; kind: string; input: I | null };
  /** Final or not: a failure that was to be retried is recorded as final with the fallback (dispatch.ts). */
  outcome: StepOutcome;
}

export interface StepKindSpec<I, O> {
  kind: string;
  input: z.ZodType<I>;
  output: z.ZodType<O>;
  // The types come from the schemas alone (NoInfer): an executor's result is checked against them, never widens them.
  /** Runs the step; throws StepExecutionError with a class from the error taxonomy. */
  execute(step: ClaimedStep, input: NoInfer<I>, ctx: StepContext): Promise<NoInfer<O>>;
  /** Decides what follows the step's final outcome (none: nothing does). */
  react?(tx: Tx, reaction: StepReaction<NoInfer<I>, NoInfer<O>>): Promise<void>;
  /** When `react` failed: ends what waits for the step visibly (none: nothing waits). */
  onReactFailure?(tx: Tx, reaction: ReactionFailure<NoInfer<I>>, message: string): Promise<void>;
  /** How an input that does not parse fails the step (default: internal_error, "step <id> (<kind>) has no valid input: <issues>"). */
  invalidInput?: InvalidInput;
}

/** How a step whose input does not parse fails: never retried, as the next attempt would get the same input. */
export interface InvalidInput {
  errorClass: ErrorClass;
  message(step: ClaimedStep, issues: string): string;
}

/** An entry of the registry, its types closed over. */
export interface StepKind {
  readonly kind: string;
  readonly execute: StepExecutor;
  readonly react: (tx: Tx, store: EventStore, sessionId: string, outcome: StepOutcome, step: OutcomeStep) => Promise<void>;
  readonly onReactFailure: (
    tx: Tx,
    store: EventStore,
    sessionId: string,
    outcome: StepOutcome,
    step: OutcomeStep,
    message: string,
  ) => Promise<void>;
}

/** A zod error's issues on one line, each with its path. */
export function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`).join("; ");
}

const INVALID_INPUT: InvalidInput = {
  errorClass: "internal_error",
  message: (step, issues) => `step ${step.id} (${step.kind}) has no valid input: ${issues}`,
};

export function defineStepKind<I, O>(spec: StepKindSpec<I, O>): StepKind {
  const { kind } = spec;
  /** The step's input for its reaction: a step that reached a reaction with an input that does not parse is a defect. */
  const reactionInput = (stepId: string, step: OutcomeStep): I => {
    const input = spec.input.safeParse(step.input);
    if (!input.success) throw new Error(`step ${stepId} (${kind}) has no valid input: ${issuesOf(input.error)}`);
    return input.data;
  };
  const finalOutcome = (outcome: StepOutcome): FinalOutcome<O> => {
    if (outcome.type === "StepFailed") return outcome;
    const output = spec.output.safeParse(outcome.data.output);
    if (!output.success) throw new Error(`step ${outcome.data.stepId} (${kind}) has no valid output: ${issuesOf(output.error)}`);
    return { ...outcome, data: { ...outcome.data, output: output.data } };
  };
  return {
    kind,
    execute: async (step, ctx) => {
      const input = spec.input.safeParse(step.input);
      if (!input.success) {
        const invalid = spec.invalidInput ?? INVALID_INPUT;
        throw new StepExecutionError(invalid.errorClass, invalid.message(step, issuesOf(input.error)), false);
      }
      const output = spec.output.safeParse(await spec.execute(step, input.data, ctx));
      // What is recorded is what the kind's reaction will read: a result it could not read is the executor's defect.
      if (!output.success) {
        throw new StepExecutionError(
          "internal_error",
          `step ${step.id} (${kind}) returned no valid output: ${issuesOf(output.error)}`,
          false,
        );
      }
      return output.data;
    },
    react: async (tx, store, sessionId, outcome, step) => {
      if (!spec.react) return;
      const id = outcome.data.stepId;
      await spec.react(tx, { store, sessionId, step: { id, kind, input: reactionInput(id, step) }, outcome: finalOutcome(outcome) });
    },
    onReactFailure: async (tx, store, sessionId, outcome, step, message) => {
      if (!spec.onReactFailure) return;
      const input = spec.input.safeParse(step.input);
      const failed = { id: outcome.data.stepId, kind, input: input.success ? input.data : null };
      await spec.onReactFailure(tx, { store, sessionId, step: failed, outcome }, message);
    },
  };
}

/** What a runner is composed with: its executors by kind, and the reactions, looked up by the outcome's step kind. */
export interface StepKindRegistry {
  readonly kinds: readonly string[];
  readonly executors: Record<string, StepExecutor>;
  /** The kind's reaction to a step's final outcome (a failure to be retried has none); none for a kind without an entry. */
  readonly react: OutcomeReactor;
  /** The kind's fallback when its reaction failed; none for a kind without an entry. */
  readonly onReactionError: ReactionFallback;
}

/**
 * The registry of `entries`, one per kind: a second entry of a kind is refused here, where the
 * runner is composed, rather than one silently replacing the other. A kind without an entry has
 * no executor (the runner fails its steps as internal_error) and no reaction.
 */
export function stepKindRegistry(entries: readonly StepKind[]): StepKindRegistry {
  const byKind = new Map<string, StepKind>();
  for (const entry of entries) {
    if (byKind.has(entry.kind)) throw new Error(`step kind "${entry.kind}" is registered twice: a kind has one entry`);
    byKind.set(entry.kind, entry);
  }
  return {
    kinds: [...byKind.keys()],
    executors: Object.fromEntries([...byKind].map(([kind, entry]) => [kind, entry.execute])),
    react: async (tx, store, sessionId, recorded, step) => {
      const outcome = stepOutcomeOf(recorded, { final: true });
      if (outcome) await byKind.get(step.kind)?.react(tx, store, sessionId, outcome, step);
    },
    onReactionError: async (tx, store, sessionId, recorded, message, step) => {
      const outcome = stepOutcomeOf(recorded, { final: false });
      if (outcome) await byKind.get(step.kind)?.onReactFailure(tx, store, sessionId, outcome, step, message);
    },
  };
}
