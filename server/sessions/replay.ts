// Replay (req E6): a session as it was at any event position, computed only from its
// events — the stream read up to that version (fork ancestors included; the lean read of
// events/fold-read.ts: version, type and data, trusted as validated when appended) and folded
// with the workflow engine's own `evolve`. Nothing is re-run. Besides the folded state it
// returns what a reader needs at that moment: the round in progress with its outputs,
// verdicts and test results, earlier rounds in brief (rounds as ./rounds.ts splits them,
// the same rounds the export writes), the timeline up to the position and the landmarks
// (state changes, confirm, forks) to jump between.
import { z } from "zod";
import type { Queryable } from "../db/pool";
import { AppError } from "../errors";
import { LINEAGE_CTE } from "../events/lineage";
import { readFoldEvents } from "../events/fold-read";
import type { EventStore } from "../events/store";
import { readTimeline, type TimelineEntry } from "../events/timeline";
import { outcomeOf, startedTask, type StartedTask, type TaskState } from "../task-engine";
import { splitRounds, type FoldSessionEvent } from "./rounds";

export const ZReplayInput = z.object({
  sessionId: z.string().min(1).max(100),
  /** The event position (stream version, inherited events counted); default the latest. */
  version: z.number().int().min(1).optional(),
  /** How many timeline entries up to the position to return (the latest ones). */
  timelineLimit: z.number().int().min(1).max(1000).default(200),
  /** Timeline entries after the position too, for a scrubber that shows what comes next. */
  ahead: z.number().int().min(0).max(200).default(0),
});
export type TReplayInput = z.input<typeof ZReplayInput>;

export type RoundEntry =
  | {
      kind: "output";
      version: number;
      role: string;
      agentId: string;
      phase: string;
      preview: string;
      validationErrors: string[];
      simulated: boolean;
    }
  | {
      kind: "verdict";
      version: number;
      decision: string;
      modelDecision: string;
      override: string | null;
      summary: string;
      findings: Array<{ severity: string; file: string; line?: number; message: string }>;
    }
  | { kind: "test_plan"; version: number; summary: string; commands: string[][] }
  | {
      kind: "test";
      version: number;
      argv: string[];
      status: string;
      passed: boolean;
      exitCode: number | null;
      expectedExitCode: number;
      reason: string | null;
      durationMs: number;
    }
  | { kind: "commit"; version: number; commit: string; empty: boolean; files: string[] }
  | { kind: "message"; version: number; from: "operator" | "system"; text: string }
  | { kind: "confirm"; version: number; via: string }
  | { kind: "step_failed"; version: number; errorClass: string; message: string; retrying: boolean }
  | { kind: "rejected"; version: number; reasons: string[] };

export interface Round {
  iteration: number;
  /** The version of the round's first event. */
  fromVersion: number;
  /** "initial", "rerun", or the reason its IterationStarted gives. */
  reason: string;
  entries: RoundEntry[];
  /** Entries left out at the start of a very long round (the latest ones are kept). */
  omitted: number;
}

export interface RoundSummary {
  iteration: number;
  fromVersion: number;
  reason: string;
  outputs: number;
  verdict: string | null;
  tests: { passed: number; failed: number };
}

export interface ReplayState {
  title: string | null;
  fsm: string;
  status: TaskState["status"];
  outcome: string | null;
  iteration: number;
  maxIterations: number | null;
  workflow: string | null;
  mode: string | null;
  prompt: string | null;
  project: { id: string; name: string } | null;
  step: TaskState["step"];
  openIssues: string[];
  lastVerdict: StartedTask["lastVerdict"];
  testPlan: { summary: string; commands: string[][] } | null;
  head: string | null;
  finalized: { outcome: string; reason: string | null; errorClass: string | null; diagnosis: string | null; unresolved: string[] } | null;
}

export interface ReplayMark {
  version: number;
  type: string;
  /** The state entered (state changes, forks), the outcome (finalized) or the iteration. */
  label: string;
}

export interface ReplayView {
  sessionId: string;
  /** The position shown. */
  version: number;
  /** The latest position. */
  head: number;
  /** Where this session forked from its parent (events up to forkVersion are inherited). */
  fork: { parentId: string; forkVersion: number } | null;
  event: TimelineEntry | null;
  state: ReplayState;
  round: Round | null;
  rounds: RoundSummary[];
  /** Up to `timelineLimit` entries ending at the position. */
  timeline: TimelineEntry[];
  /** Entries after the position (`ahead` of them). */
  upcoming: TimelineEntry[];
  marks: ReplayMark[];
}

