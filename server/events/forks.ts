// Forking a session's stream at a position (req E5), one operation for every kind of session
// (docs/forks.md): the child inherits the parent's events 1..atVersion without copying them
// (EventStore.fork), opens with SessionForked, and goes on with what its kind decides. The
// parent never changes. A kind supplies a fold (the state at the position comes from the
// nearest snapshot, as every replay's does) and two hooks: where a fork may start, and how the
// child goes on. Tasks (fork, revert, modify, rerun) and conversations use it.
import { AppError } from "../errors";
import type { Queryable, Tx } from "../db/pool";
import type { AppEventOf } from "./catalog";
import { foldStreamAt } from "./fold-read";
import type { StreamFold } from "./snapshots";
import type { EventStore } from "./store";
import type { AppendMetadata, NewEvent } from "./types";

/** SessionForked's facts besides the parent and the position. */
export type ForkFacts = Omit<AppEventOf<"SessionForked">["data"], "parentId" | "atVersion">;

export interface ForkRequest<S, T> {
  fold: StreamFold<S>;
  parentId: string;
  /** The parent's event position (inherited events counted): the child inherits events 1..atVersion. */
  atVersion: number;
  childId: string;
  /**
   * Where a fork may start: given the state at the position, what the child starts from (that
   * state, as the kind sees it) — or a domain error that names where a fork may start instead,
   * for a position from which this kind cannot go on.
   */
  startsFrom(inherited: S, position: { parentId: string; atVersion: number; head: number; db: Queryable }): T | Promise<T>;
  /** SessionForked's title, workflow, state and reason. */
  forked(from: T): ForkFacts;
  /** Recorded right after SessionForked, before the continuation (a modify's change request). */
  first?(from: T): NewEvent[] | Promise<NewEvent[]>;
  /**
   * How the child goes on: decided on the inherited state with SessionForked (and `first`)
   * folded in, appended with them in one transaction. `version` is the child's version then.
   */
  continuation(state: S, from: T, at: { childId: string; version: number; db: Queryable }): NewEvent[] | Promise<NewEvent[]>;
}

export interface Forked {
  sessionId: string;
  parentId: string;
  atVersion: number;
  /** The child's version once created. */
  version: number;
}

/**
 * The state of `streamId` at `atVersion`, which must be one of its positions (NOT_FOUND for no
 * such stream; INVALID_INPUT naming the positions it has otherwise).
 */
export async function stateAtPosition<S>(
  store: EventStore,
  fold: StreamFold<S>,
  streamId: string,
  atVersion: number,
  tx?: Tx,
): Promise<{ state: S; head: number }> {
  const head = await store.streamVersion(streamId, tx);
  if (head === null) throw new AppError("NOT_FOUND", `no session ${streamId}`, { sessionId: streamId });
  if (!Number.isInteger(atVersion) || atVersion < 1 || atVersion > head) {
    throw new AppError("INVALID_INPUT", `session ${streamId} has events 1..${head}: there is no event ${atVersion} to fork at`, {
      atVersion,
      head,
      fieldErrors: { atVersion: [`between 1 and ${head}`] },
    });
  }
  const state = tx
    ? await foldStreamAt({ pool: tx, registry: store.registry }, fold, streamId, atVersion, { inTransaction: true })
    : await store.stateAt(streamId, atVersion, fold);
  return { state, head };
}

/**
 * Creates the child: SessionForked, `first`, then the continuation, in one transaction (the
 * caller's `tx` when given: a bake-off creates its contenders in its confirm's).
 */
export async function forkStream<S, T>(
  store: EventStore,
  request: ForkRequest<S, T>,
  metadata: AppendMetadata,
  options: { tx?: Tx } = {},
): Promise<Forked> {
  const { fold, parentId, atVersion, childId } = request;
  const { state: inherited, head } = await stateAtPosition(store, fold, parentId, atVersion, options.tx);
  const from = await request.startsFrom(inherited, { parentId, atVersion, head, db: options.tx ?? store.pool });
  const forked: NewEvent = { type: "SessionForked", data: { parentId, atVersion, ...request.forked(from) } };
  const first = (await request.first?.(from)) ?? [];
  // Folded as they will be recorded (SessionForked's time starts the child's own budget clock).
  const recordedAt = new Date().toISOString();
  const opened = [forked, ...first].reduce(
    (state, e, i) => fold.evolve(state, { version: atVersion + 1 + i, type: e.type, data: e.data, recordedAt }),
    inherited,
  );
  const then = await request.continuation(opened, from, { childId, version: atVersion + 1 + first.length, db: options.tx ?? store.pool });
  const input = { parentId, atVersion, childId, event: [forked, ...first, ...then], metadata };
  const result = options.tx ? await store.forkInTx(options.tx, input) : await store.fork(input);
  return { sessionId: childId, parentId, atVersion, version: result.version };
}
