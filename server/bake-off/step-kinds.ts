// The bake-off's step kind (docs/architecture.md, "Step kinds"): the judge, run by ./judge.ts
// and recorded on the parent session in the transaction of its outcome.
import { defineStepKind, type StepKind } from "../runner/step-kinds";
import {
  JUDGE_STEP,
  judgeExecutor,
  reactToJudge,
  reactToJudgeFailure,
  ZJudgeStepInput,
  ZJudgeStepOutput,
  type JudgeExecutorDeps,
} from "./judge";

export function judgeStepKind(deps: JudgeExecutorDeps): StepKind {
  return defineStepKind({
    kind: JUDGE_STEP,
    input: ZJudgeStepInput,
    output: ZJudgeStepOutput,
    execute: judgeExecutor(deps),
    react: reactToJudge,
    onReactFailure: reactToJudgeFailure,
  });
}