const ROUND_ENTRY_LIMIT = 100;

export interface ReplayDeps {
  store: EventStore;
  pool: Queryable;
}

export async function replayAt(deps: ReplayDeps, raw: TReplayInput): Promise<ReplayView> {
  const input = ZReplayInput.parse(raw);
  const stream = await deps.pool.query<{ version: number; parent_id: string | null; fork_version: number | null }>(
    "SELECT version, parent_id, fork_version FROM streams WHERE id = $1",
    [input.sessionId],
  );
  const row = stream.rows[0];
  if (!row) throw new AppError("NOT_FOUND", `no session ${input.sessionId}`);
  const head = row.version;
  const version = Math.min(input.version ?? head, head);
  const [events, timeline, upcoming, marks] = await Promise.all([
    // Only what the fold and the rounds read (version, type, data): see events/fold-read.ts.
    readFoldEvents({ pool: deps.pool, registry: deps.store.registry }, input.sessionId, 1, version),
    // Versions are contiguous (1..head, inherited ones included): the entries up to the position.
    readTimeline(deps.pool, input.sessionId, {
      afterVersion: Math.max(0, version - input.timelineLimit),
      limit: Math.min(input.timelineLimit, version),
    }),
    input.ahead > 0 && version < head
      ? readTimeline(deps.pool, input.sessionId, { afterVersion: version, limit: input.ahead })
      : Promise.resolve([]),
    readMarks(deps.pool, input.sessionId),
  ]);
  const { rounds: slices, placed, final: task } = splitRounds(events);
  const rounds = slices.map((slice): Round => ({
    iteration: slice.round,
    fromVersion: slice.fromVersion,
    reason: slice.reason,
    entries: roundEntries(slice.events),
    omitted: 0,
  }));
  const started = startedTask(task);
  const { finalized, title } = describeSession(events as FoldSessionEvent[]);
  // The round in progress at the position: the one its last event belongs to.
  const current = rounds.find((r) => r.iteration === placed.at(-1)?.round) ?? null;
  return {
    sessionId: input.sessionId,
    version,
    head,
    fork: row.parent_id !== null && row.fork_version !== null ? { parentId: row.parent_id, forkVersion: row.fork_version } : null,
    event: timeline.at(-1)?.version === version ? timeline.at(-1)! : null,
    state: {
      title,
      fsm: task.fsm,
      status: task.status,
      outcome: outcomeOf(task),
      iteration: started?.iteration ?? 0,
      maxIterations: started?.config.maxIterations ?? null,
      workflow: started?.config.workflow ?? null,
      mode: started?.config.mode ?? null,
      prompt: started?.config.prompt ?? null,
      project: started ? { id: started.config.project.id, name: started.config.project.name } : null,
      step: task.step,
      openIssues: started?.openIssues ?? [],
      lastVerdict: started?.lastVerdict ?? null,
      testPlan: started?.lastTestPlan
        ? { summary: started.lastTestPlan.summary, commands: started.lastTestPlan.commands.map((c) => c.argv) }
        : null,
      head: started?.head ?? null,
      finalized: task.status === "finished" ? finalized : null,
    },
    round: current
      ? { ...current, entries: current.entries.slice(-ROUND_ENTRY_LIMIT), omitted: Math.max(0, current.entries.length - ROUND_ENTRY_LIMIT) }
      : null,
    rounds: rounds.map(summarizeRound),
    timeline,
    upcoming,
    marks,
  };
}

/** The title and how the session ended, as of the last of `events`. */
function describeSession(events: FoldSessionEvent[]): { finalized: ReplayState["finalized"]; title: string | null } {
  let finalized: ReplayState["finalized"] = null;
  let title: string | null = null;
  for (const e of events) {
    if (e.type === "SessionCreated") title = e.data.title;
    if (e.type === "SessionForked") {
      title = e.data.title;
      finalized = null;
    }
    if (e.type === "SessionFinalized")
      finalized = {
        outcome: e.data.outcome,
        reason: e.data.reason,
        errorClass: e.data.errorClass,
        diagnosis: e.data.diagnosis,
        unresolved: e.data.unresolved,
      };
  }
  return { finalized, title };
}

