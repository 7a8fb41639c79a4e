// The Forge pipeline's actions and its status (req F1, F2, F8, F10): a person starts a
// pipeline from an idea, edits a draft at its gate, gives feedback, passes, and answers
// when the pipeline stops (retry, guidance, abort). Each action is decided by the same
// workflow engine as every task and appended with the version it read.
import crypto from "node:crypto";
import { z } from "zod";
import { AppError } from "../errors";
import { actorLabel, type Actor, type AppEvent, type AppEventOf } from "../events/catalog";
import { getBlob, putBlob } from "../events/blobs";
import type { RecordedEvent } from "../events/types";
import { answered, decideOnTask, startTask, type TaskDeps } from "./commands";
import { currentState, stageCap } from "../workflow/transition";
import { definitionFor, foldTask, stageFigures, type StageVerdicts, type StartedTask } from "../task-engine";
import type { PricingSettings } from "../config/schemas";
import { NO_USAGE, sessionUsage, type SessionUsage, type UsageFigures } from "../usage/totals";
import { NO_VERDICTS } from "../forge/stage-figures";
import { forgeStatusOf } from "../../lib/outcomes";
import { FORGE_STAGES, MODIFY_STAGES } from "../forge/artifacts";

const ZStageName = z.enum(FORGE_STAGES);

export const ZForgeNewInput = z.object({
  projectId: z.string().min(1),
  idea: z.string().trim().min(1, "say what the idea is").max(20_000),
  title: z.string().trim().min(1).max(200).optional(),
  /** Stages with a person's gate (default: the project's settings, else idea, prd, design and plan). */
  gates: z.array(ZStageName).optional(),
  /** Iteration caps per stage, over the project's settings. */
  caps: z.partialRecord(ZStageName, z.number().int().min(1).max(20)).optional(),
  budget: z
    .strictObject({
      maxCalls: z.number().int().min(1).max(10_000).optional(),
      maxTokens: z.number().int().min(1).optional(),
      reserveTokensPerCall: z.number().int().min(0).optional(),
      maxWallMs: z.number().int().min(1).optional(),
    })
    .optional(),
});
export type TForgeNewInput = z.input<typeof ZForgeNewInput>;

export const ZForgeRef = z.object({ sessionId: z.string().min(1).max(100) });
export const ZForgeEditInput = ZForgeRef.extend({
  path: z.string().min(1).max(300),
  content: z.string().max(1024 * 1024),
  /** The hash of the version the edit was made on (null for a file that did not exist). */
  baseHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
});
export const ZForgeFeedbackInput = ZForgeRef.extend({ text: z.string().trim().min(1).max(20_000) });
export const ZForgeChooseInput = ZForgeRef.extend({
  choice: z.enum(["retry", "guidance", "abort"]),
  text: z.string().trim().max(20_000).optional(),
});
export const ZForgeArtifactInput = ZForgeRef.extend({ hash: z.string().regex(/^[0-9a-f]{64}$/) });

export async function newForge(deps: TaskDeps, raw: TForgeNewInput, actor: Actor) {
  const input = ZForgeNewInput.parse(raw);
  const title = input.title ?? `Forge: ${(input.idea.split("\n")[0] ?? input.idea).slice(0, 110)}`;
  return startTask(deps, { projectId: input.projectId, prompt: input.idea, workflow: "forge", mode: "new", title }, actor, {
    staged: {
      ...(input.gates ? { gates: input.gates } : {}),
      ...(input.caps ? { stageCaps: input.caps as Record<string, number> } : {}),
      ...(input.budget ? { budget: input.budget } : {}),
    },
  });
}

/**
 * A person's edit of a draft. The text is stored first (a blob; unreferenced blobs are
 * collected later), then the engine decides: a stale base or a state without a gate is a
 * conflict; an edit of a completed stage is refused and the refusal recorded.
 */
