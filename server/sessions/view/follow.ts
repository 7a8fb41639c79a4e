// A live session view: after subscribing to the shared listener, the session's status is
// folded from the progress fold's nearest snapshot and the events after it, and the events
// after `afterVersion` are read (not the whole history); then every wake-up reads only the
// events after the last version sent and yields them as entries with the updated status. The first batch always comes
// at once (possibly without entries), so a client that reconnects is in sync immediately.
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
      if (!pending && !signal?.aborted) {
        // The abort listener goes once woken: a stream that waits thousands of times keeps none.
        const aborted = () => resolve?.();
        await new Promise<void>((r) => {
          resolve = r;
          signal?.addEventListener("abort", aborted, { once: true });
        });
        signal?.removeEventListener("abort", aborted);
        resolve = null;
      }
      pending = false;
    },
  };
}

export async function* followSession(
  deps: SessionViewDeps,
  listener: SessionEventsListener,
  sessionId: string,
  afterVersion: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<LiveBatch> {
  const wake = wakeSignal();
  const unsubscribe = await listener.subscribe(sessionId, wake.wake);
  try {
    const summarize = (type: string, data: unknown) => deps.store.registry.summarize(type, data);
    const folded = await foldStream({ pool: deps.pool, registry: deps.store.registry }, progressFold, sessionId, LATEST_VERSION);
    const fallbackState = (await deps.prisma.session.findUnique({ where: { id: sessionId }, select: { state: true } }))?.state ?? "unknown";
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
      const fresh = await deps.store.readStream(sessionId, { fromVersion: progress.task.version + 1 });
      if (fresh.length === 0) continue;
      progress = foldProgress(fresh, progress);
      yield await batch(fresh);
    }
  } finally {
    unsubscribe();
  }
}
