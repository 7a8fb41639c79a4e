// The idempotency key of the command being carried out (docs/api.md, "Repeating a command"),
// for the event store's writers to record their effects under. The web layer
// (server/api/idempotency.ts) takes the key and runs the command inside `withCommandKey`; every
// append (the event store's appendInTx, which the command handler, the fork service and the
// reactors all go through) then notes the stream and version it reached on the key's row, in
// the same transaction as the events: a key is never without the record of what its command
// did, whatever becomes of the answer after the commit.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Queryable } from "../db/pool";

export interface CommandKey {
  userId: string;
  key: string;
}

const current = new AsyncLocalStorage<CommandKey>();

/** Runs `fn` as the command `key` names: what it records is noted on the key. */
export function withCommandKey<T>(key: CommandKey, fn: () => Promise<T>): Promise<T> {
  return current.run(key, fn);
}

/** Whether a command with a key is being carried out here (its appends then take a transaction). */
export function hasCommandKey(): boolean {
  return current.getStore() !== undefined;
}

/** One stream's part of what a command recorded: its version once the command's events were appended. */
export interface KeyEffect {
  streamId: string;
  version: number;
}

/** Notes on the current command's key (if any) that `streamId` reached `version`, through `tx` (the append's transaction). */
export async function recordKeyEffect(tx: Queryable, streamId: string, version: number): Promise<void> {
  const key = current.getStore();
  if (!key) return;
  const effect: KeyEffect = { streamId, version };
  await tx.query("UPDATE command_keys SET effects = effects || $3::jsonb WHERE user_id = $1 AND key = $2", [
    key.userId,
    key.key,
    JSON.stringify([effect]),
  ]);
}
