// concurrent_appends: 32 writers at once, each appending one event per transaction to its
// own stream, in four variants on one pool of 32 connections, rotated round by round:
//   catcafe            Cat Cafe's app store, `store.append` (today one NOTIFY per append)
//   raw_insert         a bare autocommit INSERT of the same row shape (bench/lib/raw-table.ts)
//   raw_insert_notify  the same INSERT plus one pg_notify on Cat Cafe's events channel in
//                      the same statement: what the NOTIFY alone costs concurrent writers
//   emmett             Emmett's PostgreSQL event store, `appendToStream`
// Two more raw variants, in the notes only, to tell where the NOTIFY's cost lies:
//   raw_insert_notify_no_listener  raw_insert_notify while nobody LISTENs on the channel
//   raw_insert_async_notify        raw_insert, and after each commit a ring to one
//                                  connection that NOTIFYs the rung streams in batches
// A LISTEN connection on Cat Cafe's events channel is open throughout (but for the
// no-listener rounds), as the web server keeps one in production; it counts the NOTIFYs
// each variant sends. pg_stat_activity is sampled meanwhile to show what writers wait on.
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import type { Measurement } from "../lib/context";
import { runWriters } from "../lib/concurrent-writers";
import { openCoalescingNotifier } from "../lib/coalescing-notifier";
import { openEventsListener } from "../lib/events-listener";
import { benchActor, createSessions, messageEvents, uniqueStreamId, type StreamCursor } from "../lib/fixtures";
import { round } from "../lib/percentiles";
import { createRawTable, insertRawRows } from "../lib/raw-table";
import { combine, type Throughput } from "../lib/timing";
import { waitTally, type WaitTally } from "../lib/wait-sampler";
import { createEmmettStreams, emmettMessages, openEmmettPeer } from "../peers/emmett";

const WRITERS = 32;
const WARMUP_MS = 300;
const ROUNDS = 3;
const ROUND_MS = 1_500;
const WRITERS_APP = "bench-writers";

type Variant = "catcafe" | "raw_insert" | "raw_insert_notify" | "emmett" | "raw_insert_notify_no_listener" | "raw_insert_async_notify";
const VARIANTS: Variant[] = [
  "catcafe",
  "raw_insert",
  "raw_insert_notify",
  "emmett",
  "raw_insert_notify_no_listener",
  "raw_insert_async_notify",
];

