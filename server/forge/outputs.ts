// Reading the Forge steps' outputs (req F2–F4, F8, F11–F13): a stage actor's draft, a
// critic's findings joined by the rules checked by code and judged by the anti-loop, and a
// failed check's triage. The engine hands them over with what it made of the reply
// (server/workflow/extension.ts, OutputReading); the events and the trigger come back.
import { AppError } from "../errors";
import { applyEmitted, type ActiveTask, type Emitted, type Interpretation, type OutputReading, type Staged } from "../workflow/engine";
import { parseStrictJson, schemaFailure } from "../workflow/outputs";
import { ARTIFACT_PATHS, parseArtifact, ZCritique, ZRoute, type CodeMetadata, type Plan } from "./artifacts";
import { judgeLoop } from "./loop";
import { cascadeFeatureStatus, STAGE_RULES, type RuleFinding } from "./rules";
import { pipelineFold, type Pipeline } from "./state";

type Reading = OutputReading<Pipeline>;

/** The stage of a draft or a critique: the definition's checks make every such step name one. */
function stageOf(reading: Reading): Staged {
  if (!reading.stage)
    throw new AppError("INTERNAL", `workflow ${reading.definition.id}: a ${reading.stateSpec.step.output} step outside any stage`);
  return reading.stage;
}

/**
 * An actor's draft: each changed artifact of the stage recorded by hash (with its schema
 * problems), writes outside the stage refused, redrafts that would overwrite a person's
 * edit held back, progress cascaded from code metadata. An actor that left a required
 * artifact missing failed its step: a person is asked (retry, guidance, abort).
 */
export function readDraft(reading: Reading): Interpretation {
  const stage = stageOf(reading);
  const { state, command: cmd } = reading;
  const { stepId, output } = cmd;
  const forge = output.kind === "agent" ? output.forge : undefined;
  const events: Emitted[] = [reading.recordOutput(null, []), ...reading.committed];
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
      data: { stepId, stage: stage.name, ...a, problems, ...(json !== undefined ? { json } : {}) },
    });
  }
  for (const h of forge?.held ?? []) events.push({ type: "ArtifactDraftHeld", data: { stepId, stage: stage.name, ...h } });
  for (const message of forge?.warnings ?? []) events.push({ type: "ForgeWarning", data: { stage: stage.name, message } });
  const after = applyEmitted(pipelineFold, state, events);
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
export function ruleFindings(state: ActiveTask<Pipeline>, stage: Staged): RuleFinding[] {
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
export function readCritique(reading: Reading): Interpretation {
  const stage = stageOf(reading);
  const { state, recordOutput, committed } = reading;
  const parsed = parseStrictJson(reading.text, ZCritique);
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
        stepId: reading.command.stepId,
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

/** A failed check's triage: strict JSON naming the stage to go back to (req F13); anything else fails the step. */
export function readRoute({ text, recordOutput, committed, command }: Reading): Interpretation {
  const parsed = parseStrictJson(text, ZRoute);
  if (!parsed.ok)
    return { events: [recordOutput(null, parsed.errors), ...committed], trigger: "step_failed", failure: schemaFailure(parsed.errors) };
  return {
    events: [recordOutput(null, []), ...committed, { type: "CheckRouted", data: { stepId: command.stepId, ...parsed.value } }],
    trigger: `goto_${parsed.value.goto}`,
  };
}
