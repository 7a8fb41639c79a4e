// summary.json (req W12): who, what and how it ended — outcome, rounds, state events,
// unresolved items, the error class and diagnosis of a failure, timestamps and lineage.
// Every field is read from the events, but the usage: the calls, tokens and cost come from the
// usage projection (server/usage/totals.ts, sessionUsage), the one source every reader of them
// shares, handed in by the caller; the stages' runs and verdicts from stageFigures, as the
// Forge page and the session's summary show them. `runtime` is the session's state document
// (server/sessions/state-document.ts), the object `sessions.state` returns.
import { SUCCESS_OUTCOMES } from "../../lib/outcomes";
import { actorLabel } from "../events/catalog";
import { allVerdicts, stageFigures, startedTask, type TaskState } from "../task-engine";
import type { SessionUsage } from "../usage/totals";
import { sessionStateDocument } from "../sessions/state-document";
import type { PlacedEvent } from "../sessions/rounds";
import type { RoundMeta } from "./rounds";
import type { SessionEvent, SessionEventOf } from "./types";

export const EXPORT_FORMAT_VERSION = 1;

/** Terminal outcomes that are not failures (review loop, planning). */

/** One FSM transition: a line of task-events.jsonl and an entry of summary.stateEvents. */
export interface StateEventLine {
  version: number;
  at: string;
  actor: string;
  from: string;
  to: string;
  reason: string | null;
  round: number;
}

export function stateEventLines(placed: PlacedEvent[]): StateEventLine[] {
  return placed.flatMap(({ event: e, round }) =>
    e.type === "SessionStateChanged"
      ? [
          {
            version: e.version,
            at: e.recordedAt,
            actor: actorLabel(e.metadata.actor),
            from: e.data.from,
            to: e.data.to,
            reason: e.data.reason ?? null,
            round,
          },
        ]
      : [],
  );
}

function lastOf<T extends SessionEvent["type"]>(events: SessionEvent[], type: T): SessionEventOf<T> | undefined {
  return events.findLast((e): e is SessionEventOf<T> => e.type === type);
}

function agentsOf(started: SessionEventOf<"TaskStarted"> | undefined): Record<string, { id: string | null; kind: string | null }> {
  const agents = started?.data.agents ?? {};
  return Object.fromEntries(
    Object.entries(agents).map(([role, config]) => {
      const c = (typeof config === "object" && config !== null ? config : {}) as { id?: unknown; kind?: unknown };
      return [role, { id: typeof c.id === "string" ? c.id : null, kind: typeof c.kind === "string" ? c.kind : null }];
    }),
  );
}

