// A bake-off as its parent session's events tell it (docs/bake-off.md): the contenders it was
// started with and the sessions they were forked into, the judge's requests and advice, the
// choice or the dismissal. A fold of the parent's history (with the metadata: who chose), read
// by the pick, the judge and the comparison alike; `getBakeOff` adds each contender's state.
import type { Db } from "../db/pool";
import { AppError } from "../errors";
import type { BakeOffContenderSpec, JudgeRecommendation } from "../events/bake-off-catalog";
import { actorLabel, type AppEvent } from "../events/catalog";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";
import { foldTask, type StartedTask } from "../task-engine";
import { BAKE_OFF_STATE } from "../tasks/bake-off-confirm";

export interface BakeOffDeps {
  store: EventStore;
  pool: Db;
}

type Recorded<T extends AppEvent["type"]> = RecordedEvent & Extract<AppEvent, { type: T }>;
const ofType = <T extends AppEvent["type"]>(events: readonly RecordedEvent[], type: T) =>
  events.filter((e): e is Recorded<T> => e.type === type);

export interface BakeOffRecord {
  task: StartedTask;
  /** As started (with each one's agent); `sessionId` once forked. */
  contenders: Array<Omit<BakeOffContenderSpec, "agent"> & { agent: BakeOffContenderSpec["agent"]; sessionId: string | null }>;
  forked: boolean;
  judge: {
    requests: Array<{ stepId: string; agentId: string; attempt: number; at: string }>;
    recommendation: (JudgeRecommendation & { agent: string; at: string }) | null;
    failures: Array<{ stepId: string; errorClass: string; message: string; retried: boolean }>;
  };
  choice: { contenderId: string; sessionId: string; reason: string | null; by: string; at: string } | null;
  dismissed: { reason: string | null; by: string; at: string } | null;
}

/** The bake-off of a session's history; NOT_FOUND / PRECONDITION_FAILED for a session that is none. */
export function bakeOffRecord(sessionId: string, events: readonly RecordedEvent[]): BakeOffRecord {
  const task = foldTask(events as RecordedEvent[]);
  if (task.status === "none") throw new AppError("NOT_FOUND", `session ${sessionId} is not a task`);
  const started = ofType(events, "TaskStarted")[0]?.data.bakeOff;
  if (!started) throw new AppError("PRECONDITION_FAILED", `session ${sessionId} is not a bake-off (it was started without contenders)`);
  const forked = ofType(events, "BakeOffForked").at(-1)?.data.contenders ?? [];
  const judged = ofType(events, "BakeOffJudged").at(-1);
  const chosen = ofType(events, "BakeOffWinnerChosen").at(-1);
  const dismissed = ofType(events, "BakeOffDismissed").at(-1);
  return {
    task,
    contenders: started.contenders.map((c) => ({ ...c, sessionId: forked.find((f) => f.id === c.id)?.sessionId ?? null })),
    forked: forked.length > 0,
    judge: {
      requests: ofType(events, "BakeOffJudgeRequested").map((e) => ({ ...e.data, at: e.recordedAt })),
      recommendation: judged ? { ...judged.data.recommendation, agent: judged.data.agent, at: judged.recordedAt } : null,
      failures: ofType(events, "BakeOffJudgeFailed").map((e) => e.data),
    },
    choice: chosen ? { ...chosen.data, by: actorLabel(chosen.metadata.actor), at: chosen.recordedAt } : null,
    dismissed: dismissed ? { reason: dismissed.data.reason, by: actorLabel(dismissed.metadata.actor), at: dismissed.recordedAt } : null,
  };
}

/** Whether the bake-off waits for a person's pick (forked, neither chosen nor dismissed). */
export function awaitsPick(record: BakeOffRecord): boolean {
  return record.forked && record.task.fsm === BAKE_OFF_STATE && !record.choice && !record.dismissed;
}

export interface ContenderView {
  id: string;
  sessionId: string | null;
  coder: string;
  model: string | null;
  label: string;
  /** none before the confirm; then the contender session's. */
  status: "none" | "active" | "finished";
  state: string | null;
  /** Its own outcome (approved, max_iterations_reached, …): what it reached before any pick. */
  outcome: string | null;
  /** not_chosen once another won, else its outcome. */
  finalOutcome: string | null;
  iteration: number | null;
}

/** A contender's own outcome: the first SessionFinalized after its fork that is not the bake-off's not_chosen. */
export function ownOutcome(events: readonly RecordedEvent[]): string | null {
  const from = events.findIndex((e) => e.type === "BakeOffContender");
  return (
    ofType(from < 0 ? events : events.slice(from), "SessionFinalized")
      .map((e) => e.data.outcome)
      .find((o) => o !== "not_chosen") ?? null
  );
}

/** `bakeOffs.get`: the parent's bake-off, each contender with its session's state. */
export async function getBakeOff(deps: BakeOffDeps, sessionId: string) {
  const events = await deps.store.readStream(sessionId);
  if (!events.length) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  const record = bakeOffRecord(sessionId, events);
  const contenders: ContenderView[] = [];
  for (const c of record.contenders) {
    const base = { id: c.id, sessionId: c.sessionId, coder: c.coder, model: c.model ?? null, label: c.label };
    if (!c.sessionId) {
      contenders.push({ ...base, status: "none", state: null, outcome: null, finalOutcome: null, iteration: null });
      continue;
    }
    const own = await deps.store.readStream(c.sessionId);
    const state = foldTask(own);
    contenders.push({
      ...base,
      status: state.status,
      state: state.fsm,
      outcome: ownOutcome(own),
      finalOutcome: state.status === "finished" ? state.outcome : null,
      iteration: state.status === "none" ? null : state.iteration,
    });
  }
  return {
    sessionId,
    state: record.task.fsm,
    outcome: record.task.status === "finished" ? record.task.outcome : null,
    awaitsPick: awaitsPick(record),
    contenders,
    judge: record.judge,
    choice: record.choice,
    dismissed: record.dismissed,
  };
}
export type BakeOffView = Awaited<ReturnType<typeof getBakeOff>>;
