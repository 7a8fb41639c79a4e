// Reading a step's output against what its state requires: the events that record it and
// the trigger it fires (done, approve, schema_invalid, tests_failed, ...). Strict JSON is
// parsed and checked here, and the orchestrator's checks are made from git and the
// manifests, never from the agent's word.
import type { AgentRole } from "../agents/types";
import { AppError, type ErrorClass } from "../errors";
import { ZReviewVerdict, ZTaskSpec, ZTestPlan, type ParsedOutput } from "../events/agent-outputs";
import type { AgentStepOutput } from "../events/step-contract";
import type { Emitted, TaskCommandOf } from "./commands";
import type { StepSpec } from "./definition";
import { enforceReviewRule, filesOutside, parseStrictJson } from "./outputs";
import type { ActiveTask } from "./state";

export interface Interpretation {
  events: Emitted[];
  trigger: string;
  /** Why the output was rejected, when it was: carried into the outcome if the session ends. */
  failure?: { errorClass: ErrorClass; diagnosis: string };
}

const schemaFailure = (errors: string[]) => ({ errorClass: "schema_invalid" as const, diagnosis: errors.join("; ").slice(0, 500) });

export function interpret(state: ActiveTask, spec: StepSpec, cmd: TaskCommandOf<"StepSucceeded">): Interpretation {
  const { stepId, attempt, output } = cmd;
  if (output.kind === "commands") {
    const events: Emitted[] = output.results.map((r, index) => ({
      type: "TestCommandRecorded",
      data: { stepId, index, ...r, passed: r.status === "ran" && r.exitCode === r.expectedExitCode },
    }));
    const failed = output.results.find((r) => !(r.status === "ran" && r.exitCode === r.expectedExitCode));
    if (output.results.length > 0 && !failed) return { events, trigger: "tests_passed" };
    const diagnosis = failed ? `${failed.argv.join(" ")}: ${failed.reason ?? `exit ${failed.exitCode}`}` : "the test plan had no commands";
    return { events, trigger: "tests_failed", failure: { errorClass: failed?.errorClass ?? "command_failed", diagnosis } };
  }
  const text = cmd.rawText ?? output.preview;
  const recordOutput = (parsed: ParsedOutput | null, validationErrors: string[]): Emitted => ({
    type: "AgentOutputRecorded",
    data: {
      stepId,
      attempt,
      role: spec.role,
      agentId: output.agentId,
      phase: spec.phase,
      raw: output.raw,
      preview: output.preview,
      parsed,
      validationErrors,
      simulated: output.simulated,
      ...(output.usage ? { usage: output.usage } : {}),
    },
  });
  const committed: Emitted[] = output.commit ? [{ type: "WorkspaceCommitted", data: { stepId, ...output.commit } }] : [];
  switch (spec.output) {
    case "text":
      return { events: [recordOutput(null, [])], trigger: "done" };
    case "build":
      return { events: [recordOutput(null, []), ...committed], trigger: "done" };
    case "review_verdict": {
      const parsed = parseStrictJson(text, ZReviewVerdict);
      if (!parsed.ok)
        return { events: [recordOutput(null, parsed.errors)], trigger: "schema_invalid", failure: schemaFailure(parsed.errors) };
      const enforced = enforceReviewRule(parsed.value);
      return {
        events: [
          recordOutput(parsed.value, []),
          {
            type: "ReviewVerdictRecorded",
            data: {
              stepId,
              decision: enforced.decision,
              modelDecision: parsed.value.decision,
              override: enforced.override,
              summary: parsed.value.summary,
              findings: parsed.value.findings,
            },
          },
        ],
        trigger: enforced.decision,
      };
    }
    case "test_plan": {
      const parsed = parseStrictJson(text, ZTestPlan);
      if (!parsed.ok)
        return { events: [recordOutput(null, parsed.errors)], trigger: "schema_invalid", failure: schemaFailure(parsed.errors) };
      return {
        events: [recordOutput(parsed.value, []), { type: "TestPlanRecorded", data: { stepId, ...parsed.value } }],
        trigger: "plan_valid",
      };
    }
    case "task_spec": {
      const parsed = parseStrictJson(text, ZTaskSpec);
      if (!parsed.ok)
        return { events: [recordOutput(null, parsed.errors)], trigger: "task_spec_invalid", failure: schemaFailure(parsed.errors) };
      const allowed = manifestGlobs(state, "planner");
      const outside = allowed ? filesOutside(parsed.value.files, allowed) : [];
      if (allowed && outside.length) {
        const problem = `files outside the planner's manifest (${allowed.join(", ")}): ${outside.join(", ")}`;
        return { events: [recordOutput(parsed.value, [problem])], trigger: "task_spec_invalid", failure: schemaFailure([problem]) };
      }
      return {
        events: [recordOutput(parsed.value, []), { type: "TaskSpecRecorded", data: { stepId, spec: parsed.value } }],
        trigger: "task_spec_valid",
      };
    }
    case "execution": {
      const reasons = executionProblems(state, output);
      const events = [recordOutput(null, []), ...committed];
      if (reasons.length) {
        return {
          events: [...events, { type: "ExecutionRejected", data: { stepId, reasons } }],
          trigger: "execution_rejected",
          failure: { errorClass: "tool_error", diagnosis: reasons.join("; ") },
        };
      }
      return { events, trigger: "execution_done" };
    }
    case "commands":
      throw new AppError("INTERNAL", "a commands step returned agent output");
  }
}

function manifestGlobs(state: ActiveTask, role: AgentRole): string[] | null {
  return state.config.agents[role]?.manifest?.allowedFiles ?? null;
}

/** The orchestrator's check of an executor's work: from git, never from the agent's word. */
function executionProblems(state: ActiveTask, output: AgentStepOutput): string[] {
  const changed = (output.commit?.changedFiles ?? []).flatMap((f) => (f.previousPath ? [f.path, f.previousPath] : [f.path]));
  if (changed.length === 0) return ["no files changed: the TaskSpec was not carried out"];
  const problems: string[] = [];
  const manifest = manifestGlobs(state, "executor");
  if (manifest) {
    const outside = filesOutside(changed, manifest);
    if (outside.length) problems.push(`changed files outside the executor's manifest (${manifest.join(", ")}): ${outside.join(", ")}`);
  }
  if (state.taskSpec) {
    const notInSpec = filesOutside(changed, state.taskSpec.files);
    if (notInSpec.length) problems.push(`changed files the TaskSpec does not name: ${notInSpec.join(", ")}`);
  }
  return problems;
}