export async function editArtifact(deps: TaskDeps, raw: z.input<typeof ZForgeEditInput>, actor: Actor) {
  const input = ZForgeEditInput.parse(raw);
  const content = Buffer.from(input.content, "utf8");
  const hash = crypto.createHash("sha256").update(content).digest("hex");
  const blob = await putBlob(deps.pool, content, input.path.endsWith(".json") ? "application/json" : "text/markdown; charset=utf-8");
  const result = await decideOnTask(deps, input.sessionId, actor, {
    type: "EditArtifact",
    path: input.path,
    content: input.content,
    hash,
    blob,
    baseHash: input.baseHash,
  });
  const refused = typed(result.events).find((e) => e.type === "ArtifactWriteRefused");
  if (refused?.type === "ArtifactWriteRefused") throw new AppError("CONFLICT", `refused: ${refused.data.reason}`, { recorded: true });
  return { sessionId: result.sessionId, version: result.version, hash };
}

export async function passGate(deps: TaskDeps, raw: z.input<typeof ZForgeRef>, actor: Actor) {
  const { sessionId } = ZForgeRef.parse(raw);
  return answered(decideOnTask(deps, sessionId, actor, { type: "PassGate" }));
}

export async function giveFeedback(deps: TaskDeps, raw: z.input<typeof ZForgeFeedbackInput>, actor: Actor) {
  const input = ZForgeFeedbackInput.parse(raw);
  return answered(decideOnTask(deps, input.sessionId, actor, { type: "GiveFeedback", text: input.text }));
}

export async function choose(deps: TaskDeps, raw: z.input<typeof ZForgeChooseInput>, actor: Actor) {
  const input = ZForgeChooseInput.parse(raw);
  return answered(
    decideOnTask(deps, input.sessionId, actor, { type: "Choose", choice: input.choice, ...(input.text ? { text: input.text } : {}) }),
  );
}

// ---- Status -------------------------------------------------------------------------------

export type ForgeStageState = "pending" | "active" | "waiting" | "stopped" | "completed";
export type ForgeAction = "edit" | "feedback" | "pass" | "abort" | "retry" | "guidance";

/** One version of an artifact, as the artifact list and its version menu both show it. */
export interface ArtifactVersion {
  /** Its place in the artifact's history: v1, v2, … (a held-back redraft is not a version). */
  number: number;
  /** The event that recorded it. */
  version: number;
  hash: string;
  size: number;
  kind: "draft" | "edit";
  /** Who made it (an actor label: `user:<id>` for a person's edit). */
  by: string;
  /** An agent's draft that kept (merged in) people's edits: their actor labels, oldest first. */
  keptEditsBy: string[];
  problems: string[];
  at: string;
}

/** What forgeStatus reads from the log alone: everything but the calls, tokens and cost. */
export interface ForgePipelineStatus {
  sessionId: string;
  title: string;
  /** Req F10: InProgress while it runs or waits (an interrupted session stays so and can go on), then Completed or Failed. */
  status: "InProgress" | "Completed" | "Failed";
  outcome: string | null;
  fsm: string;
  /** Who must act now, and what they may do. */
  waiting: { stage: string | null; kind: "gate" | "stopped" | "agent_failed"; actions: ForgeAction[] } | null;
  needed: AppEventOf<"PersonNeeded">["data"] | null;
  stages: Array<{
    name: string;
    title: string;
    state: ForgeStageState;
    /** The iteration the stage's cap counts. */
    iteration: number;
    cap: number;
    /** How often the stage ran (stageFigures: the same count as the summary and summary.json). */
    runs: number;
    verdicts: StageVerdicts;
    gate: boolean;
  }>;
  artifacts: Array<{
    path: string;
    stage: string;
    hash: string;
    /** The current version's number (v<number>), from the same list as `versions`. */
    number: number;
    by: "agent" | "person";
    /** For an agent's version that kept people's edits: their actor labels. */
    keptEditsBy: string[];
    size: number;
    problems: string[];
    immutable: boolean;
    versions: ArtifactVersion[];
    held: { hash: string; conflicts: number } | null;
  }>;
  critiques: Array<Pick<AppEventOf<"CritiqueRecorded">["data"], "stage" | "round" | "decision" | "summary" | "findings" | "loop">>;
  feedback: StartedTask["pipeline"]["feedback"];
  warnings: Array<{ stage: string | null; message: string }>;
  refusals: Array<Pick<AppEventOf<"ArtifactWriteRefused">["data"], "stage" | "by" | "paths" | "reason">>;
  progress: AppEventOf<"ProgressRecorded">["data"]["features"];
  /** What the budget counts: agent calls reserved when scheduled, tokens reported. */
  budgetUsed: { calls: number; tokens: number };
  budget: NonNullable<StartedTask["config"]["budget"]> | null;
  parent: { sessionId: string; changeType: string } | null;
  finalized: AppEventOf<"SessionFinalized">["data"] | null;
}

