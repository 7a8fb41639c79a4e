// Tallies what a group of connections (by application_name) waits on while they run, from
// pg_stat_activity sampled every few ms: each wait event's share of the active samples
// ("CPU" when none). Shows where concurrent writers queue, e.g. `Lock:object` for the
// database-wide lock a committing transaction holds from queueing its NOTIFYs until its
// commit is done, `IO:WalSync` / `LWLock:WALWrite` for the WAL flush.
import type { Queryable } from "../../server/db/pool";
import { sleep } from "./timing";

export interface WaitTally {
  /** Runs `fn` while sampling; the samples add up over every call. */
  during<T>(fn: () => Promise<T>): Promise<T>;
  /** Each wait event's share of all active samples so far, largest first (3 decimals). */
  shares(): Record<string, number>;
}

export function waitTally(db: Queryable, applicationName: string, intervalMs = 10): WaitTally {
  const counts = new Map<string, number>();
  let total = 0;
  const sampleUntil = async (done: () => boolean) => {
    while (!done()) {
      const r = await db.query<{ wait: string; n: number }>(
        `SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') AS wait, count(*)::int AS n
         FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' GROUP BY 1`,
        [applicationName],
      );
      for (const row of r.rows) {
        counts.set(row.wait, (counts.get(row.wait) ?? 0) + row.n);
        total += row.n;
      }
      await sleep(intervalMs);
    }
  };
  return {
    async during(fn) {
      let finished = false;
      const sampling = sampleUntil(() => finished);
      try {
        return await fn();
      } finally {
        finished = true;
        await sampling;
      }
    },
    shares() {
      const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1]);
      return Object.fromEntries(sorted.map(([wait, n]) => [wait, Math.round((n * 1000) / Math.max(total, 1)) / 1000]));
    },
  };
}
