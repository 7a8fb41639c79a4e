// A seeded history for the agent record and the comparison page: review-loop sessions written
// to the store as the engine and the runner record them (test/helpers/decider.ts's
// SessionHistory), each agent call reporting known tokens, at known times (events and the
// session's row moved to them), and bake-offs — a proposal session forked at its confirm
// into contenders — with the bake-off's own events appended by SQL, as the bake-off
// commands record them (BakeOffForked / Judged / WinnerChosen on the parent, BakeOffContender
// on each contender; docs/bake-off.md).
import crypto from "node:crypto";
import type { Db } from "../../server/db/pool";
import type { ReviewVerdict, TestPlan } from "../../server/events/agent-outputs";
import type { AppEvent } from "../../server/events/catalog";
import { EVENTS_CHANNEL, type EventStore } from "../../server/events/store";
import type { AgentStepOutput } from "../../server/events/step-contract";
import { BUILTIN_WORKFLOWS } from "../../server/task-engine";
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

/** An event the store's catalog does not declare (yet), appended as the store would: next version, and the doorbell rung. */
export async function appendRaw(
  pool: Db,
  streamId: string,
  type: string,
  data: unknown,
  actor: { kind: string; id: string } = ACTOR,
): Promise<void> {
  await pool.query(
    `WITH bump AS (UPDATE streams SET version = version + 1, updated_at = now() WHERE id = $1 RETURNING version)
     INSERT INTO events (event_id, stream_id, version, type, summary, data, metadata)
     SELECT $2::uuid, $1, bump.version, $3, $3, $4::jsonb, $5::jsonb FROM bump`,
    [
      streamId,
      crypto.randomUUID(),
      type,
      JSON.stringify(data),
      JSON.stringify({ actor, correlationId: crypto.randomUUID(), causationId: null, schemaVersion: 1 }),
    ],
  );
  await pool.query(`SELECT pg_notify('${EVENTS_CHANNEL}', $1)`, [streamId]);
}

export interface SeedContender extends Omit<SeedSession, "projectId"> {
  id: string;
  label?: string;
}

export interface SeededBakeOff {
  parentId: string;
  contenders: Array<{ id: string; sessionId: string }>;
}

/**
 * A proposal session to its confirm, forked there into one contender per entry (each then
 * runs its rounds), with BakeOffForked on the parent and BakeOffContender on each contender;
 * `chosen`: BakeOffWinnerChosen for that contender, and `not_chosen` ends for the others.
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
  const proposal = (c: SeedContender) =>
    new SessionHistory(reviewLoop)
      .created(config({ projectId, coder: c.coder, maxIterations: c.maxIterations }, "proposal"))
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
    const sessionId = newSessionId();
    const spec = { ...c, projectId };
    const h = proposal(c);
    const prefixLength = h.events.length;
    h.add({ type: "OperatorConfirmed", data: { via: "button" } }).enter("building", { reason: "operator confirmed" });
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
            reason: "modify",
            title: `Bake-off ${c.id}`,
            workflow: "review_loop",
            state: "awaiting_operator_confirm",
          },
        },
        ...own,
      ],
      metadata: { actor: ACTOR },
    });
    await appendRaw(pool, sessionId, "BakeOffContender", { parentSessionId: parentId, contenderId: c.id });
    await retime(pool, sessionId, spec);
    made.push({ id: c.id, sessionId });
  }
  await appendRaw(pool, parentId, "BakeOffForked", {
    contenders: contenders.map((c, i) => ({
      id: c.id,
      sessionId: made[i]!.sessionId,
      coder: c.coder.id,
      model: c.coder.model,
      label: c.label ?? c.coder.id,
    })),
  });
  if (options.judged) await appendRaw(pool, parentId, "BakeOffJudged", { recommendation: options.judged, agent: "judge-agent" });
  if (options.chosen) {
    const chosen = made.find((m) => m.id === options.chosen)!;
    await appendRaw(pool, parentId, "BakeOffWinnerChosen", {
      contenderId: chosen.id,
      sessionId: chosen.sessionId,
      reason: "smallest diff",
    });
    for (const other of made.filter((m) => m !== chosen)) {
      await store.append(
        other.sessionId,
        "any",
        [
          {
            type: "SessionFinalized",
            data: {
              outcome: "not_chosen",
              reason: `${chosen.id} was chosen`,
              iterations: 0,
              unresolved: [],
              errorClass: null,
              diagnosis: null,
            },
          },
        ],
        { actor: ACTOR },
      );
    }
  }
  return { parentId, contenders: made };
}
