// A task started from an issue under a rule with `autoConfirm` (docs/intake.md) is confirmed by
// `system:intake` the first time it waits for a confirm, in the transaction that recorded the
// wait (the runner's reaction, which holds the stream's lock). Once: a later wait is a person's.
import type { Tx } from "../db/pool";
import type { EventStore } from "../events/store";
import { taskCommands, taskDecision } from "../task-engine";
import { INTAKE_ACTOR } from "./start";

export async function confirmIfIntakeAuto(tx: Tx, store: EventStore, sessionId: string): Promise<void> {
  const r = await tx.query<{ auto: boolean; confirmed: boolean }>(
    `SELECT bool_or(type = 'IntakeAutoConfirm') AS auto, bool_or(type = 'OperatorConfirmed') AS confirmed
     FROM events WHERE stream_id = $1 AND type IN ('IntakeAutoConfirm', 'OperatorConfirmed')`,
    [sessionId],
  );
  const row = r.rows[0];
  if (!row?.auto || row.confirmed) return;
  await taskCommands.handle(store, sessionId, taskDecision({ type: "Confirm", via: "api" }), { actor: INTAKE_ACTOR }, { tx });
}
