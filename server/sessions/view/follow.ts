// A live session view: while it subscribes to the shared listener, the session's status is
// folded from the progress fold's nearest snapshot and the events after it, and the events
// after `afterVersion` are read (not the whole history); then every wake-up reads only the
// events after the last version sent and yields them as entries with the updated status. The
// first batch always comes at once (possibly without entries), so a client that reconnects is
// in sync immediately; one more read follows once the subscription is in place, so nothing
// committed while it was being made is missed.
import { withTransaction, type Db } from "../../db/pool";
import { foldStream, LATEST_VERSION } from "../../events/fold-read";
import { toSessionEntry, type SessionEntry } from "./entries";
import type { RecordedEvent } from "../../events/types";
import type { SessionEventsListener } from "./listener";
import { namedEntries, type SessionViewDeps } from "./load";
import { foldProgress, progressFold, statusOf, type SessionStatus } from "./progress";

export interface LiveBatch {
  version: number;
  status: SessionStatus;
  entries: SessionEntry[];
  /** Names of users first seen in these entries. */
  names: Record<string, string>;
}

/** A coalescing wake-up: any number of signals while busy make the next wait return once. */
export function wakeSignal() {
  let pending = false;
  let resolve: (() => void) | null = null;
  return {
    wake() {
      pending = true;
      resolve?.();
    },
    async wait(signal: AbortSignal | undefined): Promise<void> {
      if (!pending) {
        await new Promise<void>((r) => {
          resolve = r;
          signal?.addEventListener("abort", () => r(), { once: true });
        });
        resolve = null;
      }
      pending = false;
    },
  };
}

/**
 * Returns once every transaction appending to `streamId` when it was called has committed (or
 * rolled back): a share lock on the stream's row waits for them. The lock's transaction has
 * nothing to make durable, so its commit waits for no flush and the row is free again at once.
 */
async function afterAppendsUnderWay(pool: Db, streamId: string): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query("SET LOCAL synchronous_commit = off");
    await tx.query("SELECT 1 FROM streams WHERE id = $1 FOR SHARE", [streamId]);
  });
}

export interface FollowOptions {
  /**
   * Whether the stream may go on (the credentials still valid): run beside each batch's reads
   * and awaited before the batch is yielded; its throw ends the stream with nothing more sent.
   */
  admit?: () => Promise<void>;
}

export async function* followSession(
  deps: SessionViewDeps,
  listener: SessionEventsListener,
  sessionId: string,
  afterVersion: number,
  signal: AbortSignal | undefined,
  options: FollowOptions = {},
): AsyncGenerator<LiveBatch> {
  const admit = options.admit ?? (async () => {});
  const wake = wakeSignal();
  // The set-up's four parts run at once, so a page opened as events arrive gets its first
  // batch after the slowest of them rather than after their sum (docs/scaling.md, "First
  // output and live paint"): the interest row, the status folded from its nearest snapshot,
  // the session's state, the credentials.
  const subscribed = listener.subscribe(sessionId, wake.wake);
  try {
    const summarize = (type: string, data: unknown) => deps.store.registry.summarize(type, data);
    const [, folded, fallbackState] = await Promise.all([
      subscribed,
      foldStream({ pool: deps.pool, registry: deps.store.registry }, progressFold, sessionId, LATEST_VERSION),
      deps.prisma.session.findUnique({ where: { id: sessionId }, select: { state: true } }).then((row) => row?.state ?? "unknown"),
      admit(),
    ]);
    // The fold may have read before the interest row was committed: an append committed in
    // between rang nobody, and so did one under way when the row was committed (its statement
    // began before). Such an append holds its stream's row from its statement's start to its
    // commit, so once a share lock on that row is granted every one of them has committed: the
    // stream is read once more then (the listener's late wake remains for what slips past).
    void afterAppendsUnderWay(deps.pool, sessionId).then(wake.wake, wake.wake);
    let progress = folded.state;
    const known = new Set<string>();
    const batch = async (events: RecordedEvent[]): Promise<LiveBatch> => {
      const named = await namedEntries(
        deps,
        events.map((e) => toSessionEntry(e, summarize)),
      );
      // Each batch sends the names the client has not had yet.
      const names = Object.fromEntries(Object.entries(named.names).filter(([label]) => !known.has(label)));
      Object.keys(names).forEach((label) => known.add(label));
      return { version: progress.task.version, status: statusOf(progress, fallbackState), entries: named.entries, names };
    };
    // What the client lacks up to where the fold ended; anything later comes with the next wake-up.
    const missed =
      afterVersion < folded.version
        ? await deps.store.readStream(sessionId, { fromVersion: afterVersion + 1, toVersion: folded.version })
        : [];
    yield await batch(missed);
    while (!signal?.aborted) {
      await wake.wait(signal);
      if (signal?.aborted) break;
      // The credentials are asked again after every wake-up, beside the read (not after it).
      const [fresh] = await Promise.all([deps.store.readStream(sessionId, { fromVersion: progress.task.version + 1 }), admit()]);
      if (fresh.length === 0) continue;
      progress = foldProgress(fresh, progress);
      yield await batch(fresh);
    }
  } finally {
    // Also when the set-up failed part-way: the subscription, once made, is undone.
    const unsubscribe = await subscribed.catch(() => null);
    unsubscribe?.();
  }
}
