// read_all_lag_ms: 4 writers append concurrently for ~3 s while one readAll loop follows
// the global checkpoint. For each writer event, lag = when the reader first saw it − when
// its writer's append resolved (commit done), both by performance.now() in this process.
// Also checks that the reader saw every event (readAll must never skip one).
import { performance } from "node:perf_hooks";
import type { GlobalCheckpoint } from "../../server/events/types";
import type { BenchContext, Measurement } from "../lib/context";
import { benchActor, createSessions, messageEvents, type StreamCursor } from "../lib/fixtures";
import { percentiles } from "../lib/percentiles";
import { sleep } from "../lib/timing";

const WRITERS = 4;
const DURATION_MS = 3_000;
/** The reader's pause when a read returns nothing (a tailing poll, not a NOTIFY-woken reader). */
const IDLE_POLL_MS = 1;
const DRAIN_TIMEOUT_MS = 5_000;

async function headCheckpoint(ctx: BenchContext): Promise<GlobalCheckpoint> {
  const r = await ctx.pool.query<{ tx_id: string; position: string }>(
    "SELECT tx_id, position FROM events ORDER BY tx_id DESC, position DESC LIMIT 1",
  );
  const row = r.rows[0];
  return row ? { txId: Number(row.tx_id), position: Number(row.position) } : { txId: 0, position: 0 };
}

export const readAllLag: Measurement = {
  name: "read_all_lag",
  keys: ["read_all_lag_ms"],
  async run(ctx) {
    const streams = await createSessions(ctx.store, WRITERS, "lag");
    const committedAt = new Map<string, number>(); // eventId → writer's append resolved
    const seenAt = new Map<string, number>(); // eventId → reader first saw it
    let writing = true;

    const writer = async (stream: StreamCursor) => {
      const deadline = performance.now() + DURATION_MS;
      while (performance.now() < deadline) {
        const events = messageEvents(1, "lag");
        const r = await ctx.store.append(stream.id, stream.version, events, { actor: benchActor });
        const now = performance.now();
        for (const e of r.events) committedAt.set(e.eventId, now);
        stream.version = r.version;
      }
    };

    const reader = async () => {
      let checkpoint = await headCheckpoint(ctx);
      let reads = 0;
      const drainDeadline = () => performance.now() + DRAIN_TIMEOUT_MS;
      let deadline = Number.POSITIVE_INFINITY;
      for (;;) {
        const page = await ctx.store.readAll(checkpoint, 1000);
        reads++;
        const now = performance.now();
        for (const e of page.events) if (!seenAt.has(e.eventId)) seenAt.set(e.eventId, now);
        checkpoint = page.checkpoint;
        if (!writing) {
          if (deadline === Number.POSITIVE_INFINITY) deadline = drainDeadline();
          const done = [...committedAt.keys()].every((id) => seenAt.has(id));
          if (done || performance.now() > deadline) return reads;
        }
        if (page.events.length === 0) await sleep(IDLE_POLL_MS);
      }
    };

    const readerDone = reader();
    readerDone.catch(() => {}); // awaited below; a writer failure must not leave it unhandled
    try {
      await Promise.all(streams.map(writer));
    } finally {
      writing = false; // the reader drains what is left, then returns
    }
    const reads = await readerDone;

    const lags: number[] = [];
    let unseen = 0;
    let seenBeforeCommitReply = 0;
    for (const [id, commit] of committedAt) {
      const seen = seenAt.get(id);
      if (seen === undefined) {
        unseen++;
        continue;
      }
      if (seen < commit) seenBeforeCommitReply++; // visible before the writer read COMMIT's reply
      lags.push(Math.max(0, seen - commit));
    }
    const s = percentiles(lags);
    ctx.note("read_all_lag", {
      writers: WRITERS,
      events_written: committedAt.size,
      write_events_per_s: Math.round((committedAt.size * 1000) / DURATION_MS),
      reads,
      idle_poll_ms: IDLE_POLL_MS,
      p99: s.p99,
      seen_before_commit_reply: seenBeforeCommitReply,
    });
    return { read_all_lag_ms: { p95: s.p95, p50: s.p50, n: s.n, max: s.max, unseen } };
  },
};
