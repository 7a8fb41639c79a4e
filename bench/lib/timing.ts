// Time-boxed loops and small waiting helpers for the measurements.
import { performance } from "node:perf_hooks";

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface Throughput {
  /** Units done (events or rows), not calls. */
  units: number;
  calls: number;
  elapsedMs: number;
  perSecond: number;
}

/**
 * Calls `op` back to back (never concurrently) until `durationMs` has passed; `op` returns
 * how many units it did. The rate counts only complete calls over their real elapsed time.
 */
export async function runFor(durationMs: number, op: (call: number) => Promise<number>): Promise<Throughput> {
  const start = performance.now();
  let units = 0;
  let calls = 0;
  while (performance.now() - start < durationMs) {
    units += await op(calls);
    calls++;
  }
  const elapsedMs = performance.now() - start;
  return { units, calls, elapsedMs, perSecond: Math.round((units * 1000) / elapsedMs) };
}

/** Several time-boxed runs of the same operation, as one. */
export function combine(parts: readonly Throughput[]): Throughput {
  const units = parts.reduce((s, p) => s + p.units, 0);
  const calls = parts.reduce((s, p) => s + p.calls, 0);
  const elapsedMs = parts.reduce((s, p) => s + p.elapsedMs, 0);
  return { units, calls, elapsedMs, perSecond: Math.round((units * 1000) / elapsedMs) };
}

/** `reads` timings (ms) of `op`, one after another, after one warm-up call (plans, caches). */
export async function timed(reads: number, op: () => Promise<unknown>): Promise<number[]> {
  await op();
  const times: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t0 = performance.now();
    await op();
    times.push(performance.now() - t0);
  }
  return times;
}

/** Polls `probe` every `intervalMs` until it returns true; throws after `timeoutMs`. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number, intervalMs = 2): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Samples of `op` in two modes, `pairs` pairs after `warmUp` runs of each, the pair's order
 * swapped every time: whatever else loads the machine lands on both modes alike.
 */
export async function alternating<M extends string>(
  modes: readonly [M, M],
  pairs: number,
  warmUp: number,
  op: (mode: M) => Promise<number>,
): Promise<Record<M, number[]>> {
  const [a, b] = modes;
  for (const mode of modes) for (let i = 0; i < warmUp; i++) await op(mode);
  const samples = { [a]: [], [b]: [] } as unknown as Record<M, number[]>;
  for (let pair = 0; pair < pairs; pair++) {
    for (const mode of pair % 2 === 0 ? [a, b] : [b, a]) samples[mode].push(await op(mode));
  }
  return samples;
}
