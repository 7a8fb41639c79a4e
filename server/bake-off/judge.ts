// A bake-off's judge (docs/bake-off.md, "The judge"): a person asks, and a runner calls the
// judge agent — the session's reviewer by default, or another agent named — with each
// contender's outcome, verdicts, test results and diff (each diff cut to a size); its reply
// must be strict JSON, `{"winner", "ranking", "reasons"}`, checked like every verdict (an
// unknown contender id, a duplicate, a winner that is not ranked first: schema_invalid). An
// invalid reply is recorded and the judge is asked again with the errors, up to JUDGE_TRIES;
// then the judge failed. The advice (BakeOffJudged) is advisory only: a person picks.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { createAgent, invokeAgent, usageOf, ZAgentConfig } from "../agents";
import { AgentError } from "../agents/types";
import { ZAgentUsage } from "../agent-calls";
import { databaseCallGate } from "../brains/rate-limit";
import { withTransaction, type Db, type Tx } from "../db/pool";
import { AppError } from "../errors";
import { ZJudgeRecommendation, type JudgeRecommendation } from "../events/bake-off-catalog";
import { sessionBundles } from "../events/bundle-chain";
import { getBlob, putBlob, ZBlobRef } from "../events/blobs";
import type { Actor, AppEvent } from "../events/catalog";
import { commandHandler, lockStream, streamVersion } from "../events/command-handler";
import { timeOrderedId } from "../events/ids";
import { ZAgentSnapshot, type AgentSnapshot } from "../events/step-contract";
import type { NewEvent, RecordedEvent } from "../events/types";
import { recordableOutput } from "../process/env";
import { checkedAgentAccess } from "../runner/agent-access";
import type { ClaimedStep } from "../runner/dispatch";
import { StepExecutionError, type StepContext } from "../runner/executors";
import type { FinalOutcome, ReactionFailure, StepReaction } from "../runner/step-kinds";
import { foldTask } from "../task-engine";
import { parseStrictJson } from "../workflow/outputs";
import { diffCommits, ensureCommit } from "../workspaces";
import { bakeOffRecord, ownOutcome, type BakeOffDeps } from "./record";

export const JUDGE_STEP = "bake_off_judge";
/** Tries of the judge for one request: an invalid reply is asked again with its errors, then recorded as failed. */
export const JUDGE_TRIES = 2;
const JUDGE_TIMEOUT_MS = 300_000;
/** Each contender's diff is shown up to this many characters (the rest is named as cut). */
export const MAX_JUDGE_DIFF = 12_000;

export const ZJudgeInput = z.object({
  sessionId: z.string().min(1).max(100),
  /** An agent of the session (by id, or a role such as reviewer) or of the project record; default: the session's reviewer. */
  judge: z.string().trim().min(1).max(100).optional(),
});

export const ZJudgeStepInput = z.object({
  agentId: z.string().min(1),
  agent: ZAgentSnapshot,
  prompt: z.string().min(1),
  contenderIds: z.array(z.string()).min(2),
  attempt: z.number().int().positive(),
});
export type JudgeStepInput = z.infer<typeof ZJudgeStepInput>;

export const ZJudgeStepOutput = z.object({
  kind: z.literal("bake_off_judgment"),
  agentId: z.string(),
  raw: ZBlobRef,
  simulated: z.boolean(),
  usage: ZAgentUsage.optional(),
});
export type JudgeStepOutput = z.infer<typeof ZJudgeStepOutput>;

type Recorded<T extends AppEvent["type"]> = RecordedEvent & Extract<AppEvent, { type: T }>;
const ofType = <T extends AppEvent["type"]>(events: readonly RecordedEvent[], type: T) =>
  events.filter((e): e is Recorded<T> => e.type === type);

