// timeline_first_page_ms and state_at_position_ms on one 10,000-event review-loop session:
// the first page (100 entries) of its timeline, the state folded at positions 5,000 and
// 10,000 (store.stateAt with the engine's evolve: read up to the version, fold, nothing
// re-run), and the whole replay.at procedure (fold + round + timeline window + landmarks)
// at the end. Medians of repeated reads after one warm-up read each.
import { performance } from "node:perf_hooks";
import { readTimeline } from "../../server/events/timeline";
import { replayAt } from "../../server/sessions/replay";
import { evolve, initialTaskState, startedTask } from "../../server/workflow/engine";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { percentiles, round } from "../lib/percentiles";
import { longTaskSession } from "../lib/task-fixtures";

const EVENTS = 10_000;
const READS = 15;

async function timed(reads: number, op: () => Promise<unknown>): Promise<number[]> {
  await op(); // warm-up: plans, caches
  const times: number[] = [];
  for (let i = 0; i < reads; i++) {
    const t0 = performance.now();
    await op();
    times.push(performance.now() - t0);
  }
  return times;
}

export const replayReads: Measurement = {
  name: "replay_reads",
  keys: ["timeline_first_page_ms", "state_at_position_ms"],
  async run(ctx) {
    const t0 = performance.now();
    const sessionId = await longTaskSession(ctx.store, benchActor, EVENTS);
    const buildMs = Math.round(performance.now() - t0);
    const bytes = await ctx.pool.query<{ data: string; summary: string }>(
      "SELECT sum(pg_column_size(data))::text AS data, sum(pg_column_size(summary))::text AS summary FROM events WHERE stream_id = $1",
      [sessionId],
    );
    ctx.log(`replay_reads: built a ${EVENTS}-event session in ${buildMs} ms`);

    const firstPage = percentiles(await timed(READS * 2, () => readTimeline(ctx.pool, sessionId, { afterVersion: 0, limit: 100 })));
    const lastPage = percentiles(await timed(READS, () => readTimeline(ctx.pool, sessionId, { afterVersion: EVENTS - 100, limit: 100 })));
    const atMid = percentiles(await timed(READS, () => ctx.store.stateAt(sessionId, EVENTS / 2, evolve, initialTaskState)));
    const atEnd = percentiles(await timed(READS, () => ctx.store.stateAt(sessionId, EVENTS, evolve, initialTaskState)));
    const replay = percentiles(
      await timed(READS, () =>
        replayAt({ store: ctx.store, pool: ctx.pool }, { sessionId, version: EVENTS, timelineLimit: 80, ahead: 40 }),
      ),
    );
    const folded = await ctx.store.stateAt(sessionId, EVENTS, evolve, initialTaskState);
    ctx.note("replay_reads", {
      events: EVENTS,
      build_ms: buildMs,
      data_bytes: Number(bytes.rows[0]?.data ?? 0),
      summary_bytes: Number(bytes.rows[0]?.summary ?? 0),
      timeline_first_page: firstPage,
      timeline_last_page: lastPage,
      state_at_5000: atMid,
      state_at_10000: atEnd,
      replay_at_10000: replay,
      folded_iteration: startedTask(folded)?.iteration ?? 0,
      folded_thread_length: startedTask(folded)?.thread.length ?? 0,
      shape:
        "rounds of 6+3 streamed chunks, build output (2,000-char preview), commit, verdict, failing test, a message every 4th round; step lifecycle events left out",
    });
    return {
      timeline_first_page_ms: { p50: firstPage.p50, p95: firstPage.p95, n: firstPage.n, last_page_p50: lastPage.p50 },
      state_at_position_ms: {
        at_5000_p50: atMid.p50,
        at_10000_p50: atEnd.p50,
        at_10000_p95: atEnd.p95,
        replay_at_10000_p50: round(replay.p50),
      },
    };
  },
};