/** The pipeline with its calls, tokens and cost, in all and per stage, from the usage projection (sessionUsage). */
export interface ForgeStatus extends Omit<ForgePipelineStatus, "stages"> {
  stages: Array<ForgePipelineStatus["stages"][number] & { usage: UsageFigures }>;
  usage: UsageFigures & { currency: string };
}

const typed = <E extends { type: string }>(events: E[]) => events as Array<E & AppEvent>;

/** The status with the session's usage, as every reader shows it: the one projection's figures (server/usage/totals.ts). */
export function withUsage(status: ForgePipelineStatus, usage: SessionUsage): ForgeStatus {
  const byStage = new Map(usage.byStage.map(({ stage, ...f }) => [stage, f]));
  return {
    ...status,
    stages: status.stages.map((s) => ({ ...s, usage: byStage.get(s.name) ?? NO_USAGE })),
    usage: { currency: usage.currency, ...usage.total },
  };
}

/** A Forge session's status with its usage (forge.status, `catcafe forge status`, the Forge page). */
export async function readForgeStatus(deps: TaskDeps, sessionId: string, pricing: PricingSettings): Promise<ForgeStatus> {
  const status = forgeStatus(sessionId, await deps.store.readStream(sessionId));
  return withUsage(status, await sessionUsage(deps.pool, sessionId, pricing));
}

/** Every actor label a status shows (its versions' makers and the people whose edits were kept), to resolve to names. */
export function statusActors(status: ForgePipelineStatus): string[] {
  return [...new Set(status.artifacts.flatMap((a) => a.versions.flatMap((v) => [v.by, ...v.keptEditsBy])))];
}

