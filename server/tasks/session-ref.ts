// What every task command and fork starts from: the dependencies, a session reference, a new
// session's id, a session's whole history. Apart from ./commands.ts (which re-exports them) so
// that the forks (./fork.ts), which a bake-off's confirm uses, need not import the commands.
import crypto from "node:crypto";
import { z } from "zod";
import type { Db } from "../db/pool";
import { AppError } from "../errors";
import type { EventStore } from "../events/store";
import type { RecordedEvent } from "../events/types";

export interface TaskDeps {
  store: EventStore;
  pool: Db;
}

export const ZSessionRef = z.object({ sessionId: z.string().min(1).max(100) });

export function newSessionId(): string {
  return `s-${crypto.randomBytes(6).toString("hex")}`;
}

/** A session's whole history (its lineage's events included); NOT_FOUND for no such session. */
export async function sessionHistory(deps: TaskDeps, sessionId: string): Promise<RecordedEvent[]> {
  const history = await deps.store.readStream(sessionId);
  if (!history.length) throw new AppError("NOT_FOUND", `no session ${sessionId}`);
  return history;
}
