// A seeded history for the agent record and the comparison page: review-loop sessions written
// to the store as the engine and the runner record them (test/helpers/decider.ts's
// SessionHistory), each agent call reporting known tokens, at known times (events and the
// session's row moved to them), and bake-offs written as the bake-off's commands write them
// (docs/bake-off.md; server/tasks/bake-off-confirm.ts, server/bake-off/): a proposal session
// started with `bakeOff`, whose confirm records OperatorConfirmed + BakeOffForked and moves it
// to `bake_off`; each contender a fork (reason `bake_off`) at the confirm's position whose first
// event is BakeOffContender, then the confirm and its rounds; the judge's request and advice;
// the pick (BakeOffWinnerChosen, the parent ends `winner_chosen`) and for every other contender
// BakeOffNotChosen, its step cancelled when it still ran, and its end `not_chosen`.
import crypto from "node:crypto";
import type { Db } from "../../server/db/pool";
import type { ReviewVerdict, TestPlan } from "../../server/events/agent-outputs";
import type { AppEvent } from "../../server/events/catalog";
import type { EventStore } from "../../server/events/store";
import type { AgentStepOutput } from "../../server/events/step-contract";
import { BUILTIN_WORKFLOWS, foldTask } from "../../server/task-engine";
import { BASE_COMMIT, SessionHistory, buildCommit, commandResult, commandsOutput, type TaskConfig } from "./decider";

const reviewLoop = BUILTIN_WORKFLOWS.review_loop!;
const ACTOR = { kind: "user", id: "seeder" } as const;

/** A review round: the verdict's blocking findings (0: approve, then the tests run), and the tests' results. */
export interface SeedRound {
  blocking: number;
  tests?: boolean[];
}

export interface SeedSession {
  projectId: string;
  coder: { id: string; model: string };
  rounds: SeedRound[];
  /** Stop after the last round's verdict, in `reviewing`/`testing`, without an outcome. */
  running?: boolean;
  /** Each coder call's tokens (every other call: 1000 in / 100 out of `other-model`). */
  coderTokens: { input: number; output: number };
  /** When its first step started, and how long until it ended. */
  startAt: Date;
  wallMs: number;
  maxIterations?: number;
}

export const OTHER_MODEL = "other-model";

function config(s: Pick<SeedSession, "projectId" | "coder" | "maxIterations">, mode: string): TaskConfig {
  return {
    workflow: "review_loop",
    workflowVersion: 1,
    mode,
    prompt: "Fix sum() so the test passes",
    maxIterations: s.maxIterations ?? 5,
    project: { id: s.projectId, name: s.projectId, repoPath: "/nonexistent/repo", baseCommit: BASE_COMMIT, allowlist: [["npm", "test"]] },
    agents: { coder: { id: s.coder.id, model: s.coder.model }, reviewer: { id: "reviewer" }, tester: { id: "tester" } },
  };
}

const plan: TestPlan = { summary: "tests", commands: [{ argv: ["npm", "test"], expect: { exitCode: 0 } }] };

function verdict(blocking: number): ReviewVerdict {
  return {
    decision: blocking ? "changes_requested" : "approve",
    summary: blocking ? "Not yet." : "Good.",
    findings: Array.from({ length: blocking }, (_, i) => ({
      severity: "blocking" as const,
      file: "src/sum.js",
      message: `problem ${i + 1}`,
    })),
  };
}

