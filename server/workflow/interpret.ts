// Reading a step's output against what its state requires: the events that record it and
// the trigger it fires (done, approve, schema_invalid, tests_failed, ...). Strict JSON is
// parsed and checked here, and the orchestrator's checks are made from git and the
// manifests, never from the agent's word. The kinds the extension owns (a stage's draft, a
// critique, a failed check's route) are read by the extension (extension.ts).
import type { AgentRole } from "../agents/types";
import { AppError } from "../errors";
import { ZReviewVerdict, ZTaskSpec, ZTestPlan, type ParsedOutput } from "../events/agent-outputs";
import type { AgentStepOutput } from "../events/step-contract";
import type { Emitted, TaskCommandOf } from "./commands";
import type { StateSpec, WorkflowDefinition } from "./definition";
import type { Interpretation, WorkflowExtension } from "./extension";
import { enforceReviewRule, filesOutside, parseStrictJson, schemaFailure } from "./outputs";
import type { ActiveTask } from "./state";

export function interpret<S>(
  state: ActiveTask<S>,
  stateSpec: Extract<StateSpec, { type: "step" }>,
  cmd: TaskCommandOf<"StepSucceeded">,
  def: WorkflowDefinition,
  extension: WorkflowExtension<S>,
): Interpretation {
  const spec = stateSpec.step;
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
  // A staged step commits what the runner wrote too (a person's edits, the feedback history): nothing to record when that was nothing.
  const committed: Emitted[] =
    output.commit && !(output.forge && output.commit.empty) ? [{ type: "WorkspaceCommitted", data: { stepId, ...output.commit } }] : [];
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
    case "draft":
    case "critique":
    case "route": {
      const stageSpec = stateSpec.stage ? def.stages?.[stateSpec.stage] : undefined;
      const stage = stateSpec.stage && stageSpec ? { name: stateSpec.stage, spec: stageSpec } : null;
      return extension.outputs[spec.output]({ state, stateSpec, stage, command: cmd, definition: def, text, recordOutput, committed });
    }
    case "commands":
      throw new AppError("INTERNAL", "a commands step returned agent output");
  }
}

function manifestGlobs<S>(state: ActiveTask<S>, role: AgentRole): string[] | null {
  return state.config.agents[role]?.manifest?.allowedFiles ?? null;
}

/** The orchestrator's check of an executor's work: from git, never from the agent's word. */
function executionProblems<S>(state: ActiveTask<S>, output: AgentStepOutput): string[] {
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
