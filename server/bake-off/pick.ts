// A person's pick of a bake-off's winner, or its dismissal (docs/bake-off.md, "Picking"), in one
// transaction over the parent and every contender (locked parent first, then the contenders in
// id order, as nothing else locks two of them): the parent records the choice (who: the event's
// actor) and ends `winner_chosen`; the winner's delivery is asked for as Deliver would (the
// project's delivery settings, the existing delivery step); every other contender ends
// `not_chosen` — one still running is stopped (its step cancelled) — and stays for replay.
//
// Who may win: an approved contender; when none was approved, any that finished. Picking the
// same contender again answers as the first pick did; another one is a CONFLICT.
import { z } from "zod";
import { withTransaction, type Tx } from "../db/pool";
import { AppError, isAppError } from "../errors";
import { deliverInTx, deliveriesOf } from "../delivery/service";
import { ZContenderId } from "../events/bake-off-catalog";
import type { Actor } from "../events/catalog";
import { lockStream } from "../events/command-handler";
import type { NewEvent } from "../events/types";
import { SUCCESS_OUTCOMES } from "../../lib/outcomes";
import { foldTask, type TaskState } from "../task-engine";
import { BAKE_OFF_OUTCOMES, BAKE_OFF_STATE, NOT_CHOSEN } from "../tasks/bake-off-confirm";
import { bakeOffRecord, ownOutcome, type BakeOffDeps, type BakeOffRecord } from "./record";

export const ZPickInput = z.object({
  sessionId: z.string().min(1).max(100),
  contenderId: ZContenderId,
  reason: z.string().trim().min(1).max(2000).optional(),
});
export const ZDismissInput = z.object({
  sessionId: z.string().min(1).max(100),
  reason: z.string().trim().min(1).max(2000).optional(),
});

export interface PickAnswer {
  sessionId: string;
  contenderId: string;
  winnerSessionId: string;
  /** The winner's delivery as asked for; null when the project's settings refused it (`deliveryProblem` says why). */
  delivery: { stepId: string; method: string; branch: string } | null;
  deliveryProblem: string | null;
  notChosen: string[];
}

interface Contender {
  id: string;
  sessionId: string;
  events: Awaited<ReturnType<BakeOffDeps["store"]["readStream"]>>;
  state: TaskState;
}

/** The parent's record and its contenders, read under their locks in `tx`. */
async function lockedBakeOff(deps: BakeOffDeps, tx: Tx, sessionId: string): Promise<{ record: BakeOffRecord; contenders: Contender[] }> {
  await lockStream(tx, sessionId);
  const events = await deps.store.readStream(sessionId, { db: tx });
  if (!events.length) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  const record = bakeOffRecord(sessionId, events);
  if (!record.forked) throw new AppError("PRECONDITION_FAILED", `the bake-off ${sessionId} has not started: confirm its proposal first`);
  const forked = record.contenders.filter((c): c is typeof c & { sessionId: string } => c.sessionId !== null);
  const contenders: Contender[] = [];
  for (const c of [...forked].sort((a, b) => a.sessionId.localeCompare(b.sessionId))) await lockStream(tx, c.sessionId);
  for (const c of forked) {
    const own = await deps.store.readStream(c.sessionId, { db: tx });
    contenders.push({ id: c.id, sessionId: c.sessionId, events: own, state: foldTask(own) });
  }
  return { record, contenders };
}

/** What ends a contender that was not chosen: its running step cancelled, then not_chosen. */
function notChosenEvents(parentId: string, c: Contender, winner: string | null): NewEvent[] {
  const { state } = c;
  if (state.status === "none") return [];
  const endedAs = state.status === "finished" ? state.outcome : null;
  const events: NewEvent[] = [{ type: "BakeOffNotChosen", data: { parentSessionId: parentId, contenderId: c.id, winner, endedAs } }];
  if (state.status === "active" && state.step) events.push({ type: "StepCancelled", data: { stepId: state.step.id } });
  events.push(
    {
      type: "SessionStateChanged",
      data: { from: state.fsm, to: NOT_CHOSEN, reason: winner ? `${winner} was chosen` : "the bake-off was dismissed" },
    },
    {
      type: "SessionFinalized",
      data: {
        outcome: NOT_CHOSEN,
        reason: winner ? `not chosen: ${winner} won the bake-off ${parentId}` : `the bake-off ${parentId} was dismissed`,
        iterations: state.iteration,
        unresolved: [],
        errorClass: null,
        diagnosis: null,
      },
    },
  );
  return events;
}

/** The parent's ending, after its BakeOffWinnerChosen or BakeOffDismissed. */
function parentEnding(record: BakeOffRecord, outcome: string, reason: string): NewEvent[] {
  return [
    { type: "SessionStateChanged", data: { from: record.task.fsm, to: outcome, reason } },
    {
      type: "SessionFinalized",
      data: { outcome, reason, iterations: record.task.iteration, unresolved: [], errorClass: null, diagnosis: null },
    },
  ];
}

/** The answer a pick gives, read from what was recorded (the first pick's answer, for a repeat). */
function answerOf(parentId: string, record: BakeOffRecord, contenders: Contender[], deliveryProblem: string | null): PickAnswer {
  const choice = record.choice!;
  const winner = contenders.find((c) => c.id === choice.contenderId);
  const asked = winner ? deliveriesOf(winner.events)[0] : undefined;
  return {
    sessionId: parentId,
    contenderId: choice.contenderId,
    winnerSessionId: choice.sessionId,
    delivery: asked ? { stepId: asked.stepId, method: asked.requested.method, branch: asked.requested.branch } : null,
    deliveryProblem,
    notChosen: contenders.filter((c) => c.id !== choice.contenderId).map((c) => c.id),
  };
}

