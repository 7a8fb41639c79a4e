// Deadlines as epoch milliseconds, for agent calls and child processes alike.

/** setTimeout's largest delay; longer deadlines re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fn` at epoch-ms `time` (re-arming past setTimeout's limit); returns a canceller. */
export function atTime(time: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const remaining = time - Date.now();
    // Written as "not after" so that a NaN time fires at once rather than never.
    if (!(remaining > 0)) return fn();
    timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
  };
  arm();
  return () => clearTimeout(timer);
}