/** The rounds, from `building` in iteration 1 to the outcome (or mid-way when running). */
function playRounds(h: SessionHistory, s: SeedSession): void {
  s.rounds.forEach((round, i) => {
    const last = i === s.rounds.length - 1;
    h.agentSaid("built", { commit: buildCommit(`${crypto.randomUUID()}`, [{ path: `src/file${i}.js`, status: "modified" }]) });
    h.enter("reviewing");
    const v = verdict(round.blocking);
    const stepId = h.current();
    h.agentSaid(JSON.stringify(v), {
      parsed: v,
      then: [
        {
          type: "ReviewVerdictRecorded",
          data: { stepId, decision: v.decision, modelDecision: v.decision, override: null, summary: v.summary, findings: v.findings },
        },
      ],
    });
    if (last && s.running) return;
    if (round.blocking) {
      if (last) h.enter("max_iterations_reached", { reason: "changes_requested" });
      else h.enter("building", { reason: "changes_requested", iterate: "changes_requested" });
      return;
    }
    h.enter("testing", { reason: "approve" });
    const planStep = h.current();
    h.agentSaid(JSON.stringify(plan), { parsed: plan, then: [{ type: "TestPlanRecorded", data: { stepId: planStep, ...plan } }] });
    h.enter("running_tests", { reason: "plan_valid" });
    const run = h.current();
    const results = round.tests ?? [true];
    const outputs = results.map((pass, k) =>
      commandResult(["npm", "test", String(k)], pass ? {} : { exitCode: 1, errorClass: "command_failed", reason: "exit 1" }),
    );
    h.stepCompleted(commandsOutput(outputs));
    outputs.forEach((r, index) => h.add({ type: "TestCommandRecorded", data: { stepId: run, index, ...r, passed: results[index]! } }));
    if (results.every(Boolean)) h.enter("approved", { reason: "tests_passed" });
    else if (last) h.enter("max_iterations_reached", { reason: "test_failed" });
    else h.enter("building", { reason: "test_failed", iterate: "test_failed" });
  });
}

/** Every agent call reports its tokens; step ids made unique to this session (the steps table is shared). */
function finish(events: AppEvent[], s: SeedSession): AppEvent[] {
  const prefix = crypto.randomBytes(4).toString("hex");
  const unique = JSON.parse(JSON.stringify(events).replaceAll("11111111-0000-4000-8000-", `${prefix}-0000-4000-8000-`)) as AppEvent[];
  const agentCall = (e: AppEvent | undefined): AgentStepOutput | null =>
    e?.type === "StepCompleted" && (e.data.output as { kind?: string } | null)?.kind === "agent"
      ? (e.data.output as AgentStepOutput)
      : null;
  return unique.map((e, i): AppEvent => {
    const next = unique[i + 1];
    const output = agentCall(e);
    if (output && next?.type === "AgentOutputRecorded") {
      const coder = next.data.role === "coder";
      const usage = coder
        ? { inputTokens: s.coderTokens.input, outputTokens: s.coderTokens.output, model: s.coder.model }
        : { inputTokens: 1000, outputTokens: 100, model: OTHER_MODEL };
      const agentId = coder ? s.coder.id : next.data.role;
      (next.data as { agentId: string }).agentId = agentId;
      (next.data as { usage?: unknown }).usage = usage;
      return { ...e, data: { ...e.data, output: { ...output, agentId, usage } } } as AppEvent;
    }
    return e;
  });
}

/** Moves a stream's own events to known times: those before its first step at `startAt` - 1 s, the steps from `startAt` a millisecond apart, the outcome at `startAt + wallMs`. */
async function retime(pool: Db, sessionId: string, s: SeedSession): Promise<void> {
  const { rows } = await pool.query<{ version: number; type: string }>(
    "SELECT version, type FROM events WHERE stream_id = $1 ORDER BY version",
    [sessionId],
  );
  const firstStep = rows.find((r) => r.type === "StepStarted")?.version ?? Infinity;
  const start = s.startAt.getTime();
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // The log is append-only (a trigger refuses updates): only a seeded history is moved in time, as a restore would write it.
    await client.query("SET LOCAL session_replication_role = replica");
    for (const r of rows) {
      const at =
        r.version < firstStep
          ? start - 1000
          : r.type === "SessionFinalized"
            ? start + s.wallMs
            : start + Math.min(r.version - firstStep, s.wallMs - 1);
      await client.query("UPDATE events SET recorded_at = $3 WHERE stream_id = $1 AND version = $2", [sessionId, r.version, new Date(at)]);
    }
    await client.query("UPDATE sessions SET created_at = $2 WHERE id = $1", [sessionId, new Date(start - 1000)]);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK");
    throw err;
  } finally {
    client.release();
  }
}