/** The judge's reply checked against the bake-off: its schema, then its ids (known, each once, the winner first). */
export function parseRecommendation(
  text: string,
  contenderIds: readonly string[],
): { ok: true; value: JudgeRecommendation } | { ok: false; errors: string[] } {
  const parsed = parseStrictJson(text, ZJudgeRecommendation);
  if (!parsed.ok) return parsed;
  const { winner, ranking } = parsed.value;
  const errors: string[] = [];
  for (const id of new Set([winner, ...ranking])) {
    if (!contenderIds.includes(id)) errors.push(`unknown contender ${id} (contenders: ${contenderIds.join(", ")})`);
  }
  const twice = ranking.filter((id, i) => ranking.indexOf(id) !== i);
  if (twice.length) errors.push(`ranking: ${[...new Set(twice)].join(", ")} ranked more than once`);
  if (ranking[0] !== winner) errors.push(`ranking: the winner ${winner} must be ranked first`);
  return errors.length ? { ok: false, errors } : parsed;
}

/** What the judge is told of one contender: its outcome, rounds, latest verdict, test results and diff. */
async function contenderBrief(deps: BakeOffDeps, c: { id: string; label: string; sessionId: string }): Promise<string> {
  const events = await deps.store.readStream(c.sessionId);
  const state = foldTask(events);
  if (state.status === "none") return `## Contender ${c.id}: ${c.label}\n(no task)`;
  const lines = [`## Contender ${c.id}: ${c.label}`, `Outcome: ${ownOutcome(events) ?? "still running"}; iterations: ${state.iteration}`];
  const verdicts = ofType(events.slice(events.findIndex((e) => e.type === "BakeOffContender")), "ReviewVerdictRecorded");
  lines.push(`Review verdicts: ${verdicts.map((v) => v.data.decision).join(", ") || "none"}`);
  const lastVerdict = verdicts.at(-1)?.data;
  if (lastVerdict) {
    lines.push(`Latest verdict: ${lastVerdict.decision}: ${lastVerdict.summary}`);
    for (const f of lastVerdict.findings) lines.push(`- [${f.severity}] ${f.file}${f.line ? `:${f.line}` : ""}: ${f.message}`);
  }
  const tests = ofType(events, "TestCommandRecorded").slice(-10);
  lines.push(
    `Tests: ${tests.length ? tests.map((t) => `${t.data.argv.join(" ")} ${t.data.passed ? "passed" : `failed (exit ${t.data.exitCode})`}`).join("; ") : "none ran"}`,
  );
  const { repoPath, baseCommit } = state.config.project;
  if (state.head === baseCommit) {
    lines.push("Diff: (no change)");
  } else {
    try {
      await ensureCommit(repoPath, state.head, sessionBundles(deps.pool, c.sessionId));
      const { diff, files } = await diffCommits(repoPath, baseCommit, state.head, [".forge"]);
      lines.push(`Files: ${files.map((f) => `${f.path} (+${f.added} -${f.removed})`).join(", ")}`);
      lines.push(
        "```diff",
        diff.slice(0, MAX_JUDGE_DIFF),
        diff.length > MAX_JUDGE_DIFF ? `(cut: ${diff.length - MAX_JUDGE_DIFF} more characters)` : "",
        "```",
      );
    } catch (err) {
      lines.push(`Diff: (not available here: ${(err as Error).message})`);
    }
  }
  return lines.join("\n");
}

const INSTRUCTION =
  'You judge a bake-off: several coders built the same confirmed task; each went through the same review and tests. Compare them and recommend one. Reply with JSON only: {"winner": "<contender id>", "ranking": ["<id, best first>", ...], "reasons": ["...", ...]}. Use only the contender ids below; rank each at most once, the winner first.';

/** The judge agent: the one named (an agent of the session by id or role, or of the project record), else the session's reviewer. */
function judgeAgent(agents: Record<string, AgentSnapshot | undefined>, name: string | undefined): { id: string; agent: AgentSnapshot } {
  const entries = Object.entries(agents).filter((e): e is [string, AgentSnapshot] => e[1] !== undefined);
  const wanted = name ?? "reviewer";
  const found = entries.find(([role, a]) => a.id === wanted || role === wanted);
  if (!found) {
    const known = entries.map(([role, a]) => a.id ?? role).sort();
    throw new AppError("INVALID_INPUT", `no agent ${wanted} to judge with (this bake-off's agents: ${known.join(", ")})`, {
      fieldErrors: { judge: [`unknown agent ${wanted}`] },
    });
  }
  return { id: found[1].id ?? found[0], agent: found[1] };
}

