// conversation_state_at_10000_ms: a 10,000-event conversation's state (the conversation fold,
// server/conversations/fold.ts) read with store.stateAt, as its replay and every decision on it
// read it: warm (from the nearest snapshot, every 1,000 versions, plus the events after it),
// cold (no snapshot yet: it folds all and keeps one), the longest tail (999 events after a
// snapshot), all through the lean read without snapshots; and the replay view at event 10,000
// (readConversation: the state from stateAt, the entries read whole). Medians of repeated reads
// after one warm-up read each.
import { performance } from "node:perf_hooks";
import { conversationFold } from "../../server/conversations/fold";
import { readConversation } from "../../server/conversations/view";
import { foldStreamAt } from "../../server/events/fold-read";
import { longConversation } from "../lib/conversation-fixtures";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { timed } from "../lib/timing";
import { percentiles } from "../lib/percentiles";

const EVENTS = 10_000;
const READS = 20;

export const conversationReplay: Measurement = {
  name: "conversation_replay",
  keys: ["conversation_state_at_10000_ms"],
  async run(ctx) {
    const t0 = performance.now();
    const id = await longConversation(ctx.store, ctx.pool, benchActor, EVENTS);
    const head = (await ctx.store.streamVersion(id)) ?? 0;
    ctx.log(`conversation_replay: built a ${head}-event conversation in ${Math.round(performance.now() - t0)} ms`);
    const coldTimes: number[] = [];
    for (let i = 0; i < READS; i++) {
      await ctx.pool.query("DELETE FROM stream_snapshots WHERE stream_id = $1", [id]);
      const t = performance.now();
      await ctx.store.stateAt(id, EVENTS, conversationFold);
      coldTimes.push(performance.now() - t);
    }
    const cold = percentiles(coldTimes);
    const warm = percentiles(await timed(READS * 2, () => ctx.store.stateAt(id, EVENTS, conversationFold)));
    const tail = percentiles(await timed(READS, () => ctx.store.stateAt(id, EVENTS - 1, conversationFold)));
    const deps = { pool: ctx.pool, registry: ctx.store.registry };
    const lean = percentiles(await timed(READS, () => foldStreamAt(deps, conversationFold, id, EVENTS, { snapshots: false })));
    const view = percentiles(await timed(READS, () => readConversation(ctx.store, id, EVENTS)));
    const fromSnapshot = await ctx.store.stateAt(id, EVENTS, conversationFold);
    const folded = await foldStreamAt(deps, conversationFold, id, EVENTS, { snapshots: false });
    if (JSON.stringify(fromSnapshot) !== JSON.stringify(folded))
      throw new Error("conversation_replay: the state from snapshots differs from the full fold");
    ctx.note("conversation_replay", {
      events: head,
      turns: folded.state.turns,
      cold,
      warm,
      at_9999: tail,
      lean_no_snapshot: lean,
      view_at_10000: view,
    });
    return {
      conversation_state_at_10000_ms: {
        warm_p50: warm.p50,
        warm_p95: warm.p95,
        cold_p50: cold.p50,
        at_9999_p50: tail.p50,
        lean_no_snapshot_p50: lean.p50,
        view_at_10000_p50: view.p50,
        n: warm.n,
      },
    };
  },
};