export function buildSummary(sessionId: string, placed: PlacedEvent[], final: TaskState, rounds: RoundMeta[], usage: SessionUsage | null) {
  const events = placed.map((p) => p.event);
  const own = events.filter((e) => e.streamId === sessionId);
  const started = lastOf(events, "TaskStarted");
  const created = events.findLast((e) => e.type === "SessionCreated" || e.type === "SessionForked") as
    SessionEventOf<"SessionCreated"> | SessionEventOf<"SessionForked"> | undefined;
  // Only a finalization that still stands: a fork of a finished session continues past it.
  const finalized = final.status === "finished" ? lastOf(events, "SessionFinalized") : undefined;
  const forks = events.filter((e): e is SessionEventOf<"SessionForked"> => e.type === "SessionForked");
  const ownFork = forks.find((f) => f.streamId === sessionId);
  const failed = finalized !== undefined && !SUCCESS_OUTCOMES.includes(finalized.data.outcome);

  return {
    format: { name: "catcafe-session-export", version: EXPORT_FORMAT_VERSION },
    sessionId,
    title: created?.data.title ?? null,
    workflow: started?.data.workflow ?? created?.data.workflow ?? null,
    workflowVersion: started?.data.workflowVersion ?? null,
    mode: started?.data.mode ?? null,
    prompt: started?.data.prompt ?? null,
    maxIterations: started?.data.maxIterations ?? null,
    project: started ? { id: started.data.project.id, name: started.data.project.name, baseCommit: started.data.project.baseCommit } : null,
    agents: agentsOf(started),
    status: final.status,
    state: final.fsm,
    outcome: finalized?.data.outcome ?? null,
    reason: finalized?.data.reason ?? null,
    iterations: finalized?.data.iterations ?? startedTask(final)?.iteration ?? 0,
    unresolved: finalized?.data.unresolved ?? startedTask(final)?.openIssues ?? [],
    errorClass: finalized?.data.errorClass ?? null,
    diagnosis: finalized?.data.diagnosis ?? null,
    /** Set when the session ended without success: its class and diagnosis (or, lacking one, the reason). */
    error: failed
      ? {
          outcome: finalized.data.outcome,
          errorClass: finalized.data.errorClass,
          diagnosis: finalized.data.diagnosis ?? finalized.data.reason,
        }
      : null,
    rounds: rounds.map((r) => ({
      round: r.round,
      dir: r.dir,
      reason: r.reason,
      firstVersion: r.firstVersion,
      lastVersion: r.lastVersion,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      // Each step's tokens as its agent reported them (cachedInputTokens and cacheCreationInputTokens where it did).
      outputs: r.outputs.map((o) => ({
        role: o.role,
        phase: o.phase,
        file: `${r.dir}/${o.file}`,
        valid: o.validationErrors.length === 0,
        usage: o.usage,
      })),
      verdicts: r.verdicts,
      tests: r.tests,
      changedFiles: [...new Set(r.commits.flatMap((c) => c.changedFiles.map((f) => f.path)))],
      rejections: r.rejections,
    })),
    /** The session's agent calls, tokens and cost (null when the export was rendered without the usage projection). */
    usage: usage ? { currency: usage.currency, ...usage.total } : null,
    /** A staged session (the Forge pipeline): each stage's runs, verdicts and usage, the artifacts by hash, the budget. */
    pipeline: pipelineSummary(final, usage),
    stateEvents: stateEventLines(placed),
    timestamps: {
      createdAt: own[0]?.recordedAt ?? null,
      firstEventAt: events[0]?.recordedAt ?? null,
      finishedAt: finalized?.recordedAt ?? null,
      lastEventAt: events.at(-1)?.recordedAt ?? null,
    },
    lineage: ownFork
      ? {
          parentId: ownFork.data.parentId,
          forkVersion: ownFork.data.atVersion,
          reason: ownFork.data.reason,
          /** Every fork in the history, oldest first (this session's own last). */
          chain: forks.map((f) => ({
            sessionId: f.streamId,
            parentId: f.data.parentId,
            forkVersion: f.data.atVersion,
            reason: f.data.reason,
          })),
        }
      : null,
    events: { count: events.length, lastVersion: events.at(-1)?.version ?? 0, inherited: events.length - own.length },
    /** Where the session is now: the state document `sessions.state` returns (req M10, docs/session-view.md). */
    runtime: sessionStateDocument(sessionId, events, final, usage),
  };
}

export type SessionSummary = ReturnType<typeof buildSummary>;

function pipelineSummary(final: TaskState, usage: SessionUsage | null) {
  const task = startedTask(final);
  if (!task || !task.stages.current) return null;
  const { pipeline } = task;
  const figures = stageFigures(task);
  const byStage = new Map(usage?.byStage.map((s) => [s.stage, s]));
  return {
    stages: figures.map((s) => ({
      name: s.name,
      completed: s.completed,
      /** Every run of the stage (Check run again after a fix loop counts). */
      iterations: s.runs,
      /** The iteration the stage's cap counts. */
      capIteration: s.iteration,
      verdicts: s.verdicts,
      calls: byStage.get(s.name)?.calls ?? 0,
      inputTokens: byStage.get(s.name)?.inputTokens ?? 0,
      outputTokens: byStage.get(s.name)?.outputTokens ?? 0,
      cachedInputTokens: byStage.get(s.name)?.cachedInputTokens ?? 0,
      cacheCreationInputTokens: byStage.get(s.name)?.cacheCreationInputTokens ?? 0,
      cost: byStage.get(s.name)?.cost ?? 0,
    })),
    verdicts: allVerdicts(figures),
    /** What the budget counts: agent calls reserved when scheduled, tokens reported. */
    budgetUsed: { calls: task.usage.calls, tokens: task.usage.tokens },
    budget: task.config.budget ?? null,
    artifacts: Object.entries(pipeline.artifacts).map(([path, a]) => ({
      path,
      file: `forge/${path.replace(/^\.forge\//, "")}`,
      stage: a.stage,
      hash: a.hash,
      by: a.by,
      version: pipeline.versions[path]?.length ?? 1,
    })),
  };
}
