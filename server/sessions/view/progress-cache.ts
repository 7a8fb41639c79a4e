// The latest folded progress of the sessions viewed recently in this web process. A session
// page's server render folds the session's whole history; the live subscription the page
// opens a moment later starts from that fold and reads only the events after it, instead of
// reading and folding the whole history again before its first batch (docs/scaling.md,
// "First output and live paint"). Folds are immutable values of a stream whose events never
// change, so a fold at version v stays true at v; a reader folds what came after it. Each
// fold keeps the id of the last event in it, and a reader checks that event is still the
// one at that version (one more row read), so a database replaced under a running web
// process (`npm run restore -- --force`) is never read through a fold of the old one.
import type { RecordedEvent } from "../../events/types";
import type { SessionProgress } from "./progress";

/** Sessions kept: a few hundred folds, each the size of a session's status. */
const MAX_SESSIONS = 256;

export interface KeptFold {
  progress: SessionProgress;
  /** The event at `progress.task.version`, the last one folded. */
  lastEventId: string;
}

const shared = globalThis as typeof globalThis & { __catcafeSessionProgress?: Map<string, KeptFold> };

/** One map per process: the page's render and the API's route handlers are bundled apart. */
function folds(): Map<string, KeptFold> {
  return (shared.__catcafeSessionProgress ??= new Map());
}

/** Keeps `progress`, the fold of events up to `last`, as the session's latest, unless a later one is kept already. */
export function rememberProgress(sessionId: string, progress: SessionProgress, last: RecordedEvent | undefined): void {
  if (!last || last.version !== progress.task.version) return;
  const map = folds();
  const kept = map.get(sessionId);
  if (kept && kept.progress.task.version >= progress.task.version) return;
  map.delete(sessionId);
  map.set(sessionId, { progress, lastEventId: last.eventId });
  if (map.size > MAX_SESSIONS) map.delete(map.keys().next().value!);
}

/** The latest fold kept for the session, if any (and it becomes the most recently used). */
export function recalledProgress(sessionId: string): KeptFold | null {
  const map = folds();
  const kept = map.get(sessionId);
  if (!kept) return null;
  map.delete(sessionId);
  map.set(sessionId, kept);
  return kept;
}

/** Forgets the session's fold (it did not match the stream), or every fold (tests). */
export function forgetProgress(sessionId?: string): void {
  if (sessionId === undefined) folds().clear();
  else folds().delete(sessionId);
}
