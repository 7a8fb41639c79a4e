// N writers, each looping on its own operation (its own stream) for a fixed time, all at
// once: the throughput of concurrent single-transaction writers. Each writer starts its
// last call before the deadline; the rate is units done over the time until the last one
// finished.
import { performance } from "node:perf_hooks";
import type { Throughput } from "./timing";

export async function runWriters(
  writers: number,
  durationMs: number,
  op: (writer: number, call: number) => Promise<number>,
): Promise<Throughput> {
  const start = performance.now();
  let units = 0;
  let calls = 0;
  const loop = async (writer: number) => {
    for (let call = 0; performance.now() - start < durationMs; call++) {
      // Not `units += await op()`: that reads `units` before the await and loses the other
      // writers' additions made meanwhile.
      const done = await op(writer, call);
      units += done;
      calls++;
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, w) => loop(w)));
  const elapsedMs = performance.now() - start;
  return { units, calls, elapsedMs, perSecond: Math.round((units * 1000) / elapsedMs) };
}
