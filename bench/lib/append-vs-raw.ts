// Event append throughput beside a bare INSERT of rows of the same shape, measured in the
// same run for the same duration: `store.append` (own transaction: stream lock, insert,
// projections, NOTIFY) against one autocommit INSERT statement per batch. The two alternate
// in short slices, so that a slow patch of the disk (fsync time varies a lot on a VM) hits
// both sides alike instead of skewing the ratio.
import type { BenchContext } from "./context";
import { benchActor, createSessions, messageEvents, uniqueStreamId, type StreamCursor } from "./fixtures";
import { round } from "./percentiles";
import { createRawTable, insertRawRows } from "./raw-table";
import { combine, runFor, type Throughput } from "./timing";

const STREAMS = 4;
const WARMUP_MS = 250;
const SLICES = 6;

export interface AppendVsRaw {
  append: Throughput;
  raw: Throughput;
  ratio: number;
  /** Rate of each slice, to judge the noise of the figure. */
  appendSlicesPerS: number[];
  rawSlicesPerS: number[];
}

export async function measureAppendVsRaw(
  ctx: BenchContext,
  opts: { batchSize: number; durationMs: number; label: string; beforeAppendSlice?: () => Promise<void> },
): Promise<AppendVsRaw> {
  const { batchSize, label } = opts;
  const streams = await createSessions(ctx.store, STREAMS, label);
  const rawStreams: StreamCursor[] = Array.from({ length: STREAMS }, () => ({ id: uniqueStreamId(`raw-${label}`), version: 0 }));
  await createRawTable(ctx.pool);

  // Round-robin over a few streams, each append with the exact expected version.
  const appendBatch = async (call: number) => {
    const s = streams[call % streams.length]!;
    const r = await ctx.store.append(s.id, s.version, messageEvents(batchSize, label), { actor: benchActor });
    s.version = r.version;
    return batchSize;
  };
  const rawBatch = async (call: number) => {
    const s = rawStreams[call % rawStreams.length]!;
    await insertRawRows(ctx.pool, s.id, s.version + 1, batchSize, label);
    s.version += batchSize;
    return batchSize;
  };

  await runFor(WARMUP_MS, appendBatch);
  await runFor(WARMUP_MS, rawBatch);
  const sliceMs = opts.durationMs / SLICES;
  const appendSlices: Throughput[] = [];
  const rawSlices: Throughput[] = [];
  const appendSlice = async () => {
    await opts.beforeAppendSlice?.();
    appendSlices.push(await runFor(sliceMs, appendBatch));
  };
  const rawSlice = async () => {
    rawSlices.push(await runFor(sliceMs, rawBatch));
  };
  for (let i = 0; i < SLICES; i++) {
    if (i % 2 === 0) {
      await appendSlice();
      await rawSlice();
    } else {
      await rawSlice();
      await appendSlice();
    }
  }
  const append = combine(appendSlices);
  const raw = combine(rawSlices);
  ctx.log(`${label}: append ${append.perSecond}/s (${append.calls} calls), raw ${raw.perSecond}/s (${raw.calls} statements)`);
  return {
    append,
    raw,
    ratio: round(append.perSecond / raw.perSecond, 3),
    appendSlicesPerS: appendSlices.map((t) => t.perSecond),
    rawSlicesPerS: rawSlices.map((t) => t.perSecond),
  };
}
