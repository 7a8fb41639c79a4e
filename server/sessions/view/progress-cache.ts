// The latest folded progress of the sessions viewed recently in this web process. A session
// page's server render folds the session's whole history; the live subscription the page
// opens a moment later starts from that fold and reads only the events after it, instead of
// reading and folding the whole history again before its first batch (docs/scaling.md,
// "First output and live paint"). Folds are immutable values of a stream whose events never
// change, so a fold at version v stays true at v; a reader folds what came after it.
import type { SessionProgress } from "./progress";

/** Sessions kept: a few hundred folds, each the size of a session's status. */
const MAX_SESSIONS = 256;

const shared = globalThis as typeof globalThis & { __catcafeSessionProgress?: Map<string, SessionProgress> };

/** One map per process: the page's render and the API's route handlers are bundled apart. */
function folds(): Map<string, SessionProgress> {
  return (shared.__catcafeSessionProgress ??= new Map());
}

/** Keeps `progress` as the session's latest fold, unless a later one is kept already. */
export function rememberProgress(sessionId: string, progress: SessionProgress): void {
  const map = folds();
  const kept = map.get(sessionId);
  if (kept && kept.task.version >= progress.task.version) return;
  map.delete(sessionId);
  map.set(sessionId, progress);
  if (map.size > MAX_SESSIONS) map.delete(map.keys().next().value!);
}

/** The latest fold kept for the session, if any (and it becomes the most recently used). */
export function recalledProgress(sessionId: string): SessionProgress | null {
  const map = folds();
  const kept = map.get(sessionId);
  if (!kept) return null;
  map.delete(sessionId);
  map.set(sessionId, kept);
  return kept;
}

/** Forgets every fold (tests). */
export function forgetProgress(): void {
  folds().clear();
}
