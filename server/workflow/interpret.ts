// Reading a step's output against what its state requires: the events that record it and
// the trigger it fires (done, approve, schema_invalid, tests_failed, ...). Strict JSON is
// parsed and checked here, and the orchestrator's checks are made from git and the
// manifests, never from the agent's word.
import type { AgentRole } from "../agents/types";
import { AppError, type ErrorClass } from "../errors";
import { ZReviewVerdict, ZTaskSpec, ZTestPlan, type ParsedOutput } from "../events/agent-outputs";
import type { AgentStepOutput } from "../events/step-contract";
import type { Emitted, TaskCommandOf } from "./commands";
import type { StageSpec, StateSpec, WorkflowDefinition } from "./definition";
import { ARTIFACT_PATHS, parseArtifact, ZCritique, ZRoute, type CodeMetadata, type Plan } from "../forge/artifacts";
import { judgeLoop } from "../forge/loop";
import { cascadeFeatureStatus, STAGE_RULES, type RuleFinding } from "../forge/rules";
import { applyEmitted } from "./state";
import { enforceReviewRule, filesOutside, parseStrictJson } from "./outputs";
import type { ActiveTask } from "./state";

export interface Interpretation {
  events: Emitted[];
  trigger: string;
  /** Why the output was rejected, when it was: carried into the outcome if the session ends. */
  failure?: { errorClass?: ErrorClass; diagnosis: string };
}

const schemaFailure = (errors: string[]) => ({ errorClass: "schema_invalid" as const, diagnosis: errors.join("; ").slice(0, 500) });

export function interpret(
  state: ActiveTask,
  stateSpec: Extract<StateSpec, { type: "step" }>,
  cmd: TaskCommandOf<"StepSucceeded">,
  def: WorkflowDefinition,
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
    case "route": {
      const parsed = parseStrictJson(text, ZRoute);
      if (!parsed.ok)
        return { events: [recordOutput(null, parsed.errors), ...committed], trigger: "step_failed", failure: schemaFailure(parsed.errors) };
      return {
        events: [recordOutput(null, []), ...committed, { type: "CheckRouted", data: { stepId, ...parsed.value } }],
        trigger: `goto_${parsed.value.goto}`,
      };
    }
    case "draft":
    case "critique": {
      const stageName = stateSpec.stage;
      const stage = stageName ? def.stages?.[stageName] : undefined;
      if (!stageName || !stage) throw new AppError("INTERNAL", `workflow ${def.id}: a ${spec.output} step outside any stage`);
      const staged = { name: stageName, spec: stage };
      return spec.output === "draft"
        ? interpretDraft(state, staged, cmd, [recordOutput(null, []), ...committed])
        : interpretCritique(state, staged, cmd, text, recordOutput, committed);
    }
    case "commands":
      throw new AppError("INTERNAL", "a commands step returned agent output");
  }
}

interface Staged {
  name: string;
  spec: StageSpec;
}

/**
 * An actor's draft: each changed artifact of the stage recorded by hash (with its schema
 * problems), writes outside the stage refused, redrafts that would overwrite a person's
 * edit held back, progress cascaded from code metadata. An actor that left a required
 * artifact missing failed its step: a person is asked (retry, guidance, abort).
 */
function interpretDraft(state: ActiveTask, stage: Staged, cmd: TaskCommandOf<"StepSucceeded">, recorded: Emitted[]): Interpretation {
  const { stepId, output } = cmd;
  const forge = output.kind === "agent" ? output.forge : undefined;
  const events = [...recorded];
  if (forge?.refusedWrites.length)
    events.push({
      type: "ArtifactWriteRefused",
      data: {
        stage: stage.name,
        stepId,
        by: "agent",
        paths: forge.refusedWrites,
        reason: `the ${stage.name} stage may write only ${stage.spec.writes.join(" ") || "nothing"}`,
      },
    });
  for (const a of forge?.artifacts ?? []) {
    if (!stage.spec.artifacts.includes(a.path) || state.pipeline.artifacts[a.path]?.hash === a.hash) continue;
    // JSON artifacts are read and checked; markdown is stored, and only an empty one is a problem.
    const text = cmd.artifactTexts?.[a.path];
    const { json, problems } =
      text !== undefined ? parseArtifact(a.path, text) : { json: undefined, problems: a.size ? [] : [`${a.path} is empty`] };
    events.push({
      type: "ArtifactRecorded",
      data: { stepId, stage: stage.name, ...a, problems, ...(json !== undefined ? { json: json as never } : {}) },
    });
  }
  for (const h of forge?.held ?? []) events.push({ type: "ArtifactDraftHeld", data: { stepId, stage: stage.name, ...h } });
  for (const message of forge?.warnings ?? []) events.push({ type: "ForgeWarning", data: { stage: stage.name, message } });
  const after = applyEmitted(state, events);
  const pipeline = after.status === "none" ? state.pipeline : after.pipeline;
  const metadata = pipeline.artifacts[ARTIFACT_PATHS.codeMetadata];
  const plan = pipeline.artifacts[ARTIFACT_PATHS.plan]?.json as Plan | undefined;
  if (metadata && metadata !== state.pipeline.artifacts[ARTIFACT_PATHS.codeMetadata] && metadata.json && plan) {
    const { tasks } = metadata.json as CodeMetadata;
    events.push({ type: "ProgressRecorded", data: { stepId, tasks, features: cascadeFeatureStatus(plan, tasks) } });
  }
  const missing = stage.spec.artifacts.filter((p) => !pipeline.artifacts[p]);
  if (missing.length)
    return {
      events,
      trigger: "step_failed",
      failure: { errorClass: "tool_error", diagnosis: `the ${stage.name} actor wrote no ${missing.join(", ")}` },
    };
  return { events, trigger: "done" };
}

