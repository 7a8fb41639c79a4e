// langgraph_*: Cat Cafe beside LangGraph.js (the PostgreSQL checkpointer) on the same
// PostgreSQL server, LangGraph in a database of its own (../peers/langgraph.ts):
//   - steps: a three-node no-op graph invoked on fresh threads vs three chained no-op steps on
//     fresh sessions (../peers/catcafe-steps.ts, drained by one runner process of concurrency
//     4; LangGraph: 4 invocations at a time in the bench process). The sessions have the
//     product's ids (newSessionId, 14 characters; LangGraph's thread ids are 8–12). Per-step overhead: one
//     session / thread at a time, wall time / 3. Throughput: SESSIONS at once. WAL and
//     statements per step: the whole life of the three steps (Cat Cafe: the first step's
//     scheduling and the drain; LangGraph: the invocation, its input checkpoint included).
//   - latest state: Cat Cafe's state of a 10,000-event session at its head once it has grown
//     by GROWN events (store.stateAt at the latest version with the task fold, warm) vs
//     graph.getState of a thread of THREAD_CHECKPOINTS checkpoints (a step is three events,
//     a super-step one checkpoint).
//   - fork: forkSession of that session at event 5,000 (the domain call: position checked,
//     SessionForked and the continuation appended) vs graph.updateState on the thread's
//     middle checkpoint. Cold: the first fork after a read of the head only (what a person
//     does: opens the session, then forks it); warm: the median of the next ones.
// Rounds alternate; see docs/scaling.md, "LangGraph side by side".
import { performance } from "node:perf_hooks";
import { taskFold } from "../../server/task-engine";
import { forkSession } from "../../server/tasks/fork";
import { newSessionId } from "../../server/tasks/session-ref";
import { LATEST_VERSION } from "../../server/events/fold-read";
import type { BenchContext, Measurement } from "../lib/context";
import type { BenchReportFigures } from "../lib/report";
import { bulkTaskSession } from "../lib/bulk-session";
import { benchActor, createSessions } from "../lib/fixtures";
import { reviewRound } from "../lib/task-fixtures";
import { median, percentiles, round } from "../lib/percentiles";
import { PgCounters, type WindowCounters } from "../lib/pg-counters";
import { timed, waitUntil } from "../lib/timing";
import { noopStepsLeft, scheduleNoopSteps } from "../peers/catcafe-steps";
import { createPeerDatabase, openLangGraphPeer, threadConfig, type LangGraphPeer } from "../peers/langgraph";
import { WorkerFleet } from "../peers/worker-fleet";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import { migrate } from "../../server/db/migrate";

const CONCURRENCY = 4;
const STEPS_PER_SESSION = 3;
const SESSIONS = 300;
const SINGLE = 20;
const ROUNDS = 2;
const EVENTS = 10_000;
const THREAD_CHECKPOINTS = Math.round(EVENTS / 3);
const READS = 40;
const FORKS = 15;
/** Events the long session grows by before its latest state is read (past HEAD_SNAPSHOT_AFTER). */
const GROWN = 150;
const RUN_TIMEOUT_MS = 120_000;
const PEER_DATABASE = "catcafe_bench_langgraph";
/** Cat Cafe's side in a fresh database too, as LangGraph's: not one that every measure before this one wrote to. */
const OWN_DATABASE = "catcafe_bench_side_by_side";

interface Window {
  steps: number;
  ms: number;
  counters: WindowCounters;
  /** CPU of the side's own process over the window (Cat Cafe: the runner process; LangGraph: the bench's, where it runs). */
  clientCpuMs: number;
}

const perStep = (w: Window) => ({
  walBytes: w.counters.walBytes / w.steps,
  statements: w.counters.statements / w.steps,
  perSecond: (w.steps * 1000) / w.ms,
  clientCpuMs: w.clientCpuMs / w.steps,
  postgresCpuMs: w.counters.postgresCpuMs / w.steps,
});

