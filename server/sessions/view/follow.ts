// A live session view: after subscribing to the shared listener, the session's history is
// read once and folded (from the fold this process kept last, ./progress-cache.ts); then every wake-up reads only the events after the last version
// sent and yields them as entries with the updated status. The first batch always comes
// at once (possibly without entries), so a client that reconnects is in sync immediately.
import { toSessionEntry, type SessionEntry } from "./entries";
import type { SessionEventsListener } from "./listener";
import { namedEntries, type SessionViewDeps } from "./load";
import { foldProgress, statusOf, type SessionProgress, type SessionStatus } from "./progress";
import type { RecordedEvent } from "../../events/types";
import { forgetProgress, recalledProgress, rememberProgress } from "./progress-cache";

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
    // From the latest fold this process kept (the page's render made it a moment ago), else
    // from the start: only what came after it is read and folded (./progress-cache.ts).
    const kept = recalledProgress(sessionId);
    const keptVersion = kept?.progress.task.version ?? 0;
    const [read, session] = await Promise.all([
      // With a fold kept, from its last event on (read again: still the same event, the fold holds).
      deps.store.readStream(sessionId, kept ? { fromVersion: Math.min(keptVersion, afterVersion + 1) } : {}),
      deps.prisma.session.findUnique({ where: { id: sessionId }, select: { state: true } }),
    ]);
    let history: RecordedEvent[];
    let progress: SessionProgress;
    if (kept && read.find((e) => e.version === keptVersion)?.eventId === kept.lastEventId) {
      history = read;
      progress = foldProgress(
        read.filter((e) => e.version > keptVersion),
        kept.progress,
      );
    } else {
      if (kept) forgetProgress(sessionId);
      history = kept ? await deps.store.readStream(sessionId) : read;
      progress = foldProgress(history);
    }
    const fallbackState = session?.state ?? "unknown";
    rememberProgress(sessionId, progress, history.at(-1));
    const known = new Set<string>();
    const batch = async (events: typeof history): Promise<LiveBatch> => {
      const named = await namedEntries(
        deps,
        events.map((e) => toSessionEntry(e, summarize)),
      );
      // Each batch sends the names the client has not had yet.
      const names = Object.fromEntries(Object.entries(named.names).filter(([label]) => !known.has(label)));
      Object.keys(names).forEach((label) => known.add(label));
      return { version: progress.task.version, status: statusOf(progress, fallbackState), entries: named.entries, names };
    };
    yield await batch(history.filter((e) => e.version > afterVersion));
    while (!signal?.aborted) {
      await wake.wait(signal);
      if (signal?.aborted) break;
      const fresh = await deps.store.readStream(sessionId, { fromVersion: progress.task.version + 1 });
      if (fresh.length === 0) continue;
      progress = foldProgress(fresh, progress);
      rememberProgress(sessionId, progress, fresh.at(-1));
      yield await batch(fresh);
    }
  } finally {
    unsubscribe();
  }
}