export function forgeStatus(sessionId: string, events: RecordedEvent[]): ForgePipelineStatus {
  const state = foldTask(events);
  if (state.status === "none" || state.config.workflow !== "forge")
    throw new AppError("NOT_FOUND", `session ${sessionId} is not a Forge session`);
  const def = definitionFor(state);
  const { pipeline, stages, usage } = state;
  const spec = currentState(def, state);
  const log = typed(events);
  let waiting: ForgePipelineStatus["waiting"] = null;
  if (state.status === "active" && spec.type === "wait" && state.fsm !== def.initial) {
    if (state.fsm === def.global.step_failed)
      waiting = { stage: stages.current, kind: "agent_failed", actions: ["retry", "guidance", "abort"] };
    else {
      const actions: ForgeAction[] = ["edit", ...(["feedback", "pass", "abort"] as const).filter((t) => spec.on[t])];
      waiting = { stage: spec.stage ?? null, kind: state.fsm.endsWith("_stopped") ? "stopped" : "gate", actions };
    }
  }
  // The fold's list of versions (pipeline.versions), with who made each from the events' metadata.
  const recorded = new Map(
    log.flatMap((e) => (e.type === "ArtifactRecorded" || e.type === "ArtifactEdited" ? [[e.version, e] as const] : [])),
  );
  const actorAt = (version: number) => {
    const e = recorded.get(version);
    return e ? actorLabel(e.metadata.actor) : "system";
  };
  const versionsOf = (path: string): ArtifactVersion[] =>
    (pipeline.versions[path] ?? []).map((v, i) => {
      const e = recorded.get(v.version);
      return {
        number: i + 1,
        version: v.version,
        hash: v.hash,
        size: e?.data.size ?? 0,
        kind: v.kind,
        by: actorAt(v.version),
        keptEditsBy: [...new Set(v.keptEdits.map(actorAt))],
        problems: e?.data.problems ?? [],
        at: e?.recordedAt ?? "",
      };
    });
  const stageState = (name: string): ForgeStageState => {
    if (stages.completed.includes(name)) return "completed";
    if (stages.current !== name || !stages.iterations[name]) return "pending";
    if (waiting?.kind === "stopped" || waiting?.kind === "agent_failed") return "stopped";
    if (waiting) return "waiting";
    return state.status === "active" ? "active" : "stopped";
  };
  const figures = new Map(stageFigures(state).map((f) => [f.name, f]));
  const forked = log.find((e) => e.type === "SessionForked");
  const progress = log.filter((e) => e.type === "ProgressRecorded").at(-1);
  const finalized = log.filter((e) => e.type === "SessionFinalized").at(-1);
  const outcome = state.status === "finished" ? state.outcome : null;
  return {
    sessionId,
    title: log.find((e) => e.type === "SessionCreated")?.data.title ?? sessionId,
    status: forgeStatusOf(outcome),
    outcome,
    fsm: state.fsm,
    waiting,
    needed: state.needed,
    stages: Object.entries(def.stages ?? {})
      // The change's triage and report are a modify session's stages only.
      .filter(([name]) => pipeline.change || !MODIFY_STAGES.includes(name))
      .map(([name, stage]) => ({
        name,
        title: stage.title,
        state: stageState(name),
        iteration: stages.iterations[name] ?? 0,
        cap: stageCap(def, state, name),
        runs: figures.get(name)?.runs ?? 0,
        verdicts: figures.get(name)?.verdicts ?? NO_VERDICTS,
        // A person's gate is where a draft waits for a person (a `gate_on` transition), not the
        // stop every loop has: Coding has none (docs/forge.md, req F2).
        gate:
          Object.values(def.states).some(
            (s) => s.type === "step" && s.stage === name && Object.values(s.on).some((ts) => ts?.some((t) => t.guard === "gate_on")),
          ) &&
          (!state.config.gates || state.config.gates.includes(name)),
      })),
    artifacts: Object.entries(pipeline.artifacts).map(([path, a]) => {
      const versions = versionsOf(path);
      const current = versions.findLast((v) => v.hash === a.hash);
      return {
        path,
        stage: a.stage,
        hash: a.hash,
        number: current?.number ?? versions.length,
        by: a.by,
        keptEditsBy: current?.keptEditsBy ?? [],
        size: a.size,
        problems: a.problems,
        immutable: stages.completed.includes(a.stage),
        versions,
        held: pipeline.held[path] ? { hash: pipeline.held[path].hash, conflicts: pipeline.held[path].conflicts } : null,
      };
    }),
    critiques: log
      .filter((e) => e.type === "CritiqueRecorded")
      .map((e) => ({
        stage: e.data.stage,
        round: e.data.round,
        decision: e.data.decision,
        summary: e.data.summary,
        findings: e.data.findings,
        loop: e.data.loop,
      })),
    feedback: pipeline.feedback,
    warnings: log.filter((e) => e.type === "ForgeWarning").map((e) => e.data),
    refusals: log
      .filter((e) => e.type === "ArtifactWriteRefused")
      .map((e) => ({ stage: e.data.stage, by: e.data.by, paths: e.data.paths, reason: e.data.reason })),
    progress: progress?.type === "ProgressRecorded" ? progress.data.features : [],
    budgetUsed: { calls: usage.calls, tokens: usage.tokens },
    budget: state.config.budget ?? null,
    parent: forked?.type === "SessionForked" ? { sessionId: forked.data.parentId, changeType: forked.data.reason } : null,
    finalized: finalized?.type === "SessionFinalized" ? finalized.data : null,
  };
}

/** The text of one version of one of the session's artifacts (only hashes the session recorded are served). */
export async function artifactText(deps: TaskDeps, events: RecordedEvent[], hash: string): Promise<{ path: string; text: string }> {
  for (const e of typed(events)) {
    if ((e.type === "ArtifactRecorded" || e.type === "ArtifactEdited" || e.type === "ArtifactDraftHeld") && e.data.hash === hash) {
      return { path: e.data.path, text: (await getBlob(deps.pool, e.data.blob.blob)).content.toString("utf8") };
    }
  }
  throw new AppError("NOT_FOUND", `the session has no artifact version ${hash.slice(0, 12)}`);
}