/** Who may win: approved ones; when none was approved, any that finished. */
function requirePickable(contenders: Contender[], pick: Contender): void {
  const approved = contenders.filter((c) => SUCCESS_OUTCOMES.includes(ownOutcome(c.events) ?? ""));
  const outcome = ownOutcome(pick.events);
  if (approved.length) {
    if (approved.includes(pick)) return;
    throw new AppError(
      "PRECONDITION_FAILED",
      `${pick.id} ${outcome ? `ended ${outcome}` : "has not finished"}: pick an approved contender (${approved.map((c) => c.id).join(", ")})`,
      { approved: approved.map((c) => c.id) },
    );
  }
  if (pick.state.status !== "finished") {
    throw new AppError("PRECONDITION_FAILED", `${pick.id} has not finished (it is in "${pick.state.fsm}"): pick once it has ended`);
  }
}

export async function pickWinner(deps: BakeOffDeps, raw: z.input<typeof ZPickInput>, actor: Actor): Promise<PickAnswer> {
  const input = ZPickInput.parse(raw);
  return withTransaction(deps.pool, async (tx) => {
    const { record, contenders } = await lockedBakeOff(deps, tx, input.sessionId);
    if (record.choice) {
      if (record.choice.contenderId === input.contenderId) return answerOf(input.sessionId, record, contenders, null);
      throw new AppError(
        "CONFLICT",
        `${record.choice.contenderId} was chosen already (by ${record.choice.by}): a bake-off has one winner`,
        {
          chosen: record.choice.contenderId,
        },
      );
    }
    if (record.dismissed) throw new AppError("CONFLICT", `the bake-off was dismissed (by ${record.dismissed.by}): nothing to pick`);
    if (record.task.fsm !== BAKE_OFF_STATE)
      throw new AppError("CONFLICT", `the bake-off is not waiting for a pick (it is in "${record.task.fsm}")`);
    const pick = contenders.find((c) => c.id === input.contenderId);
    if (!pick) {
      throw new AppError(
        "INVALID_INPUT",
        `no contender ${input.contenderId} in this bake-off (contenders: ${contenders.map((c) => c.id).join(", ")})`,
        {
          fieldErrors: { contenderId: ["unknown contender"] },
        },
      );
    }
    requirePickable(contenders, pick);

    const reason = input.reason ?? null;
    const chosen: NewEvent = { type: "BakeOffWinnerChosen", data: { contenderId: pick.id, sessionId: pick.sessionId, reason } };
    const parentVersion = record.task.version;
    await deps.store.appendInTx(
      tx,
      input.sessionId,
      parentVersion,
      [chosen, ...parentEnding(record, BAKE_OFF_OUTCOMES.chosen, `${pick.id} (${pick.sessionId}) chosen`)],
      { actor },
    );
    for (const c of contenders) {
      if (c === pick) continue;
      const events = notChosenEvents(input.sessionId, c, pick.id);
      if (events.length) await deps.store.appendInTx(tx, c.sessionId, c.state.version, events, { actor });
    }
    // The winner leaves by the project's delivery settings; settings that refuse it keep the pick (a person delivers by hand).
    let deliveryProblem: string | null = null;
    await tx.query("SAVEPOINT bake_off_delivery");
    try {
      await deliverInTx(tx, deps.store, pick.sessionId, actor);
      await tx.query("RELEASE SAVEPOINT bake_off_delivery");
    } catch (err) {
      await tx.query("ROLLBACK TO SAVEPOINT bake_off_delivery");
      if (!isAppError(err, "PRECONDITION_FAILED") && !isAppError(err, "CONFLICT")) throw err;
      deliveryProblem = err.message;
    }
    const after = await lockedBakeOff(deps, tx, input.sessionId);
    return answerOf(input.sessionId, after.record, after.contenders, deliveryProblem);
  });
}

/** No winner: the parent ends `bake_off_dismissed`, every contender `not_chosen` (those still running are stopped). */
export async function dismissBakeOff(
  deps: BakeOffDeps,
  raw: z.input<typeof ZDismissInput>,
  actor: Actor,
): Promise<{ sessionId: string; notChosen: string[] }> {
  const input = ZDismissInput.parse(raw);
  return withTransaction(deps.pool, async (tx) => {
    const { record, contenders } = await lockedBakeOff(deps, tx, input.sessionId);
    if (record.dismissed) return { sessionId: input.sessionId, notChosen: contenders.map((c) => c.id) };
    if (record.choice)
      throw new AppError("CONFLICT", `${record.choice.contenderId} was chosen already (by ${record.choice.by}): nothing to dismiss`);
    const reason = input.reason ?? null;
    await deps.store.appendInTx(
      tx,
      input.sessionId,
      record.task.version,
      [
        { type: "BakeOffDismissed", data: { reason } },
        ...parentEnding(record, BAKE_OFF_OUTCOMES.dismissed, reason ?? "dismissed: no winner"),
      ],
      { actor },
    );
    for (const c of contenders) {
      const events = notChosenEvents(input.sessionId, c, null);
      if (events.length) await deps.store.appendInTx(tx, c.sessionId, c.state.version, events, { actor });
    }
    return { sessionId: input.sessionId, notChosen: contenders.map((c) => c.id) };
  });
}