export const concurrentAppends: Measurement = {
  name: "concurrent_appends",
  keys: ["concurrent_appends"],
  async run(ctx) {
    const pool = createPool(ctx.url, WRITERS, { applicationName: WRITERS_APP });
    const listener = await openEventsListener(ctx.url);
    const notifier = await openCoalescingNotifier(ctx.url, listener.channel);
    try {
      const store = createAppEventStore(pool);
      const emmett = await openEmmettPeer(ctx.url, pool);
      await createRawTable(ctx.pool);
      const ours = await createSessions(ctx.store, WRITERS, "concurrent");
      const theirs = await createEmmettStreams(emmett, WRITERS, "concurrent");
      const rawCursors = (label: string): StreamCursor[] =>
        Array.from({ length: WRITERS }, () => ({ id: uniqueStreamId(label), version: 0 }));
      const raw = rawCursors("raw-concurrent");
      const rawNotify = rawCursors("raw-notify-concurrent");
      const rawAsync = rawCursors("raw-async-notify-concurrent");
      const notifyingInsert = async (cursors: StreamCursor[], w: number) => {
        const s = cursors[w]!;
        await insertRawRows(pool, s.id, s.version + 1, 1, "concurrent", { notifyChannel: listener.channel });
        s.version++;
        return 1;
      };

      const ops: Record<Variant, (writer: number) => Promise<number>> = {
        catcafe: async (w) => {
          const s = ours[w]!;
          s.version = (await store.append(s.id, s.version, messageEvents(1, "concurrent"), { actor: benchActor })).version;
          return 1;
        },
        raw_insert: async (w) => {
          const s = raw[w]!;
          await insertRawRows(pool, s.id, s.version + 1, 1, "concurrent");
          s.version++;
          return 1;
        },
        raw_insert_notify: (w) => notifyingInsert(rawNotify, w),
        raw_insert_notify_no_listener: (w) => notifyingInsert(rawNotify, w),
        raw_insert_async_notify: async (w) => {
          const s = rawAsync[w]!;
          await insertRawRows(pool, s.id, s.version + 1, 1, "concurrent");
          s.version++;
          notifier.ring(s.id);
          return 1;
        },
        emmett: async (w) => {
          const s = theirs[w]!;
          s.version = await emmett.append(s.name, s.version, emmettMessages(1, "concurrent"));
          return 1;
        },
      };

      const runRound = async (v: Variant, ms: number) => {
        if (v === "raw_insert_notify_no_listener") await listener.pause();
        try {
          return await runWriters(WRITERS, ms, ops[v]);
        } finally {
          if (v === "raw_insert_notify_no_listener") await listener.resume();
        }
      };
      // Warm-up also opens all 32 connections of the pool.
      for (const v of VARIANTS) await runRound(v, WARMUP_MS);
      const notifierSendsBefore = notifier.sends();

      const rounds = Object.fromEntries(VARIANTS.map((v) => [v, [] as Throughput[]])) as Record<Variant, Throughput[]>;
      const notifies = Object.fromEntries(VARIANTS.map((v) => [v, 0])) as Record<Variant, number>;
      const waits = Object.fromEntries(VARIANTS.map((v) => [v, waitTally(ctx.pool, WRITERS_APP)])) as Record<Variant, WaitTally>;
      for (let i = 0; i < ROUNDS; i++) {
        // Rotate the order so that no variant always follows the same one.
        const order = VARIANTS.map((_, k) => VARIANTS[(k + i) % VARIANTS.length]!);
        for (const v of order) {
          const before = await listener.settledCount();
          rounds[v].push(await waits[v].during(() => runRound(v, ROUND_MS)));
          notifies[v] += (await listener.settledCount()) - before;
        }
      }

      const total = Object.fromEntries(VARIANTS.map((v) => [v, combine(rounds[v])])) as Record<Variant, Throughput>;
      const perS = (v: Variant) => total[v].perSecond;
      ctx.log(`concurrent_appends (${WRITERS} writers): ${VARIANTS.map((v) => `${v} ${perS(v)}/s`).join(", ")}`);
      ctx.note("concurrent_appends", {
        writers: WRITERS,
        pool_connections: WRITERS,
        round_ms: ROUND_MS,
        rounds_per_s: Object.fromEntries(VARIANTS.map((v) => [v, rounds[v].map((t) => t.perSecond)])),
        appends: Object.fromEntries(VARIANTS.map((v) => [v, total[v].calls])),
        notifies_per_append: Object.fromEntries(VARIANTS.map((v) => [v, round(notifies[v] / total[v].calls, 3)])),
        async_notifier_transactions: notifier.sends() - notifierSendsBefore,
        wait_event_shares: Object.fromEntries(VARIANTS.map((v) => [v, waits[v].shares()])),
        listener: `one LISTEN ${listener.channel} connection open throughout, as the web server keeps one in production`,
        how: "each writer appends one event per transaction to its own stream, back to back, for round_ms; variants rotated each round, all on one pool of 32 connections; raw_insert_notify = the raw INSERT and pg_notify(events channel, stream id) in one statement; wait_event_shares = share of active writer connections per wait event in pg_stat_activity sampled every ~10 ms (Lock:object = the database-wide lock a transaction that sent NOTIFY takes at commit and holds through its WAL flush); raw_insert_notify_no_listener = raw_insert_notify with the listener UNLISTENed; raw_insert_async_notify = raw_insert, then a ring to one connection that NOTIFYs the rung streams in one transaction per batch (async_notifier_transactions of them), not how the store works",
      });
      return {
        concurrent_appends: {
          writers: WRITERS,
          catcafe: perS("catcafe"),
          raw_insert: perS("raw_insert"),
          raw_insert_notify: perS("raw_insert_notify"),
          emmett: perS("emmett"),
          ratio: round(perS("catcafe") / perS("raw_insert"), 3),
          ratio_vs_emmett: round(perS("catcafe") / perS("emmett"), 3),
          notifies_per_append: round(notifies.catcafe / total.catcafe.calls, 3),
        },
      };
    } finally {
      await notifier.close();
      await listener.close();
      await pool.end().catch(() => {});
    }
  },
};
