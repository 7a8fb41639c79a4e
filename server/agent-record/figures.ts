// One session's figures (docs/bake-off.md, "The agent record: how it is computed"): how it
// ended, the iterations it took to approval, each review round's blocking findings and test
// results, the files and lines it changed, its wall time, tokens and cost, and the coder that
// did the work. `foldFigures` is a pure fold over the session's events (its lineage, the
// inherited events included: the task's rounds are those the engine's fold sees); the calls,
// the tokens and the wall clock are the session's own, as a fork's budget is (docs/forks.md).
// `loadSessionFigures` reads the events and adds the one figure the events do not hold: the
// lines added and removed, from git between the task's base commit and the session's head.
import type { PricingSettings } from "../config/schemas";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import { ZAgentStepOutput } from "../events/step-contract";
import { sessionBundles } from "../events/bundle-chain";
import { READ_STREAM_SQL, type EventRow, type EventStore } from "../events/store";
import { MAX_VERSION } from "../events/versions";
import type { RecordedEvent } from "../events/types";
import { FORGE_DIR } from "../forge/artifacts";
import { evolve, type TaskState } from "../task-engine";
import { modelCost, roundCost, type UsageFigures } from "../usage/totals";
import { diffCommits, ensureCommit } from "../workspaces";
import { NOT_CHOSEN } from "../../lib/outcomes";
import type { BakeOffContenderEntry } from "./bake-off-events";

export interface TestCounts {
  passed: number;
  failed: number;
}

/** One review round: an iteration of the loop with its verdict and its test run. */
export interface RoundFigures {
  iteration: number;
  decision: "approve" | "changes_requested" | null;
  blockingFindings: number;
  findings: number;
  tests: TestCounts | null;
}

export interface SessionFigures {
  sessionId: string;
  projectId: string | null;
  /** The task's status: none (no task yet), active, finished. */
  status: "none" | "active" | "finished";
  state: string;
  /** Its final outcome: for a contender another was chosen over, `not_chosen`. */
  outcome: string | null;
  /**
   * How it ended on its own (approved, max_iterations_reached, …): its first own outcome other than
   * `not_chosen`; null while it runs, and for a contender stopped by a pick before it ended.
   */
  ownOutcome: string | null;
  /** The session's own stream recorded an approval (a contender not chosen afterwards stays approved here). */
  approved: boolean;
  /** The iterations the approved round was reached in; null when not approved. */
  iterationsToApproval: number | null;
  iteration: number;
  rounds: RoundFigures[];
  /** The latest test run (the last commands step's commands). */
  tests: TestCounts | null;
  baseCommit: string | null;
  head: string | null;
  /** Every file a build of this session committed (from WorkspaceCommitted). */
  filesTouched: string[];
  /** Lines and files between the base commit and the head (git; null until loaded, or when git cannot tell). */
  diff: { added: number; removed: number; files: number } | null;
  diffError: string | null;
  wall: { startedAt: string | null; endedAt: string | null; ms: number | null; running: boolean };
  /** The session's own calls, as its agents reported them, priced with the table (server/usage/totals.ts). */
  usage: UsageFigures & { currency: string };
  coder: { agentId: string | null; model: string | null };
}

export interface FoldFiguresOptions {
  sessionId: string;
  pricing: PricingSettings;
  /** Now, for the wall time of a session still running. */
  nowMs: number;
  /** The session's entry in its bake-off, when it is a contender: its coder and model are the ones named there. */
  contender?: Pick<BakeOffContenderEntry, "coder" | "model"> | null;
}

function data<T>(event: RecordedEvent): T {
  return event.data as T;
}

