// timeline_first_page_ms and state_at_position_ms on one 10,000-event review-loop session:
// the first page (100 entries) of its timeline, the state folded at positions 5,000 and
// 10,000 (store.stateAt with the engine's evolve: read up to the version, fold, nothing
// re-run), and the whole replay.at procedure (fold + round + timeline window + landmarks)
// at the end. Medians of repeated reads after one warm-up read each.
// Replay from snapshots (server/events/fold-read.ts): the state at 10,000 with the task
// fold, cold (its snapshots deleted before each read: it folds all and keeps one) and warm;
// against Emmett's aggregateStream of a copy of the same events with the same evolve, in
// alternating rounds; and the first timeline page of a 100,000-event session (bulk-built).
import { performance } from "node:perf_hooks";
import { readTimeline } from "../../server/events/timeline";
import { replayAt } from "../../server/sessions/replay";
import { evolve, initialTaskState, startedTask, taskFold, type TaskState } from "../../server/task-engine";
import { foldStreamAt } from "../../server/events/fold-read";
import { bulkTaskSession } from "../lib/bulk-session";
import { openEmmettReplayPeer } from "../peers/emmett-aggregate";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { timed } from "../lib/timing";
import { percentiles, round } from "../lib/percentiles";
import { longTaskSession } from "../lib/task-fixtures";

const EVENTS = 10_000;
const READS = 15;
const LONG_EVENTS = 100_000;
const PEER_ROUNDS = 4;
const READS_PER_ROUND = 6;

export const replayReads: Measurement = {
  name: "replay_reads",
  keys: [
    "timeline_first_page_ms",
    "state_at_position_ms",
    "state_at_10000_snapshot_ms",
    "state_at_10000_vs_emmett_ms",
    "timeline_first_page_100k_ms",
  ],
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

    // From snapshots: cold (none kept yet: the read folds everything and keeps the one at 10,000), then warm.
    const dropSnapshots = () => ctx.pool.query("DELETE FROM stream_snapshots WHERE stream_id = $1", [sessionId]);
    const coldTimes: number[] = [];
    for (let i = 0; i < READS; i++) {
      await dropSnapshots();
      const t = performance.now();
      await ctx.store.stateAt(sessionId, EVENTS, taskFold);
      coldTimes.push(performance.now() - t);
    }
    const cold = percentiles(coldTimes);
    const warm = percentiles(await timed(READS * 2, () => ctx.store.stateAt(sessionId, EVENTS, taskFold)));
    // The longest tail: one event short of a snapshot (999 events after the one at 9,000).
    const tail = percentiles(await timed(READS, () => ctx.store.stateAt(sessionId, EVENTS - 1, taskFold)));
    const leanDeps = { pool: ctx.pool, registry: ctx.store.registry };
    const lean = percentiles(await timed(READS, () => foldStreamAt(leanDeps, taskFold, sessionId, EVENTS, { snapshots: false })));
    const fromSnapshot = await ctx.store.stateAt(sessionId, EVENTS, taskFold);
    if (
      JSON.stringify(startedTask(fromSnapshot)?.thread) !== JSON.stringify(startedTask(folded)?.thread) ||
      fromSnapshot.fsm !== folded.fsm
    ) {
      throw new Error("replay_reads: the state from snapshots differs from the full fold");
    }

    // Emmett's aggregateStream over a copy of the same events, alternating with ours in rounds.
    const peer = await openEmmettReplayPeer(ctx.url);
    const peerSamples = { catcafe: [] as number[], emmett: [] as number[], lean: [] as number[] };
    let emmettState: TaskState | undefined;
    try {
      const copied = (await ctx.store.readStream(sessionId)).map((e) => ({ type: e.type, data: e.data, metadata: e.metadata }));
      const emmettStream = await peer.copyStream(copied);
      emmettState = await peer.aggregate(emmettStream, evolve, initialTaskState); // warm-up
      for (let r = 0; r < PEER_ROUNDS; r++) {
        peerSamples.catcafe.push(...(await timed(READS_PER_ROUND, () => ctx.store.stateAt(sessionId, EVENTS, taskFold))));
        peerSamples.emmett.push(...(await timed(READS_PER_ROUND, () => peer.aggregate(emmettStream, evolve, initialTaskState))));
        peerSamples.lean.push(
          ...(await timed(READS_PER_ROUND, () => foldStreamAt(leanDeps, taskFold, sessionId, EVENTS, { snapshots: false }))),
        );
      }
    } finally {
      await peer.close();
    }
    const vsCatcafe = percentiles(peerSamples.catcafe);
    const vsEmmett = percentiles(peerSamples.emmett);
    const vsLean = percentiles(peerSamples.lean);

    // A 100,000-event session's first timeline page.
    const tLong = performance.now();
    const longId = await bulkTaskSession(ctx.pool, ctx.store.registry, benchActor, LONG_EVENTS);
    const longBuildMs = Math.round(performance.now() - tLong);
    ctx.log(`replay_reads: bulk-built a ${LONG_EVENTS}-event session in ${longBuildMs} ms`);
    // With statistics that know one stream is this long (the case where plans go wrong: store.ts READ_STREAM_SQL).
    await ctx.pool.query("ANALYZE events");
    const longFirstPage = percentiles(await timed(READS * 2, () => readTimeline(ctx.pool, longId, { afterVersion: 0, limit: 100 })));
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
      state_at_10000_snapshot: { cold, warm, at_9999_tail_999: tail, lean_no_snapshot: lean },
      state_at_10000_vs_emmett: { catcafe: vsCatcafe, emmett: vsEmmett, catcafe_no_snapshot: vsLean, rounds: PEER_ROUNDS },
      emmett_folded_thread_length: emmettState ? (startedTask(emmettState)?.thread.length ?? 0) : 0,
      timeline_first_page_100k: { ...longFirstPage, build_ms: longBuildMs },
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
      state_at_10000_snapshot_ms: {
        warm_p50: warm.p50,
        warm_p95: warm.p95,
        cold_p50: cold.p50,
        cold_p95: cold.p95,
        at_9999_p50: tail.p50,
        lean_no_snapshot_p50: lean.p50,
        n: warm.n,
      },
      state_at_10000_vs_emmett_ms: {
        catcafe: vsCatcafe.p50,
        emmett: vsEmmett.p50,
        ratio: round(vsCatcafe.p50 / vsEmmett.p50, 3),
        catcafe_p95: vsCatcafe.p95,
        emmett_p95: vsEmmett.p95,
        catcafe_no_snapshot: vsLean.p50,
        rounds: PEER_ROUNDS,
      },
      timeline_first_page_100k_ms: { p50: longFirstPage.p50, p95: longFirstPage.p95, n: longFirstPage.n, build_ms: longBuildMs },
    };
  },
};
