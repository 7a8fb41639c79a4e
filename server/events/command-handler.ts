// One way to act on a stream, for every decider of the application (docs/architecture.md,
// "Commands"): lock the stream, read its state (from the nearest snapshot, for a fold), decide,
// append what was decided at the version read — in a transaction of its own or in the
// caller's. Tasks, Forge pipelines, conversations and deliveries all go through it, so what
// every command must obey (who did it, causation, and the rules to come) lives here once.
//
// The lock is the stream row's (`SELECT … FOR UPDATE`), taken as the transaction's first
// write, as every append's is (docs/architecture.md, "Appending"): commands on one stream are
// decided one at a time, each on the state the one before it left, so none is refused for
// having raced another; a runner's claim or result waits for the lock like any append. A
// decision that no longer applies is the decider's own refusal ("it already moved on").
import { withTransaction, type Queryable, type Tx } from "../db/pool";
import { AppError, isAppError } from "../errors";
import { foldStream, LATEST_VERSION } from "./fold-read";
import type { StreamFold } from "./snapshots";
import type { EventStore } from "./store";
import type { AppendMetadata, NewEvent, RecordedEvent } from "./types";

/** Where a handler reads the state it decides on. */
export interface StateSource<S> {
  /** The state of a stream that does not exist yet (a creation decides on it). */
  initial: S;
  /** The stream's state and its version, read through `db`; NOT_FOUND when there is no such stream. */
  read(store: EventStore, db: Queryable, streamId: string, inTransaction: boolean): Promise<{ state: S; version: number }>;
  /**
   * What a refusal tells the client of the state it was decided on (where the stream stands,
   * e.g. `{ fsm }`), beside the version: a 409's body (docs/api.md, "Conflicts").
   */
  describe?: (state: S) => Record<string, unknown>;
}

/** The state a fold gives: the lean read from the nearest snapshot (events/fold-read.ts). */
export function foldedState<S>(fold: StreamFold<S>, describe?: (state: S) => Record<string, unknown>): StateSource<S> {
  return {
    initial: fold.initial,
    ...(describe ? { describe } : {}),
    read: (store, db, streamId, inTransaction) =>
      foldStream({ pool: db, registry: store.registry }, fold, streamId, LATEST_VERSION, { inTransaction }),
  };
}

/**
 * The state folded from the stream's whole history, metadata included (for decisions that read
 * who did what, which a replay fold never sees), with no snapshot.
 */
export function historyState<S>(initial: S, fold: (events: RecordedEvent[]) => S): StateSource<S> {
  return {
    initial,
    read: async (store, db, streamId) => {
      const events = await store.readStream(streamId, { db });
      return { state: fold(events), version: events.at(-1)?.version ?? 0 };
    },
  };
}

/** No state, only the stream's version: for records that decide nothing on what came before (a step's outcome as it was). */
export const streamVersion: StateSource<null> = {
  initial: null,
  read: async (store, db, streamId) => {
    const version = await store.streamVersion(streamId, db);
    if (version === null) throw new AppError("NOT_FOUND", `stream ${streamId} does not exist`, { streamId });
    return { state: null, version };
  },
};

/** What a decision is made with besides the state: where, at which version, and a client to read more under the lock. */
export interface DecisionContext {
  streamId: string;
  /** The version the state was read at: what is decided is appended right after it. */
  version: number;
  /** The transaction's client (reads through it see the stream as locked). */
  db: Queryable;
}

/** Decides on the state: the events to append (none: nothing happens), or a domain error. */
export type Decision<S> = (state: S, at: DecisionContext) => NewEvent[] | Promise<NewEvent[]>;

export interface Handled<S> {
  streamId: string;
  /** The state the decision was made on. */
  state: S;
  /** The stream's version after the append (the version read when nothing was decided). */
  version: number;
  /** What was decided, as appended. */
  events: NewEvent[];
  recorded: RecordedEvent[];
}

export interface HandleOptions {
  /**
   * The caller's transaction, which has written to the stream already (a step's outcome it
   * just recorded): its lock is held, so none is taken again.
   */
  tx?: Tx;
}

export interface CommandHandler<S> {
  /** Decides on the stream as it is and appends what was decided. NOT_FOUND when it does not exist. */
  handle(store: EventStore, streamId: string, decide: Decision<S>, metadata: AppendMetadata, options?: HandleOptions): Promise<Handled<S>>;
  /** Decides on a stream that does not exist yet (its initial state) and creates it with what was decided. */
  create(store: EventStore, streamId: string, decide: Decision<S>, metadata: AppendMetadata, options?: HandleOptions): Promise<Handled<S>>;
}

/**
 * Takes the stream's row lock in `tx`, as its first write: for a caller that decides on the
 * stream with `{ tx }` after writing elsewhere first. No row, no lock: the read that follows
 * says the stream does not exist (NOT_FOUND).
 */
export async function lockStream(tx: Tx, streamId: string): Promise<void> {
  await tx.query("SELECT version FROM streams WHERE id = $1 FOR UPDATE", [streamId]);
}

/** Where a stream stood when a command on it was refused: its version and what its source describes. */
export type CurrentState = { version: number } & Record<string, unknown>;

export function commandHandler<S>(source: StateSource<S>): CommandHandler<S> {
  /**
   * The decision's events; its refusal as a conflict (CONFLICT) carries the state it was
   * decided on as `details.current`, so the client refused sees where the stream stands
   * without asking again.
   */
  const decided = async (decide: Decision<S>, state: S, at: DecisionContext): Promise<NewEvent[]> => {
    try {
      return await decide(state, at);
    } catch (err) {
      if (!isAppError(err, "CONFLICT")) throw err;
      const current: CurrentState = { version: at.version, ...source.describe?.(state) };
      throw new AppError("CONFLICT", err.message, { ...err.details, current });
    }
  };
  /** Reads, decides and appends in `tx`, which holds the stream's lock. */
  const decideAndAppend = async (tx: Tx, store: EventStore, streamId: string, decide: Decision<S>, metadata: AppendMetadata) => {
    const { state, version } = await source.read(store, tx, streamId, true);
    const events = await decided(decide, state, { streamId, version, db: tx });
    if (!events.length) return { streamId, state, version, events, recorded: [] };
    const appended = await store.appendInTx(tx, streamId, version, events, metadata);
    return { streamId, state, version: appended.version, events, recorded: appended.events };
  };
  return {
    async handle(store, streamId, decide, metadata, options = {}) {
      if (options.tx) return decideAndAppend(options.tx, store, streamId, decide, metadata);
      return withTransaction(store.pool, async (tx) => {
        await lockStream(tx, streamId);
        return decideAndAppend(tx, store, streamId, decide, metadata);
      });
    },

    async create(store, streamId, decide, metadata, options = {}) {
      const run = async (tx: Tx): Promise<Handled<S>> => {
        const state = source.initial;
        const events = await decide(state, { streamId, version: 0, db: tx });
        if (!events.length) throw new AppError("INVALID_INPUT", `nothing to create stream ${streamId} with`, { streamId });
        const appended = await store.appendInTx(tx, streamId, "no_stream", events, metadata);
        return { streamId, state, version: appended.version, events, recorded: appended.events };
      };
      return options.tx ? run(options.tx) : withTransaction(store.pool, run);
    },
  };
}