/**
 * `bakeOffs.judge`: schedules the judge's step on the parent once every contender has ended;
 * refused while a judge's step of it runs.
 */
export async function judgeBakeOff(
  deps: BakeOffDeps,
  raw: z.input<typeof ZJudgeInput>,
  actor: Actor,
): Promise<{ sessionId: string; stepId: string; agentId: string }> {
  const input = ZJudgeInput.parse(raw);
  const before = await deps.store.readStream(input.sessionId);
  if (!before.length) throw new AppError("NOT_FOUND", `no session ${input.sessionId}`);
  const record = bakeOffRecord(input.sessionId, before);
  if (!record.forked)
    throw new AppError("PRECONDITION_FAILED", `the bake-off ${input.sessionId} has not started: confirm its proposal first`);
  const contenders = record.contenders.filter((c): c is typeof c & { sessionId: string } => c.sessionId !== null);
  const running = [];
  for (const c of contenders) if (foldTask(await deps.store.readStream(c.sessionId)).status !== "finished") running.push(c.id);
  if (running.length)
    throw new AppError("PRECONDITION_FAILED", `the judge compares ended contenders: ${running.join(", ")} still run`, { running });
  const recorded = record.task.config.agents as Record<string, AgentSnapshot | undefined>;
  const { id: agentId, agent } = judgeAgent(recorded, input.judge);
  const briefs = [];
  for (const c of contenders) briefs.push(await contenderBrief(deps, c));
  const prompt = [INSTRUCTION, `# Task\n${record.task.config.prompt}`, ...briefs].join("\n\n");
  const stepId = timeOrderedId();
  const step: JudgeStepInput = { agentId, agent, prompt, contenderIds: contenders.map((c) => c.id), attempt: 1 };
  await withTransaction(deps.pool, async (tx) => {
    await lockStream(tx, input.sessionId);
    await commandHandler(streamVersion).handle(
      deps.store,
      input.sessionId,
      async (_state, at) => {
        const now = await deps.store.readStream(input.sessionId, { db: at.db });
        const judge = bakeOffRecord(input.sessionId, now).judge;
        const pending = judge.requests.at(-1);
        const settled = (id: string) =>
          now.some((e) => (e.type === "BakeOffJudged" || e.type === "BakeOffJudgeFailed") && (e.data as { stepId: string }).stepId === id);
        if (pending && !settled(pending.stepId))
          throw new AppError("CONFLICT", `the judge ${pending.agentId} is at work (asked at ${pending.at}): wait for its advice`);
        return judgeRequest(step, stepId);
      },
      { actor },
      { tx },
    );
  });
  return { sessionId: input.sessionId, stepId, agentId };
}

/** The request and its step, to append together. */
function judgeRequest(input: JudgeStepInput, stepId: string): NewEvent[] {
  return [
    { type: "BakeOffJudgeRequested", data: { stepId, agentId: input.agentId, attempt: input.attempt } },
    { type: "StepScheduled", data: { stepId, kind: JUDGE_STEP, input, timeoutMs: JUDGE_TIMEOUT_MS, maxAttempts: 2, backoffMs: [1_000] } },
  ];
}

export interface JudgeExecutorDeps {
  pool: Db;
  workspacesRoot: string;
}

