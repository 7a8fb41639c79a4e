// append_single_vs_peer: one writer appending one event at a time to existing streams, each
// append with the stream's exact expected version: Cat Cafe's app store (`store.append`)
// against Emmett's PostgreSQL event store (`appendToStream`), on the same database, in
// alternating rounds (a slow patch of the disk then hits both sides alike). A LISTEN
// connection on Cat Cafe's events channel is open throughout, as the web server keeps one,
// and counts the NOTIFYs each append sends.
import { createPool } from "../../server/db/pool";
import type { Measurement } from "../lib/context";
import { openEventsListener } from "../lib/events-listener";
import { benchActor, createSessions, messageEvents } from "../lib/fixtures";
import { round } from "../lib/percentiles";
import { combine, runFor, type Throughput } from "../lib/timing";
import { createEmmettStreams, emmettMessages, openEmmettPeer } from "../peers/emmett";

const STREAMS = 4;
const WARMUP_MS = 250;
const ROUNDS = 4;
const ROUND_MS = 1_000;

export const appendSinglePeer: Measurement = {
  name: "append_single_peer",
  keys: ["append_single_vs_peer"],
  async run(ctx) {
    const emmettPool = createPool(ctx.url, 10, { applicationName: "bench-emmett" });
    const listener = await openEventsListener(ctx.url);
    try {
      const emmett = await openEmmettPeer(ctx.url, emmettPool);
      const ours = await createSessions(ctx.store, STREAMS, "peer-single");
      const theirs = await createEmmettStreams(emmett, STREAMS, "single");

      const appendOurs = async (call: number) => {
        const s = ours[call % ours.length]!;
        s.version = (await ctx.store.append(s.id, s.version, messageEvents(1, "peer-single"), { actor: benchActor })).version;
        return 1;
      };
      const appendTheirs = async (call: number) => {
        const s = theirs[call % theirs.length]!;
        s.version = await emmett.append(s.name, s.version, emmettMessages(1, "single"));
        return 1;
      };

      await runFor(WARMUP_MS, appendOurs);
      await runFor(WARMUP_MS, appendTheirs);
      const oursRounds: Throughput[] = [];
      const theirsRounds: Throughput[] = [];
      let ourNotifies = 0;
      let theirNotifies = 0;
      const counted = async (op: () => Promise<Throughput>) => {
        const before = await listener.settledCount();
        const t = await op();
        return { t, notifies: (await listener.settledCount()) - before };
      };
      const roundOurs = async () => {
        const r = await counted(() => runFor(ROUND_MS, appendOurs));
        oursRounds.push(r.t);
        ourNotifies += r.notifies;
      };
      const roundTheirs = async () => {
        const r = await counted(() => runFor(ROUND_MS, appendTheirs));
        theirsRounds.push(r.t);
        theirNotifies += r.notifies;
      };
      for (let i = 0; i < ROUNDS; i++) {
        if (i % 2 === 0) {
          await roundOurs();
          await roundTheirs();
        } else {
          await roundTheirs();
          await roundOurs();
        }
      }
      const catcafe = combine(oursRounds);
      const peer = combine(theirsRounds);
      ctx.log(`append_single_peer: catcafe ${catcafe.perSecond}/s (${catcafe.calls} appends), emmett ${peer.perSecond}/s (${peer.calls})`);
      ctx.note("append_single_peer", {
        catcafe_rounds_per_s: oursRounds.map((t) => t.perSecond),
        emmett_rounds_per_s: theirsRounds.map((t) => t.perSecond),
        catcafe_appends: catcafe.calls,
        emmett_appends: peer.calls,
        round_ms: ROUND_MS,
        streams_per_side: STREAMS,
        listener: `one LISTEN ${listener.channel} connection open throughout, as the web server keeps one`,
        catcafe_notifies_per_append: round(ourNotifies / catcafe.calls, 3),
        emmett_notifies_on_channel: theirNotifies,
        how: "one event per append, exact expected version; Cat Cafe: createAppEventStore on the bench pool (max 10), one autocommit statement (no projection handles the event); Emmett 0.42 getPostgreSQLEventStore on its own pool (max 10): BEGIN, SELECT emt_append_to_stream(...), COMMIT",
      });
      return {
        append_single_vs_peer: { catcafe: catcafe.perSecond, emmett: peer.perSecond, ratio: round(catcafe.perSecond / peer.perSecond, 3) },
      };
    } finally {
      await listener.close();
      await emmettPool.end().catch(() => {});
    }
  },
};