/** CPU (user + system) of this process so far, in ms. */
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Runs `n` tasks, `concurrency` at a time. */
async function pooled(n: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

async function catcafeWindow(ctx: BenchContext, fleet: WorkerFleet, counters: PgCounters, sessions: number): Promise<Window> {
  const heads = await createSessions(ctx.store, sessions, "langgraph-peer", newSessionId);
  await counters.checkpoint();
  const target = fleet.finished() + sessions * STEPS_PER_SESSION;
  const end = await counters.begin();
  const cpu0 = fleet.cpuMs();
  const t0 = performance.now();
  // Scheduled while the runner waits: the scheduling is part of a step's life (LangGraph's
  // invoke writes its input checkpoint too).
  await scheduleNoopSteps(
    ctx.store,
    heads.map((s) => ({ sessionId: s.id, remaining: STEPS_PER_SESSION - 1 })),
    benchActor,
    CONCURRENCY,
  );
  await fleet.waitFinished(target, RUN_TIMEOUT_MS);
  await waitUntil("catcafe: the queue to be empty", async () => (await noopStepsLeft(counters.connection)) === 0, RUN_TIMEOUT_MS, 1);
  const ms = performance.now() - t0;
  const clientCpuMs = fleet.cpuMs() - cpu0;
  return { steps: sessions * STEPS_PER_SESSION, ms, counters: await end(), clientCpuMs };
}

async function langgraphWindow(peer: LangGraphPeer, counters: PgCounters, sessions: number, round: number): Promise<Window> {
  await counters.checkpoint();
  const end = await counters.begin();
  const cpu0 = ownCpuMs();
  const t0 = performance.now();
  await pooled(sessions, CONCURRENCY, (i) => peer.threeNodes.invoke({ steps: 0 }, threadConfig(`t-${round}-${sessions}-${i}`)));
  const ms = performance.now() - t0;
  const clientCpuMs = ownCpuMs() - cpu0;
  return { steps: sessions * STEPS_PER_SESSION, ms, counters: await end(), clientCpuMs };
}

/** One session / thread at a time: wall time of its three steps / 3, per sample. */
async function singles(run: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i <= SINGLE; i++) {
    const t0 = performance.now();
    await run(i);
    if (i > 0) out.push((performance.now() - t0) / STEPS_PER_SESSION);
  }
  return out;
}

async function catcafeSingle(ctx: BenchContext, fleet: WorkerFleet): Promise<number[]> {
  const sessions = await createSessions(ctx.store, SINGLE + 1, "langgraph-single", newSessionId);
  return singles(async (i) => {
    const target = fleet.finished() + STEPS_PER_SESSION;
    await scheduleNoopSteps(ctx.store, [{ sessionId: sessions[i]!.id, remaining: STEPS_PER_SESSION - 1 }], benchActor);
    await fleet.waitFinished(target, RUN_TIMEOUT_MS);
  });
}

/** A thread of THREAD_CHECKPOINTS checkpoints; returns its id and the config of its middle checkpoint. */
async function longThread(peer: LangGraphPeer): Promise<{ threadId: string; middle: { configurable: Record<string, unknown> } }> {
  const threadId = `long-${Date.now()}`;
  // Super-steps: the input, then one per loop step.
  await peer.loop.invoke(
    { steps: 0, target: THREAD_CHECKPOINTS - 1 },
    { ...threadConfig(threadId), recursionLimit: THREAD_CHECKPOINTS + 10 },
  );
  const history: { configurable: Record<string, unknown> }[] = [];
  for await (const s of peer.loop.getStateHistory(threadConfig(threadId)))
    history.push(s.config as { configurable: Record<string, unknown> });
  if (history.length < THREAD_CHECKPOINTS) throw new Error(`the long thread has ${history.length} checkpoints, not ${THREAD_CHECKPOINTS}`);
  return { threadId, middle: history[Math.floor(history.length / 2)]! };
}

export const langgraph: Measurement = {
  name: "langgraph",
  keys: ["langgraph_side_by_side"],
  async run(bench) {
    // Both sides start from an empty, freshly made database of their own on the same server: in
    // the bench's shared database, the other measures' rows before this one's made Cat Cafe's
    // side write into reused pages, a full-page image each after the checkpoint (docs/scaling.md,
    // "LangGraph side by side").
    const ownUrl = await createPeerDatabase(bench.url, OWN_DATABASE);
    await migrate(ownUrl, () => {});
    const ownPool = createPool(ownUrl, 10);
    const ctx: BenchContext = { ...bench, url: ownUrl, pool: ownPool, store: createAppEventStore(ownPool) };
    try {
      return await sideBySide(ctx);
    } finally {
      await ownPool.end();
    }
  },
};

