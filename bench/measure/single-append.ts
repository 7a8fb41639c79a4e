// append_single_per_s vs raw_insert_single_per_s: one event per transaction, sequential.
// Also counts LISTENing connections while the appends run (each append NOTIFYs).
import type { Queryable } from "../../server/db/pool";
import { measureAppendVsRaw } from "../lib/append-vs-raw";
import type { Measurement } from "../lib/context";

const DURATION_MS = 2_500;

/**
 * Postgres has no view of other sessions' LISTENs; a listener connection sits idle with
 * `LISTEN ...` as its last statement (the runner's listener does nothing else), so count those.
 */
export async function countListeners(db: Queryable): Promise<number> {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN %'`,
  );
  return r.rows[0]?.n ?? 0;
}

export const singleAppend: Measurement = {
  name: "single_append",
  keys: ["append_single_per_s", "raw_insert_single_per_s", "append_vs_raw_single_ratio", "notify_listeners"],
  async run(ctx) {
    const listeners: number[] = [];
    const sampleListeners = async () => {
      listeners.push(await countListeners(ctx.pool));
    };
    const r = await measureAppendVsRaw(ctx, { batchSize: 1, durationMs: DURATION_MS, label: "single", beforeAppendSlice: sampleListeners });
    ctx.note("single_append", {
      append_slices_per_s: r.appendSlicesPerS,
      raw_slices_per_s: r.rawSlicesPerS,
      append_calls: r.append.calls,
      raw_statements: r.raw.calls,
      duration_ms: Math.round(r.append.elapsedMs),
    });
    return {
      append_single_per_s: r.append.perSecond,
      raw_insert_single_per_s: r.raw.perSecond,
      append_vs_raw_single_ratio: r.ratio,
      notify_listeners: Math.max(...listeners),
    };
  },
};