export function newSessionId(): string {
  return `s-${crypto.randomBytes(8).toString("hex")}`;
}

/** One implementation-mode task, from its start to its outcome (or running). */
export async function seedSession(store: EventStore, pool: Db, s: SeedSession): Promise<string> {
  const sessionId = newSessionId();
  const h = new SessionHistory(reviewLoop).created(config(s, "implementation")).enter("building", { reason: "start" });
  playRounds(h, s);
  await store.append(sessionId, "no_stream", finish(h.events, s), { actor: ACTOR });
  await retime(pool, sessionId, s);
  return sessionId;
}

export interface SeedContender extends Omit<SeedSession, "projectId"> {
  id: string;
  label?: string;
}

export interface SeededBakeOff {
  parentId: string;
  contenders: Array<{ id: string; sessionId: string }>;
}

const label = (c: SeedContender) => c.label ?? c.coder.id;

/** The judge's request and advice on the parent, as the judge's step records them. */
export async function seedJudged(
  store: EventStore,
  parentId: string,
  recommendation: { winner: string; ranking: string[]; reasons: string[] },
  agent = "judge-agent",
): Promise<void> {
  const stepId = crypto.randomUUID();
  await store.append(
    parentId,
    "any",
    [
      { type: "BakeOffJudgeRequested", data: { stepId, agentId: agent, attempt: 1 } },
      { type: "BakeOffJudged", data: { stepId, recommendation, agent } },
    ],
    { actor: { kind: "runner", id: "r-seed" } },
  );
}

/**
 * The pick as server/bake-off/pick.ts records it (the delivery left out: a seeded history has
 * no repository): BakeOffWinnerChosen and `winner_chosen` on the parent; for every other
 * contender BakeOffNotChosen (with its own outcome, null if it still ran), its running step
 * cancelled, and `not_chosen`.
 */
export async function seedChosen(
  store: EventStore,
  bakeOff: SeededBakeOff,
  contenderId: string,
  reason: string | null,
  actor: { kind: "user"; id: string } = ACTOR,
): Promise<void> {
  const chosen = bakeOff.contenders.find((c) => c.id === contenderId)!;
  const parent = foldTask(await store.readStream(bakeOff.parentId));
  if (parent.status === "none") throw new Error(`${bakeOff.parentId} is no task`);
  const ending = (from: string, outcome: string, why: string, iterations: number): AppEvent[] => [
    { type: "SessionStateChanged", data: { from, to: outcome, reason: why } },
    { type: "SessionFinalized", data: { outcome, reason: why, iterations, unresolved: [], errorClass: null, diagnosis: null } },
  ];
  await store.append(
    bakeOff.parentId,
    parent.version,
    [
      { type: "BakeOffWinnerChosen", data: { contenderId, sessionId: chosen.sessionId, reason } },
      ...ending(parent.fsm, "winner_chosen", `${contenderId} (${chosen.sessionId}) chosen`, parent.iteration),
    ],
    { actor },
  );
  for (const other of bakeOff.contenders.filter((c) => c !== chosen)) {
    const state = foldTask(await store.readStream(other.sessionId));
    if (state.status === "none") continue;
    await store.append(
      other.sessionId,
      state.version,
      [
        {
          type: "BakeOffNotChosen",
          data: {
            parentSessionId: bakeOff.parentId,
            contenderId: other.id,
            winner: contenderId,
            endedAs: state.status === "finished" ? state.outcome : null,
          },
        },
        ...(state.status === "active" && state.step ? [{ type: "StepCancelled" as const, data: { stepId: state.step.id } }] : []),
        ...ending(state.fsm, "not_chosen", `not chosen: ${contenderId} won the bake-off ${bakeOff.parentId}`, state.iteration),
      ],
      { actor },
    );
  }
}