async function sideBySide(ctx: BenchContext): Promise<Partial<BenchReportFigures>> {
  const peerUrl = await createPeerDatabase(ctx.url, PEER_DATABASE);
  // The counters before either side connects: they turn statement tracking on for connections
  // opened from then on (a connection opened earlier went uncounted: a quarter of a side's
  // statements in some runs).
  const ours = await PgCounters.open(ctx.url);
  const theirs = await PgCounters.open(peerUrl);
  const peer = await openLangGraphPeer(peerUrl, CONCURRENCY);
  const fleet = await WorkerFleet.spawn("catcafe", ctx.url, 1, CONCURRENCY);
  try {
    await fleet.start(1);
    // Warm-up: both paths compiled and connections open.
    await catcafeWindow(ctx, fleet, ours, 20);
    await langgraphWindow(peer, theirs, 20, -1);
    const windows = { catcafe: [] as Window[], langgraph: [] as Window[] };
    const single = { catcafe: [] as number[], langgraph: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (["catcafe", "langgraph"] as const) : (["langgraph", "catcafe"] as const);
      for (const side of order) {
        if (side === "catcafe") {
          single.catcafe.push(...(await catcafeSingle(ctx, fleet)));
          windows.catcafe.push(await catcafeWindow(ctx, fleet, ours, SESSIONS));
        } else {
          single.langgraph.push(...(await singles((i) => peer.threeNodes.invoke({ steps: 0 }, threadConfig(`s-${r}-${i}`)))));
          windows.langgraph.push(await langgraphWindow(peer, theirs, SESSIONS, r));
        }
      }
    }
    await fleet.stop(1);

    // A long session and a long thread.
    const t0 = performance.now();
    const sessionId = await bulkTaskSession(ctx.pool, ctx.store.registry, benchActor, EVENTS);
    const { threadId, middle } = await longThread(peer);
    ctx.log(
      `langgraph: built a ${EVENTS}-event session and a ${THREAD_CHECKPOINTS}-checkpoint thread in ${Math.round(performance.now() - t0)} ms`,
    );
    await ctx.pool.query("VACUUM (ANALYZE) events, streams");
    const lg = new (await import("pg")).default.Client({ connectionString: peerUrl });
    await lg.connect();
    await lg.query("VACUUM (ANALYZE)");
    await lg.end();

    // The head read first (a person opens the session), then the fork at its middle.
    const readHead = () => ctx.store.stateAt(sessionId, LATEST_VERSION, taskFold);
    await readHead();
    const deps = { store: ctx.store, pool: ctx.pool };
    const forkAt = (note: string) => forkSession(deps, { sessionId, atVersion: EVENTS / 2, note }, benchActor);
    const c0 = performance.now();
    await forkAt("cold");
    const catcafeForkCold = performance.now() - c0;
    const l0 = performance.now();
    await peer.loop.updateState(middle, { node: "fork", steps: 0 });
    const langgraphForkCold = performance.now() - l0;
    const forks = { catcafe: [] as number[], langgraph: [] as number[] };
    const reads = { catcafe: [] as number[], langgraph: [] as number[] };
    // Informational: a head 999 events past the nearest snapshot (the most a read folds).
    const offBoundary = await timed(READS, () => ctx.store.stateAt(sessionId, EVENTS - 1, taskFold));
    const snapshotBytes = await ctx.pool.query<{ bytes: number }>(
      "SELECT max(octet_length(state::text))::int AS bytes FROM stream_snapshots WHERE stream_id = $1",
      [sessionId],
    );
    for (let r = 0; r < ROUNDS; r++) {
      forks.catcafe.push(...(await timed(FORKS, () => forkAt(`warm ${r}`))));
      forks.langgraph.push(...(await timed(FORKS, () => peer.loop.updateState(middle, { node: "fork", steps: r }))));
    }
    // At the spacing's 10,000 the head is a snapshot of its own; a session's head is usually
    // past one: the session goes on by some review rounds, then its latest state is read.
    const atSpacing = await timed(READS, readHead);
    let head = EVENTS;
    for (let n = 10_000; head < EVENTS + GROWN; n++)
      head = (await ctx.store.append(sessionId, head, reviewRound(n), { actor: benchActor })).version;
    const g0 = performance.now();
    await readHead();
    const firstAfterGrowth = performance.now() - g0;
    for (let r = 0; r < ROUNDS; r++) {
      reads.catcafe.push(...(await timed(READS, readHead)));
      reads.langgraph.push(...(await timed(READS, () => peer.loop.getState(threadConfig(threadId)))));
    }

    const med = (side: "catcafe" | "langgraph", pick: (w: Window) => number) => median(windows[side].map(pick));
    const pair = (c: number, l: number, digits: number) => ({
      catcafe: round(c, digits),
      langgraph: round(l, digits),
      ratio: round(c / l, 3),
    });
    const throughput = pair(
      med("catcafe", (w) => perStep(w).perSecond),
      med("langgraph", (w) => perStep(w).perSecond),
      0,
    );
    const wal = pair(
      med("catcafe", (w) => perStep(w).walBytes),
      med("langgraph", (w) => perStep(w).walBytes),
      0,
    );
    const statements = pair(
      med("catcafe", (w) => perStep(w).statements),
      med("langgraph", (w) => perStep(w).statements),
      2,
    );
    const cpu = pair(
      med("catcafe", (w) => perStep(w).clientCpuMs + perStep(w).postgresCpuMs),
      med("langgraph", (w) => perStep(w).clientCpuMs + perStep(w).postgresCpuMs),
      3,
    );
    const overhead = pair(median(single.catcafe), median(single.langgraph), 2);
    const fork = pair(median(forks.catcafe), median(forks.langgraph), 2);
    const latest = pair(median(reads.catcafe), median(reads.langgraph), 2);
    const top = (w: Window) => w.counters.top.map((t) => ({ per_step: round(t.calls / w.steps, 3), query: t.query.slice(0, 140) }));
    ctx.note("langgraph", {
      concurrency: CONCURRENCY,
      sessions_per_window: SESSIONS,
      rounds: ROUNDS,
      long_session_events: EVENTS,
      long_thread_checkpoints: THREAD_CHECKPOINTS,
      fork_cold_ms: { catcafe: round(catcafeForkCold, 2), langgraph: round(langgraphForkCold, 2) },
      fork_ms: { catcafe: percentiles(forks.catcafe), langgraph: percentiles(forks.langgraph) },
      latest_state_ms: { catcafe: percentiles(reads.catcafe), langgraph: percentiles(reads.langgraph) },
      catcafe_latest_state: {
        head: head,
        at_10000_p50: percentiles(atSpacing).p50,
        first_read_after_growth_ms: round(firstAfterGrowth, 2),
        definition: `latest_state_ms is read at the head after the session grew by ${GROWN}+ events past 10,000 (the first read after that folds them and keeps the head's state)`,
      },
      catcafe_state_at_9999_ms: percentiles(offBoundary),
      catcafe_snapshot_bytes: snapshotBytes.rows[0]?.bytes ?? null,
      cpu_ms_per_step: {
        ...cpu,
        definition:
          "the side's own process (Cat Cafe: the runner process, from /proc; LangGraph: the bench process it runs in, process.cpuUsage) + PostgreSQL's processes (/proc), over the throughput window, per step; median of the windows",
      },
      per_window: Object.fromEntries(Object.entries(windows).map(([side, ws]) => [side, ws.map(perStep)])),
      top_statements: { catcafe: top(windows.catcafe.at(-1)!), langgraph: top(windows.langgraph.at(-1)!) },
      counted:
        "WAL: pg_current_wal_lsn diff over the window (a VACUUM and a CHECKPOINT before it); statements: pg_stat_statements calls (track=top) of the side's database, BEGIN/COMMIT included; Cat Cafe's window holds the first step's scheduling and the drain, LangGraph's the invocations",
    });
    const figures = {
      langgraph_side_by_side: {
        step_overhead_ms: { ...overhead, target: "informational", met: null },
        throughput_per_s: { ...throughput, target: ">= 1.5", met: throughput.ratio >= 1.5 },
        wal_bytes_per_step: { ...wal, target: "<= 1", met: wal.ratio <= 1 },
        statements_per_step: { ...statements, target: "informational", met: null },
        latest_state_ms: { ...latest, target: "<= 1", met: latest.ratio <= 1 },
        fork_at_middle_ms: { ...fork, target: "<= 1", met: fork.ratio <= 1 },
      },
    };
    ctx.log(`langgraph: ${JSON.stringify(figures.langgraph_side_by_side)}`);
    return figures;
  } finally {
    await fleet.close().catch(() => {});
    await ours.close();
    await theirs.close();
    await peer.close().catch(() => {});
  }
}
