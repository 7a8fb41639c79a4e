// The conversations' step kinds (docs/architecture.md, "Step kinds"): a call and a timer, each
// run by ./steps.ts and decided on by the conversation in ./reactor.ts.
import { defineStepKind, type StepKind } from "../runner/step-kinds";
import { reactToCall, reactToCallFailure, reactToTimer } from "./reactor";
import { CALL_STEP, TIMER_STEP } from "./record";
import {
  callExecutor,
  timerExecutor,
  ZCallStepOutput,
  ZConversationCallInput,
  ZTimerInput,
  ZTimerStepOutput,
  type ConversationExecutorDeps,
} from "./steps";

export function conversationStepKinds(deps: ConversationExecutorDeps): StepKind[] {
  return [
    defineStepKind({
      kind: CALL_STEP,
      input: ZConversationCallInput,
      output: ZCallStepOutput,
      execute: callExecutor(deps),
      react: reactToCall,
      onReactFailure: reactToCallFailure,
    }),
    // No fallback for a timer: there is no call to record as failed.
    defineStepKind({ kind: TIMER_STEP, input: ZTimerInput, output: ZTimerStepOutput, execute: timerExecutor, react: reactToTimer }),
  ];
}