/** The rules checked by code for a stage, on the artifacts as they are now: blocking findings. */
export function ruleFindings(state: ActiveTask, stage: Staged): RuleFinding[] {
  const { artifacts } = state.pipeline;
  const findings: RuleFinding[] = [];
  for (const path of stage.spec.artifacts) {
    const a = artifacts[path];
    if (!a) findings.push({ id: `rule:missing:${path}`, message: `${path} is missing` });
    else a.problems.forEach((message, i) => findings.push({ id: `rule:schema:${path}:${i}`, message }));
  }
  const json = Object.fromEntries(Object.entries(artifacts).flatMap(([path, a]) => (a.json !== undefined ? [[path, a.json]] : [])));
  const rules = STAGE_RULES[stage.name];
  if (rules) findings.push(...rules({ idea: state.config.prompt, json, changedFiles: state.pipeline.changed[stage.name] ?? [] }));
  return findings;
}

/**
 * A critic's verdict: strict JSON (findings with stable ids) joined by the rules checked by
 * code, which the critic cannot wave through; blocking findings forbid a pass. A revise
 * is judged by the anti-loop (loop.ts): a warning at the second critique, a person asked
 * at the third — or at once when a resolved finding comes back. Output that is not valid
 * JSON fails the step: a person is asked.
 */
function interpretCritique(
  state: ActiveTask,
  stage: Staged,
  cmd: TaskCommandOf<"StepSucceeded">,
  text: string,
  recordOutput: (parsed: ParsedOutput | null, errors: string[]) => Emitted,
  committed: Emitted[],
): Interpretation {
  const parsed = parseStrictJson(text, ZCritique);
  if (!parsed.ok)
    return { events: [recordOutput(null, parsed.errors), ...committed], trigger: "step_failed", failure: schemaFailure(parsed.errors) };
  const findings = [
    ...parsed.value.findings.map((f) => ({ ...f, source: "critic" as const })),
    ...ruleFindings(state, stage).map((f) => ({ ...f, severity: "blocking" as const, source: "rule" as const })),
  ];
  const blocking = findings.filter((f) => f.severity === "blocking").map((f) => f.id);
  const revise = blocking.length > 0 || parsed.value.decision === "revise";
  const history = state.pipeline.critiques[stage.name] ?? [];
  const memory = { blocking, text: [parsed.value.summary, ...findings.map((f) => f.message)].join("\n") };
  const loop = revise
    ? judgeLoop([...history, memory])
    : { round: history.length + 1, similarity: null, persisted: [], reopened: [], stalled: false, warning: null, escalate: null };
  const decision = !revise ? "pass" : loop.escalate ? "escalate" : "revise";
  const events: Emitted[] = [
    recordOutput(null, []),
    ...committed,
    {
      type: "CritiqueRecorded",
      data: {
        stepId: cmd.stepId,
        stage: stage.name,
        round: loop.round,
        decision,
        modelDecision: parsed.value.decision,
        summary: parsed.value.summary,
        findings,
        loop: {
          similarity: loop.similarity,
          persisted: loop.persisted,
          reopened: loop.reopened,
          stalled: loop.stalled,
          warning: loop.warning,
          escalate: loop.escalate,
        },
      },
    },
  ];
  if (loop.warning) events.push({ type: "ForgeWarning", data: { stage: stage.name, message: loop.warning } });
  return {
    events,
    trigger: decision,
    ...(decision === "escalate" ? { failure: { diagnosis: loop.escalate ?? "" } } : {}),
  };
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
