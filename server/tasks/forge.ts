// The Forge pipeline's actions and its status (req F1, F2, F8, F10): a person starts a
// pipeline from an idea, edits a draft at its gate, gives feedback, passes, and answers
// when the pipeline stops (retry, guidance, abort). Each action is decided by the same
// workflow engine as every task and appended with the version it read.
import crypto from "node:crypto";
import { z } from "zod";
import { AppError } from "../errors";
import type { Actor, AppEvent, AppEventOf } from "../events/catalog";
import { getBlob, putBlob } from "../events/blobs";
import type { RecordedEvent } from "../events/types";
import { answered, decideOnTask, startTask, type TaskDeps } from "./commands";
import { currentState, stageCap } from "../workflow/transition";
import { definitionFor, foldTask, type StartedTask } from "../task-engine";
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

export interface ArtifactVersion {
  version: number;
  hash: string;
  size: number;
  kind: "draft" | "edit" | "held";
  by: string;
  problems: string[];
  at: string;
}

export interface ForgeStatus {
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
    iteration: number;
    cap: number;
    gate: boolean;
    usage: { calls: number; inputTokens: number; outputTokens: number };
  }>;
  artifacts: Array<{
    path: string;
    stage: string;
    hash: string;
    by: "agent" | "person";
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
  usage: { calls: number; tokens: number };
  budget: NonNullable<StartedTask["config"]["budget"]> | null;
  parent: { sessionId: string; changeType: string } | null;
  finalized: AppEventOf<"SessionFinalized">["data"] | null;
}

const typed = <E extends { type: string }>(events: E[]) => events as Array<E & AppEvent>;

export function forgeStatus(sessionId: string, events: RecordedEvent[]): ForgeStatus {
  const state = foldTask(events);
  if (state.status === "none" || state.config.workflow !== "forge")
    throw new AppError("NOT_FOUND", `session ${sessionId} is not a Forge session`);
  const def = definitionFor(state);
  const { pipeline, stages, usage } = state;
  const spec = currentState(def, state);
  const log = typed(events);
  let waiting: ForgeStatus["waiting"] = null;
  if (state.status === "active" && spec.type === "wait" && state.fsm !== def.initial) {
    if (state.fsm === def.global.step_failed)
      waiting = { stage: stages.current, kind: "agent_failed", actions: ["retry", "guidance", "abort"] };
    else {
      const actions: ForgeAction[] = ["edit", ...(["feedback", "pass", "abort"] as const).filter((t) => spec.on[t])];
      waiting = { stage: spec.stage ?? null, kind: state.fsm.endsWith("_stopped") ? "stopped" : "gate", actions };
    }
  }
  const versions = new Map<string, ArtifactVersion[]>();
  const kinds = { ArtifactRecorded: "draft", ArtifactEdited: "edit", ArtifactDraftHeld: "held" } as const;
  for (const e of log) {
    if (e.type !== "ArtifactRecorded" && e.type !== "ArtifactEdited" && e.type !== "ArtifactDraftHeld") continue;
    versions.set(e.data.path, [
      ...(versions.get(e.data.path) ?? []),
      {
        version: e.version,
        hash: e.data.hash,
        size: e.data.blob.size,
        kind: kinds[e.type],
        by: `${e.metadata.actor.kind}:${e.metadata.actor.id}`,
        problems: e.type === "ArtifactDraftHeld" ? [] : e.data.problems,
        at: e.recordedAt,
      },
    ]);
  }
  const stageState = (name: string): ForgeStageState => {
    if (stages.completed.includes(name)) return "completed";
    if (stages.current !== name || !stages.iterations[name]) return "pending";
    if (waiting?.kind === "stopped" || waiting?.kind === "agent_failed") return "stopped";
    if (waiting) return "waiting";
    return state.status === "active" ? "active" : "stopped";
  };
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
        // A person's gate is where a draft waits for a person (a `gate_on` transition), not the
        // stop every loop has: Coding has none (docs/forge.md, req F2).
        gate:
          Object.values(def.states).some(
            (s) => s.type === "step" && s.stage === name && Object.values(s.on).some((ts) => ts?.some((t) => t.guard === "gate_on")),
          ) &&
          (!state.config.gates || state.config.gates.includes(name)),
        usage: usage.byStage[name] ?? { calls: 0, inputTokens: 0, outputTokens: 0 },
      })),
    artifacts: Object.entries(pipeline.artifacts).map(([path, a]) => ({
      path,
      stage: a.stage,
      hash: a.hash,
      by: a.by,
      size: a.size,
      problems: a.problems,
      immutable: stages.completed.includes(a.stage),
      versions: versions.get(path) ?? [],
      held: pipeline.held[path] ? { hash: pipeline.held[path].hash, conflicts: pipeline.held[path].conflicts } : null,
    })),
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
    usage: { calls: usage.calls, tokens: usage.tokens },
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