/** The figures of one session from its events (lineage order; `streamId` tells its own from inherited ones). */
export function foldFigures(events: readonly RecordedEvent[], options: FoldFiguresOptions): SessionFigures {
  const { sessionId, pricing } = options;
  let task: TaskState = { status: "none", version: 0, fsm: "", step: null };
  const rounds = new Map<number, RoundFigures>();
  const roundOf = (iteration: number) => {
    let round = rounds.get(iteration);
    if (!round) rounds.set(iteration, (round = { iteration, decision: null, blockingFindings: 0, findings: 0, tests: null }));
    return round;
  };
  const testsByStep = new Map<string, TestCounts>();
  let lastTestStep: string | null = null;
  const files = new Set<string>();
  let approvedAt: number | null = null;
  let startedAt: string | null = null;
  let endedAt: string | null = null;
  let ownOutcome: string | null = null;
  let observedCoder = null as { agentId: string; model: string | null } | null;
  const byModel = new Map<string | null, { calls: number; input: number; output: number; cached: number; written: number }>();

  for (const event of events) {
    const own = event.streamId === sessionId;
    const iteration = task.status === "none" ? 1 : task.iteration;
    switch (event.type) {
      case "ChangeRequested":
        // A modify starts its loop again from iteration 1 (docs/forks.md): earlier rounds are the base's.
        rounds.clear();
        break;
      case "ReviewVerdictRecorded": {
        const d = data<{ decision: "approve" | "changes_requested"; findings: Array<{ severity: string }> }>(event);
        const round = roundOf(iteration);
        round.decision = d.decision;
        round.findings = d.findings.length;
        round.blockingFindings = d.findings.filter((f) => f.severity === "blocking").length;
        break;
      }
      case "TestCommandRecorded": {
        const d = data<{ stepId: string; passed: boolean }>(event);
        const counts = testsByStep.get(d.stepId) ?? { passed: 0, failed: 0 };
        if (d.passed) counts.passed++;
        else counts.failed++;
        testsByStep.set(d.stepId, counts);
        lastTestStep = d.stepId;
        roundOf(iteration).tests = counts;
        break;
      }
      case "WorkspaceCommitted":
        for (const f of data<{ changedFiles: Array<{ path: string }> }>(event).changedFiles) files.add(f.path);
        break;
      case "StepStarted":
        if (own && startedAt === null) startedAt = event.recordedAt;
        break;
      case "StepCompleted": {
        if (!own) break;
        const call = ZAgentStepOutput.pick({ agentId: true, usage: true }).safeParse(data<{ output: unknown }>(event).output);
        if (!call.success) break;
        const model = call.data.usage?.model ?? null;
        const sum = byModel.get(model) ?? { calls: 0, input: 0, output: 0, cached: 0, written: 0 };
        sum.calls++;
        sum.input += Math.round(call.data.usage?.inputTokens ?? 0);
        sum.output += Math.round(call.data.usage?.outputTokens ?? 0);
        sum.cached += Math.round(call.data.usage?.cachedInputTokens ?? 0);
        sum.written += Math.round(call.data.usage?.cacheCreationInputTokens ?? 0);
        byModel.set(model, sum);
        break;
      }
      case "AgentOutputRecorded": {
        const d = data<{ role: string; agentId: string; usage?: { model?: string } }>(event);
        if (own && d.role === "coder") observedCoder = { agentId: d.agentId, model: d.usage?.model ?? observedCoder?.model ?? null };
        break;
      }
      case "SessionFinalized": {
        if (!own) break;
        const d = data<{ outcome: string; iterations: number }>(event);
        endedAt ??= event.recordedAt;
        if (d.outcome !== NOT_CHOSEN) ownOutcome ??= d.outcome;
        if (d.outcome === "approved" && approvedAt === null) approvedAt = d.iterations;
        break;
      }
    }
    task = evolve(task, event);
  }

  const usage = [...byModel].reduce(
    (acc, [model, s]) => {
      const tokens = { inputTokens: s.input, outputTokens: s.output, cachedInputTokens: s.cached, cacheCreationInputTokens: s.written };
      const priced = modelCost(model, tokens, pricing);
      return {
        ...acc,
        calls: acc.calls + s.calls,
        inputTokens: acc.inputTokens + s.input,
        outputTokens: acc.outputTokens + s.output,
        cachedInputTokens: acc.cachedInputTokens + s.cached,
        cacheCreationInputTokens: acc.cacheCreationInputTokens + s.written,
        cost: roundCost(acc.cost + priced.cost),
        unpriced: [...new Set([...acc.unpriced, ...priced.unpriced])].sort(),
      };
    },
    {
      currency: pricing.currency,
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheCreationInputTokens: 0,
      cost: 0,
      unpriced: [] as string[],
    },
  );
  const started = task.status === "none" ? null : task;
  const snapshot = started?.config.agents.coder as { id?: string; model?: string } | undefined;
  const coder = options.contender
    ? { agentId: options.contender.coder, model: options.contender.model ?? observedCoder?.model ?? null }
    : observedCoder
      ? observedCoder
      : { agentId: snapshot?.id ?? null, model: snapshot?.model ?? null };
  const running = endedAt === null && startedAt !== null && task.status !== "finished";
  const endMs = endedAt ? Date.parse(endedAt) : running ? options.nowMs : null;
  return {
    sessionId,
    projectId: started?.config.project.id ?? null,
    status: task.status,
    state: task.fsm,
    outcome: task.status === "finished" ? task.outcome : null,
    ownOutcome,
    approved: approvedAt !== null,
    iterationsToApproval: approvedAt,
    iteration: started?.iteration ?? 0,
    rounds: [...rounds.values()].sort((a, b) => a.iteration - b.iteration),
    tests: lastTestStep ? testsByStep.get(lastTestStep)! : null,
    baseCommit: started?.config.project.baseCommit ?? null,
    head: started?.head ?? null,
    filesTouched: [...files].sort(),
    diff: null,
    diffError: null,
    wall: {
      startedAt,
      endedAt,
      ms: startedAt && endMs !== null ? Math.max(0, endMs - Date.parse(startedAt)) : null,
      running,
    },
    usage,
    coder,
  };
}

