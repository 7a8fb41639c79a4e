// fork_ms: store.fork of a 10-event parent and of a 100,000-event parent (built with batch
// appends), forking at the parent's head; the median of several forks each.
import { performance } from "node:perf_hooks";
import type { EventStore } from "../../server/events/store";
import type { Measurement } from "../lib/context";
import { benchActor, createSessions, messageEvents, uniqueStreamId, type StreamCursor } from "../lib/fixtures";
import { median, round } from "../lib/percentiles";

const FORKS = 7;
const BUILD_BATCH = 1_000;

async function grow(store: EventStore, stream: StreamCursor, total: number): Promise<void> {
  while (stream.version < total) {
    const n = Math.min(BUILD_BATCH, total - stream.version);
    const r = await store.append(stream.id, stream.version, messageEvents(n, "fork parent"), { actor: benchActor });
    stream.version = r.version;
  }
}

async function forkTimes(store: EventStore, parent: StreamCursor): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i <= FORKS; i++) {
    const childId = uniqueStreamId("fork-child");
    const t0 = performance.now();
    await store.fork({
      parentId: parent.id,
      atVersion: parent.version,
      childId,
      event: {
        type: "SessionForked",
        data: { parentId: parent.id, atVersion: parent.version, reason: "manual", title: `fork ${i}`, workflow: "bench", state: "open" },
      },
      metadata: { actor: benchActor },
    });
    if (i > 0) times.push(performance.now() - t0); // the first fork warms the statements
  }
  return times;
}

export const fork: Measurement = {
  name: "fork",
  keys: ["fork_ms"],
  async run(ctx) {
    const [small, big] = await createSessions(ctx.store, 2, "fork-parent");
    await grow(ctx.store, small!, 10);
    const t0 = performance.now();
    await grow(ctx.store, big!, 100_000);
    const buildMs = Math.round(performance.now() - t0);
    ctx.log(`fork: built a 100,000-event parent in ${buildMs} ms`);
    const smallTimes = await forkTimes(ctx.store, small!);
    const bigTimes = await forkTimes(ctx.store, big!);
    ctx.note("fork", {
      forks_each: FORKS,
      build_100000_ms: buildMs,
      build_events_per_s: Math.round((100_000 * 1000) / buildMs),
      parent_10_all: smallTimes.map((t) => round(t)),
      parent_100000_all: bigTimes.map((t) => round(t)),
    });
    return { fork_ms: { parent_10: median(smallTimes), parent_100000: median(bigTimes) } };
  },
};
