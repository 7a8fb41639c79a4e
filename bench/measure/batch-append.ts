// append_batch_per_s vs raw_insert_batch_per_s: events per second with 100 events per
// append, against one 100-row multi-row INSERT per statement.
import { measureAppendVsRaw } from "../lib/append-vs-raw";
import type { Measurement } from "../lib/context";

const BATCH = 100;
const DURATION_MS = 2_500;

export const batchAppend: Measurement = {
  name: "batch_append",
  keys: ["append_batch_per_s", "raw_insert_batch_per_s", "append_vs_raw_batch_ratio"],
  async run(ctx) {
    const r = await measureAppendVsRaw(ctx, { batchSize: BATCH, durationMs: DURATION_MS, label: "batch" });
    ctx.note("batch_append", {
      batch_size: BATCH,
      append_slices_per_s: r.appendSlicesPerS,
      raw_slices_per_s: r.rawSlicesPerS,
      append_calls: r.append.calls,
      raw_statements: r.raw.calls,
      duration_ms: Math.round(r.append.elapsedMs),
    });
    return {
      append_batch_per_s: r.append.perSecond,
      raw_insert_batch_per_s: r.raw.perSecond,
      append_vs_raw_batch_ratio: r.ratio,
    };
  },
};
