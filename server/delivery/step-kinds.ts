// The delivery's step kind (docs/architecture.md, "Step kinds"): `deliver`, run by ./steps.ts
// and recorded by ./reactor.ts in the transaction of its outcome.
import { defineStepKind, type StepKind } from "../runner/step-kinds";
import { reactToDeliveryFailure, reactToDeliveryStep } from "./reactor";
import { DELIVER_STEP, deliveryExecutor, ZDeliverInput, ZDeliverOutput, type DeliveryExecutorDeps } from "./steps";

export function deliverStepKind(deps: DeliveryExecutorDeps): StepKind {
  return defineStepKind({
    kind: DELIVER_STEP,
    input: ZDeliverInput,
    output: ZDeliverOutput,
    execute: deliveryExecutor(deps),
    react: reactToDeliveryStep,
    onReactFailure: reactToDeliveryFailure,
  });
}
