// Ending an agent's whole process tree. Agent processes are spawned detached, so each one
// leads its own process group and everything it starts (unless it calls setsid) shares that
// group: signalling the group reaches grandchildren that outlive their parent.

/** How long a group gets to exit after SIGTERM before SIGKILL. */
export const KILL_GRACE_MS = 500;

/**
 * Sends `signal` to every process in the group `pgid`; false when it could not (the group is
 * gone, or is not ours to signal). Never throws: it runs from timers and exit hooks.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the group now, SIGKILL to whatever is left of it after `graceMs`. */
export function terminateProcessGroup(pgid: number, graceMs = KILL_GRACE_MS): void {
  if (!signalProcessGroup(pgid, "SIGTERM")) return;
  // unref: a pending SIGKILL must not keep a finishing runner alive.
  setTimeout(() => signalProcessGroup(pgid, "SIGKILL"), graceMs).unref();
}

// Groups still running when this process exits (a crash, process.exit) are killed rather
// than left behind: detached children are not cleaned up by Node itself.
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Remembers `pgid` until the returned function is called; kills it if this process exits first. */
export function trackProcessGroup(pgid: number): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const group of liveGroups) signalProcessGroup(group, "SIGKILL");
    });
  }
  liveGroups.add(pgid);
  return () => liveGroups.delete(pgid);
}