/** What a round produced, entry by entry: outputs, verdicts, test plans and results, commits, messages, failures. */
function roundEntries(events: FoldSessionEvent[]): RoundEntry[] {
  return events.flatMap((e): RoundEntry[] => {
    switch (e.type) {
      case "AgentOutputRecorded":
        return [
          {
            kind: "output",
            version: e.version,
            role: e.data.role,
            agentId: e.data.agentId,
            phase: e.data.phase,
            preview: e.data.preview,
            validationErrors: e.data.validationErrors,
            simulated: e.data.simulated,
          },
        ];
      case "ReviewVerdictRecorded":
        return [
          {
            kind: "verdict",
            version: e.version,
            decision: e.data.decision,
            modelDecision: e.data.modelDecision,
            override: e.data.override,
            summary: e.data.summary,
            findings: e.data.findings,
          },
        ];
      case "TestPlanRecorded":
        return [{ kind: "test_plan", version: e.version, summary: e.data.summary, commands: e.data.commands.map((c) => c.argv) }];
      case "TestCommandRecorded":
        return [
          {
            kind: "test",
            version: e.version,
            argv: e.data.argv,
            status: e.data.status,
            passed: e.data.passed,
            exitCode: e.data.exitCode,
            expectedExitCode: e.data.expectedExitCode,
            reason: e.data.reason,
            durationMs: e.data.durationMs,
          },
        ];
      case "WorkspaceCommitted":
        return [
          { kind: "commit", version: e.version, commit: e.data.commit, empty: e.data.empty, files: e.data.changedFiles.map((f) => f.path) },
        ];
      case "OperatorMessagePosted":
        return [{ kind: "message", version: e.version, from: "operator", text: e.data.text }];
      case "SystemReplied":
        return [{ kind: "message", version: e.version, from: "system", text: e.data.text }];
      case "OperatorConfirmed":
        return [{ kind: "confirm", version: e.version, via: e.data.via }];
      case "StepFailed":
        return [
          {
            kind: "step_failed",
            version: e.version,
            errorClass: e.data.errorClass,
            message: e.data.message,
            retrying: e.data.retryAt !== null,
          },
        ];
      case "ExecutionRejected":
        return [{ kind: "rejected", version: e.version, reasons: e.data.reasons }];
      default:
        return [];
    }
  });
}

function summarizeRound(round: Round): RoundSummary {
  let verdict: string | null = null;
  const tests = { passed: 0, failed: 0 };
  let outputs = 0;
  for (const entry of round.entries) {
    if (entry.kind === "output") outputs++;
    if (entry.kind === "verdict") verdict = entry.decision;
    if (entry.kind === "test") tests[entry.passed ? "passed" : "failed"]++;
  }
  return { iteration: round.iteration, fromVersion: round.fromVersion, reason: round.reason, outputs, verdict, tests };
}

/** The landmarks of a whole session (its lineage included): where to jump to. */
async function readMarks(db: Queryable, sessionId: string): Promise<ReplayMark[]> {
  const r = await db.query<{ version: number; type: string; label: string | null }>({
    name: "catcafe_replay_marks",
    text: `WITH RECURSIVE ${LINEAGE_CTE}
           SELECT e.version, e.type,
                  CASE e.type
                    WHEN 'SessionStateChanged' THEN e.data->>'to'
                    WHEN 'SessionForked' THEN e.data->>'state'
                    WHEN 'SessionCreated' THEN e.data->>'state'
                    WHEN 'SessionFinalized' THEN e.data->>'outcome'
                    WHEN 'IterationStarted' THEN 'iteration ' || (e.data->>'iteration')
                    ELSE 'confirmed'
                  END AS label
           FROM lineage l CROSS JOIN LATERAL (
             SELECT version, type, data FROM events
             WHERE stream_id = l.id AND (l.cap IS NULL OR version <= l.cap)
               AND type IN ('SessionCreated', 'SessionForked', 'SessionStateChanged', 'IterationStarted', 'OperatorConfirmed', 'SessionFinalized')
             OFFSET 0 -- a per-member index scan (store.ts readStream says why)
           ) e
           ORDER BY e.version`,
    values: [sessionId],
  });
  return r.rows.map((m) => ({ version: m.version, type: m.type, label: m.label ?? m.type }));
}
