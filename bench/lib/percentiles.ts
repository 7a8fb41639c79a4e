// Percentiles of latency samples (linear interpolation between closest ranks, the
// numpy default), rounded for the report. Shared by every latency measurement.
export interface LatencySummary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** The q-quantile (0..1) of values already sorted ascending. */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (sorted.length - 1) * q;
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

export function percentiles(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) throw new Error("percentiles: no samples");
  const sorted = [...samples].sort((x, y) => x - y);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    n: sorted.length,
    p50: round(quantile(sorted, 0.5)),
    p95: round(quantile(sorted, 0.95)),
    p99: round(quantile(sorted, 0.99)),
    max: round(sorted.at(-1)!),
    mean: round(sum / sorted.length),
  };
}

export function median(samples: readonly number[]): number {
  return percentiles(samples).p50;
}

export { round };