/** Runs the judge: the agent with the prompt, in an empty directory of its own (it reads the prompt, not files). */
export function judgeExecutor(deps: JudgeExecutorDeps) {
  return async (step: ClaimedStep, input: JudgeStepInput, ctx: StepContext): Promise<JudgeStepOutput> => {
    const config = ZAgentConfig.safeParse(input.agent);
    if (!config.success) throw new StepExecutionError("internal_error", `the judge ${input.agentId} has no valid configuration`, false);
    const access = await checkedAgentAccess(deps.pool, step.sessionId, config.data);
    const agent = createAgent(config.data);
    const workspace = path.join(deps.workspacesRoot, `${step.sessionId}-judge`);
    fs.mkdirSync(workspace, { recursive: true });
    try {
      const response = await invokeAgent(agent, config.data, {
        role: "reviewer",
        prompt: input.prompt,
        context: [],
        workspace,
        invocation: input.attempt - 1 + step.attempt - 1,
        output: JUDGE_STEP,
        signal: ctx.signal,
        deadline: Date.now() + step.timeoutMs,
        callGate: databaseCallGate(deps.pool),
        egress: { hosts: access.hosts },
        privateHosts: access.privateHosts,
      });
      const { text } = recordableOutput(response.text);
      const usage = usageOf(response, config.data);
      return {
        kind: "bake_off_judgment",
        agentId: agent.id,
        raw: await putBlob(deps.pool, text),
        simulated: agent.simulated,
        ...(usage ? { usage } : {}),
      };
    } catch (err) {
      if (err instanceof AgentError) throw new StepExecutionError(err.errorClass, err.message, err.retryable, err.retryAfterMs);
      throw err;
    }
  };
}

/** Appends on the parent in the outcome's transaction (which holds its lock), caused by the outcome. */
async function recordOnParent(
  tx: Tx,
  reaction: Pick<StepReaction<unknown, unknown>, "store" | "sessionId" | "outcome">,
  events: NewEvent[],
) {
  const { outcome } = reaction;
  const metadata = {
    actor: { kind: "system", id: "bake-off-judge" } as const,
    correlationId: outcome.metadata.correlationId,
    causationId: outcome.eventId,
  };
  await commandHandler(streamVersion).handle(reaction.store, reaction.sessionId, () => events, metadata, { tx });
}

/** The judge's reply: the advice, or schema_invalid (asked again with the errors while tries are left). */
export async function reactToJudge(tx: Tx, reaction: StepReaction<JudgeStepInput, JudgeStepOutput>): Promise<void> {
  const { step, outcome } = reaction;
  const input = step.input;
  const result = await judgeResult(tx, outcome, input);
  if (result.ok) {
    await recordOnParent(tx, reaction, [
      { type: "BakeOffJudged", data: { stepId: step.id, recommendation: result.value, agent: input.agentId } },
    ]);
    return;
  }
  const retried = result.errorClass === "schema_invalid" && input.attempt < JUDGE_TRIES;
  const failed: NewEvent = {
    type: "BakeOffJudgeFailed",
    data: { stepId: step.id, errorClass: result.errorClass, message: result.message, retried },
  };
  if (!retried) return recordOnParent(tx, reaction, [failed]);
  const again: JudgeStepInput = {
    ...input,
    attempt: input.attempt + 1,
    prompt: `${input.prompt}\n\nYour previous reply was rejected: ${result.message}. Reply with the JSON only.`,
  };
  await recordOnParent(tx, reaction, [failed, ...judgeRequest(again, timeOrderedId())]);
}

async function judgeResult(
  tx: Tx,
  outcome: FinalOutcome<JudgeStepOutput>,
  input: JudgeStepInput,
): Promise<
  | { ok: true; value: JudgeRecommendation }
  | { ok: false; errorClass: "schema_invalid" | Recorded<"StepFailed">["data"]["errorClass"]; message: string }
> {
  if (outcome.type === "StepFailed") return { ok: false, errorClass: outcome.data.errorClass, message: outcome.data.message };
  const text = (await getBlob(tx, outcome.data.output.raw.blob)).content.toString("utf8");
  const parsed = parseRecommendation(text, input.contenderIds);
  return parsed.ok ? parsed : { ok: false, errorClass: "schema_invalid", message: parsed.errors.join("; ").slice(0, 1000) };
}

/** When reacting failed (a defect): the judge is recorded as failed, so nobody waits for its advice. */
export async function reactToJudgeFailure(tx: Tx, reaction: ReactionFailure<JudgeStepInput>, message: string): Promise<void> {
  await recordOnParent(tx, reaction, [
    { type: "BakeOffJudgeFailed", data: { stepId: reaction.step.id, errorClass: "internal_error", message, retried: false } },
  ]);
}