/**
 * A bake-off: a proposal session started with `bakeOff` to its confirm, which forks one
 * contender per entry (each then runs its rounds) and moves the parent to `bake_off`;
 * `judged`: the judge's advice; `chosen`: the pick of that contender.
 */
export async function seedBakeOff(
  store: EventStore,
  pool: Db,
  projectId: string,
  contenders: SeedContender[],
  options: { chosen?: string; judged?: { winner: string; ranking: string[]; reasons: string[] }; startAt: Date },
): Promise<SeededBakeOff> {
  const parentId = newSessionId();
  const first = contenders[0]!;
  const agentOf = (c: SeedContender) => ({ id: c.coder.id, kind: "command", model: c.coder.model });
  const bakeOffConfig = {
    contenders: contenders.map((c) => ({ id: c.id, coder: c.coder.id, model: c.coder.model, label: label(c), agent: agentOf(c) })),
  };
  const proposal = (c: SeedContender) =>
    new SessionHistory(reviewLoop)
      .created({ ...config({ projectId, coder: c.coder, maxIterations: c.maxIterations }, "proposal"), bakeOff: bakeOffConfig })
      .enter("proposal_coder", { reason: "start" })
      .agentSaid("Proposal: make sum add.")
      .enter("proposal_reviewer")
      .agentSaid("Fine.")
      .enter("proposal_tester")
      .agentSaid("Run the tests.")
      .enter("awaiting_operator_confirm");
  const parentSpec = { ...first, projectId, rounds: [], startAt: new Date(options.startAt.getTime() - 60_000), wallMs: 30_000 };
  const parentEvents = finish(proposal(first).events, parentSpec);
  const { version: atVersion } = await store.append(parentId, "no_stream", parentEvents, { actor: ACTOR });
  await retime(pool, parentId, parentSpec);
  const made: SeededBakeOff["contenders"] = [];
  for (const c of contenders) {
    const sessionId = `${parentId}-${c.id}-${crypto.randomBytes(2).toString("hex")}`;
    const spec = { ...c, projectId };
    const h = proposal(c);
    const prefixLength = h.events.length;
    h.add(
      {
        type: "BakeOffContender",
        data: { parentSessionId: parentId, contenderId: c.id, coder: c.coder.id, model: c.coder.model, label: label(c), agent: agentOf(c) },
      },
      { type: "OperatorConfirmed", data: { via: "button" } },
    ).enter("building", { reason: "operator confirmed" });
    playRounds(h, spec);
    const own = finish(h.events, spec).slice(prefixLength);
    await store.fork({
      parentId,
      atVersion,
      childId: sessionId,
      event: [
        {
          type: "SessionForked",
          data: {
            parentId,
            atVersion,
            reason: "bake_off",
            title: `Fix sum() (${c.id}: ${label(c)})`,
            workflow: "review_loop",
            state: "awaiting_operator_confirm",
            note: `contender ${c.id}: ${label(c)}`,
          },
        },
        ...own,
      ],
      metadata: { actor: ACTOR },
    });
    await retime(pool, sessionId, spec);
    made.push({ id: c.id, sessionId });
  }
  await store.append(
    parentId,
    atVersion,
    [
      { type: "OperatorConfirmed", data: { via: "button" } },
      {
        type: "BakeOffForked",
        data: {
          contenders: contenders.map((c, i) => ({
            id: c.id,
            sessionId: made[i]!.sessionId,
            coder: c.coder.id,
            model: c.coder.model,
            label: label(c),
          })),
        },
      },
      {
        type: "SessionStateChanged",
        data: {
          from: "awaiting_operator_confirm",
          to: "bake_off",
          reason: `bake-off: ${contenders.length} contenders build the confirmed proposal`,
        },
      },
    ],
    { actor: ACTOR },
  );
  const seeded = { parentId, contenders: made };
  if (options.judged) await seedJudged(store, parentId, options.judged);
  if (options.chosen) await seedChosen(store, seeded, options.chosen, "smallest diff");
  return seeded;
}
