// The workspace clean-up's step kind (docs/architecture.md, "Step kinds"): `prune_workspace`, run
// by ./steps.ts on a runner and recorded by ./reactor.ts in the transaction of its outcome.
import { defineStepKind, type StepKind } from "../runner/step-kinds";
import { reactToPruneFailure, reactToPruneStep } from "./reactor";
import { PRUNE_STEP, pruneExecutor, ZPruneInput, ZPruneOutput, type PruneExecutorDeps } from "./steps";

export function pruneStepKind(deps: PruneExecutorDeps): StepKind {
  return defineStepKind({
    kind: PRUNE_STEP,
    input: ZPruneInput,
    output: ZPruneOutput,
    execute: pruneExecutor(deps),
    react: reactToPruneStep,
    onReactFailure: reactToPruneFailure,
  });
}