export interface FiguresDeps {
  pool: Queryable;
  store: Pick<EventStore, "registry" | "toRecorded">;
}

/** A session's events through its lineage, decoded (a type the catalog does not declare is left out). */
export async function readSessionEvents(deps: FiguresDeps, sessionId: string): Promise<RecordedEvent[]> {
  const { rows } = await deps.pool.query<EventRow>(READ_STREAM_SQL, [sessionId, 1, MAX_VERSION]);
  const known = deps.store.registry.catalog;
  return rows.filter((row) => row.type in known).map((row) => deps.store.toRecorded(row));
}

/** Lines added and removed between the base commit and the head, in the project's repository (the head fetched from the session's bundles when missing). */
async function diffFigures(
  deps: FiguresDeps,
  figures: SessionFigures,
  repoPath: string,
): Promise<Pick<SessionFigures, "diff" | "diffError">> {
  const { baseCommit, head } = figures;
  if (!baseCommit || !head) return { diff: null, diffError: null };
  if (baseCommit === head) return { diff: { added: 0, removed: 0, files: 0 }, diffError: null };
  try {
    await ensureCommit(repoPath, head, sessionBundles(deps.pool, figures.sessionId));
    const { files } = await diffCommits(repoPath, baseCommit, head, [FORGE_DIR]);
    return {
      diff: { added: files.reduce((n, f) => n + f.added, 0), removed: files.reduce((n, f) => n + f.removed, 0), files: files.length },
      diffError: null,
    };
  } catch (err) {
    return { diff: null, diffError: `git cannot tell: ${(err as Error).message}` };
  }
}

export interface LoadFiguresOptions extends Omit<FoldFiguresOptions, "sessionId" | "nowMs"> {
  nowMs?: number;
  /** Read the lines changed from git (the comparison page does; the agent record needs none). */
  withDiff?: boolean;
}

export async function loadSessionFigures(deps: FiguresDeps, sessionId: string, options: LoadFiguresOptions): Promise<SessionFigures> {
  const events = await readSessionEvents(deps, sessionId);
  if (!events.length) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  const figures = foldFigures(events, { ...options, sessionId, nowMs: options.nowMs ?? Date.now() });
  if (!options.withDiff) return figures;
  const started = events.find((e) => e.type === "TaskStarted");
  const repoPath = (started?.data as { project?: { repoPath?: string } } | undefined)?.project?.repoPath;
  return repoPath ? { ...figures, ...(await diffFigures(deps, figures, repoPath)) } : figures;
}
