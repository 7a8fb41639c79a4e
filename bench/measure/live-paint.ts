// live_commit_to_paint_ms: an event committed → its timeline entry painted on the session
// page a person has open, in a real browser. The production web app (`next start`, see
// bench/lib/web-app.ts) serves the bench database; Debian's chromium signs in as an operator
// and opens a 40-event review-loop session's page, scrolled to its end as a reader following
// the session would be (the page then keeps the newest entries in view). From this process
// a person's message (OperatorMessagePosted, drawn as its own timeline entry) is appended to
// that session through the event store, one at a time, 100-200 ms apart so that each is
// seen alone.
//
// In the page, a script installed before the app's own (addInitScript) records, for each
// event version: when the live connection's SSE message carrying it arrived (a listener
// added as the EventSource is made, so before tRPC's own), when its `timeline-item` entry
// was inserted into the DOM (a MutationObserver: its callback runs right after React's
// commit), the next animation frame after that, the moment that frame has been rendered (a
// message posted from inside the frame callback runs once the frame's style, layout and
// paint are done: the usual "next paint" mark), and the frame in which the entry first
// showed in the viewport (an IntersectionObserver's own timestamp). The figure is commit →
// painted; the hops between the marks say where the time goes. This process reads the
// marks by polling the page (a cheap evaluate every 20 ms), never from a frame callback of
// its own, so it adds no frames; for a burst it waits with one call the page answers once
// every entry is painted, its clocks read before the burst. Headless chromium here renders and composites in software
// (no GPU): a frame costs more than on a person's desktop.
//
// Clocks: both sides read `performance.timeOrigin + performance.now()`, a wall-clock
// anchored, monotonic, sub-millisecond time in the browser and in Node on the same machine,
// so the page's marks can be compared with the commit time taken here as the append
// resolves (commit acknowledged) without a round trip through the browser per sample,
// which would itself take milliseconds. The two origins are each read from the system clock
// once, so they could disagree by a clock step between the two reads; the offset between
// them is measured (the best of many round trips, as NTP does) and kept in the notes, and
// the samples are corrected by it, which leaves an error of at most half that round trip.
import crypto from "node:crypto";
import type { BrowserContext, Page } from "playwright-core";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { databaseClockOffset, now, pageClockOffset } from "../lib/page-clock";
import { percentiles, round } from "../lib/percentiles";
import { longTaskSession } from "../lib/task-fixtures";
import { sleep } from "../lib/timing";
import { settleDatabase } from "../lib/pg-counters";
import { ensureBuild, withSignedInBrowser } from "../lib/web-app";

const SESSION_EVENTS = 40;
const WARM_UP = 10;
const SAMPLES = 80;
const PACE_MS = { min: 100, max: 200 };
const PAINT_TIMEOUT_MS = 10_000;
/** Bursts: each on a freshly opened page, as a roundtable writes them (one transaction per event, back to back). */
const BURSTS = 12;
const BURST_EVENTS = 5;
const BURST_TARGET_P95_MS = 100;
const POLL_MS = 20;
/** After the paint, how long an entry may take to scroll into view before it counts as never seen there. */
const IN_VIEW_WAIT_MS = 1_000;

/** Installed in the page before its own scripts: the marks of every version, in window.__livePaint. */
const INSTRUMENT = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const marks = {};
  const mark = (version, name, at) => {
    const m = (marks[version] ??= {});
    if (m[name] === undefined) m[name] = at;
    window.__onMark?.();
  };
  window.__livePaint = marks;
  const largestVersion = (value) => {
    if (value === null || typeof value !== "object") return null;
    let best = typeof value.version === "number" ? value.version : null;
    for (const v of Object.values(value)) {
      const found = largestVersion(v);
      if (found !== null && (best === null || found > best)) best = found;
    }
    return best;
  };
  const Native = window.EventSource;
  window.EventSource = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => (window.__liveOpen ??= now()));
      this.addEventListener("message", (event) => {
        const at = now();
        try {
          const version = largestVersion(JSON.parse(event.data));
          if (version !== null) mark(version, "sse", at);
        } catch {}
      });
    }
  };
  // The frame in which an entry first shows in the viewport (the page follows the newest
  // entries with a smooth scroll): the observer's own timestamp of that frame.
  const inView = new IntersectionObserver((entries) => {
    for (const entry of entries)
      if (entry.isIntersecting) {
        mark(Number(entry.target.dataset.version), "visible", performance.timeOrigin + entry.time);
        inView.unobserve(entry.target);
      }
  });
  const onAdded = (items) => {
    const at = now();
    for (const li of items) {
      mark(Number(li.dataset.version), "dom", at);
      inView.observe(li);
    }
    requestAnimationFrame(() => {
      const frame = now();
      for (const li of items) mark(Number(li.dataset.version), "frame", frame);
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        const painted = now();
        for (const li of items) mark(Number(li.dataset.version), "painted", painted);
      };
      channel.port2.postMessage(null);
    });
  };
  const observer = new MutationObserver((records) => {
    const items = [];
    for (const record of records)
      for (const node of record.addedNodes)
        if (node.nodeType === 1) {
          if (node.matches('[data-testid="timeline-item"]')) items.push(node);
          else items.push(...node.querySelectorAll('[data-testid="timeline-item"]'));
        }
    if (items.length) onAdded(items);
  });
  const start = () => observer.observe(document.documentElement, { childList: true, subtree: true });
  if (document.documentElement) start();
  else document.addEventListener("readystatechange", start, { once: true });
})();`;

interface Marks {
  sse?: number;
  dom?: number;
  frame?: number;
  painted?: number;
  visible?: number;
}

/** The page's marks for `version` once it is painted and in view (or the wait for the view is over). */
async function marksOf(page: Page, version: number): Promise<Marks> {
  const deadline = now() + PAINT_TIMEOUT_MS;
  let inViewDeadline = Number.POSITIVE_INFINITY;
  for (;;) {
    const marks = (await page.evaluate(
      (v) => (window as unknown as { __livePaint: Record<number, Marks> }).__livePaint[v] ?? {},
      version,
    )) as Marks;
    if (marks.painted !== undefined) {
      if (marks.visible !== undefined || now() > inViewDeadline) return marks;
      inViewDeadline = Math.min(inViewDeadline, now() + IN_VIEW_WAIT_MS);
    } else if (now() > deadline) {
      throw new Error(`version ${version} was not painted within ${PAINT_TIMEOUT_MS} ms (marks so far: ${JSON.stringify(marks)})`);
    }
    await sleep(POLL_MS);
  }
}

/**
 * The marks of `versions` once every one is painted: one call that the page answers itself as
 * its marks are taken, so that nothing from here takes the page's time while the burst paints.
 */
async function allPainted(page: Page, versions: number[]): Promise<Record<number, Marks>> {
  // A string, not a function: the bench's compiled helpers are not defined in the page.
  const marks = (await page.evaluate(`new Promise((resolve) => {
    const versions = ${JSON.stringify(versions)};
    const check = () => {
      if (!versions.every((v) => window.__livePaint[v]?.painted !== undefined)) return;
      window.__onMark = undefined;
      resolve(window.__livePaint);
    };
    window.__onMark = check;
    check();
    setTimeout(() => resolve(window.__livePaint), ${PAINT_TIMEOUT_MS});
  })`)) as Record<number, Marks>;
  const missing = versions.filter((v) => marks[v]?.painted === undefined);
  if (missing.length) throw new Error(`versions ${missing.join(", ")} were not painted within ${PAINT_TIMEOUT_MS} ms`);
  return marks;
}

export const livePaint: Measurement = {
  name: "live_paint",
  keys: ["live_commit_to_paint_ms", "live_tx_to_paint_burst_ms"],
  async run(ctx) {
    ensureBuild((line) => ctx.log(`live_paint: ${line}`));
    const sessionId = await longTaskSession(ctx.store, benchActor, SESSION_EVENTS);
    let version = SESSION_EVENTS;
    // Timed on a settled database: the earlier measures' vacuum and checkpoint are not this one's.
    await settleDatabase(ctx.pool);
    return withSignedInBrowser(ctx.url, async (context, web) => {
      const page = await context.newPage();
      await page.addInitScript(INSTRUMENT);
      const response = await page.goto(`${web.url}/sessions/${sessionId}`, { waitUntil: "load" });
      if (!response?.ok()) throw new Error(`the session page answered HTTP ${response?.status()}`);
      await page.getByTestId("timeline-item").first().waitFor();
      // A reader following the session: at the newest entry, where the page keeps following.
      await page.evaluate(() => window.scrollTo({ top: document.documentElement.scrollHeight }));
      await sleep(300);
      const clock = await pageClockOffset(page);

      const rows: Array<{ committed: number; sse: number; dom: number; frame: number; painted: number; visible: number }> = [];
      for (let i = 0; i < WARM_UP + SAMPLES; i++) {
        const text = `paint ${i} ${crypto.randomUUID()}`;
        version = (
          await ctx.store.append(sessionId, version, [{ type: "OperatorMessagePosted", data: { text } }], {
            actor: benchActor,
          })
        ).version;
        // On the page's clock.
        const committed = now() + clock.offsetMs;
        const marks = await marksOf(page, version);
        if (i >= WARM_UP)
          rows.push({
            committed,
            sse: marks.sse ?? Number.NaN,
            dom: marks.dom!,
            frame: marks.frame!,
            painted: marks.painted!,
            visible: marks.visible ?? Number.NaN,
          });
        await sleep(PACE_MS.min + Math.random() * (PACE_MS.max - PACE_MS.min));
      }
      const clockAfter = await pageClockOffset(page);
      await page.close();

      const bursts = await burstsOnFreshPages(ctx, context, `${web.url}/sessions/${sessionId}`, sessionId, version);

      const total = percentiles(rows.map((r) => r.painted - r.committed));
      const withSse = rows.filter((r) => Number.isFinite(r.sse));
      const sse = withSse.length ? percentiles(withSse.map((r) => r.sse - r.committed)) : null;
      const dom = withSse.length ? percentiles(withSse.map((r) => r.dom - r.sse)) : null;
      const frame = percentiles(rows.map((r) => r.frame - r.dom));
      const paint = percentiles(rows.map((r) => r.painted - r.dom));
      const seen = rows.filter((r) => Number.isFinite(r.visible));
      const visible = seen.length ? percentiles(seen.map((r) => r.visible - r.committed)) : null;
      ctx.note("live_paint", {
        measured:
          "OperatorMessagePosted appended (commit acknowledged) → its timeline entry inserted into the DOM of the open session page and the next frame rendered, in chromium; marks taken in the page",
        session_events_before: SESSION_EVENTS,
        warm_up: WARM_UP,
        pace_ms: PACE_MS,
        commit_to_painted: total,
        hops: {
          commit_to_sse_message_in_page: sse,
          sse_message_to_entry_in_dom: dom,
          entry_in_dom_to_next_frame: frame,
          entry_in_dom_to_painted: paint,
        },
        commit_to_in_viewport: visible,
        never_in_viewport: rows.length - seen.length,
        never_in_viewport_at: rows.flatMap((r, i) => (Number.isFinite(r.visible) ? [] : [i])),
        sse_seen_before_commit_reply: withSse.filter((r) => r.sse < r.committed).length,
        sse_marks_missing: rows.length - withSse.length,
        clock: {
          method: "performance.timeOrigin + performance.now() on both sides, corrected by the offset measured before the samples",
          offset_before_ms: round(clock.offsetMs, 3),
          offset_after_ms: round(clockAfter.offsetMs, 3),
          best_round_trip_ms: round(Math.min(clock.roundTripMs, clockAfter.roundTripMs), 3),
        },
      });
      ctx.note("live_paint_burst", bursts.note);
      return {
        live_tx_to_paint_burst_ms: bursts.figure,
        live_commit_to_paint_ms: {
          p50: total.p50,
          p95: total.p95,
          n: total.n,
          max: total.max,
          sse_p50: sse?.p50 ?? Number.NaN,
          dom_p50: dom?.p50 ?? Number.NaN,
          paint_p50: paint.p50,
          in_view_p50: visible?.p50 ?? Number.NaN,
          in_view_p95: visible?.p95 ?? Number.NaN,
        },
      };
    });
  },
};

/** A roundtable's facts, as its three speakers record them: a discussion bubble each, one transaction per event. */
function roundtableEvent(n: number, i: number) {
  const role = (["coder", "reviewer", "tester"] as const)[i % 3]!;
  const text = `burst ${n}.${i}: ${role} says the slug keeps its accents ${crypto.randomUUID()}`;
  return {
    type: "AgentOutputRecorded",
    data: {
      stepId: crypto.randomUUID(),
      attempt: 1,
      role,
      agentId: `${role}-bench`,
      phase: "discussion",
      raw: { blob: crypto.createHash("sha256").update(text).digest("hex"), size: text.length, mediaType: "text/plain; charset=utf-8" },
      preview: text,
      parsed: null,
      validationErrors: [],
      simulated: true,
    },
  };
}

/**
 * live_tx_to_paint_burst_ms: each burst on a page opened afresh (a new tab, as a person who
 * follows a link into a running session): once its live connection is open, `BURST_EVENTS`
 * events are appended back to back, each in its own transaction as a roundtable's steps
 * write them, and each is timed from its transaction's start (`recorded_at`, PostgreSQL's
 * clock) to its entry painted in the page.
 */
async function burstsOnFreshPages(
  ctx: Parameters<Measurement["run"]>[0],
  context: BrowserContext,
  url: string,
  sessionId: string,
  from: number,
) {
  let version = from;
  const samples: Array<{ tx: number; sse: number; dom: number; painted: number; burst: number; index: number }> = [];
  const clocks: number[] = [];
  for (let n = 0; n < BURSTS; n++) {
    const page = await context.newPage();
    await page.addInitScript(INSTRUMENT);
    const response = await page.goto(url, { waitUntil: "load" });
    if (!response?.ok()) throw new Error(`the session page answered HTTP ${response?.status()}`);
    await page.waitForFunction(() => (window as unknown as { __liveOpen?: number }).__liveOpen !== undefined);
    // The clocks before the burst: their round trips would take the page's time while it paints.
    const pageClock = await pageClockOffset(page);
    const dbClock = await databaseClockOffset(ctx.pool);
    clocks.push(Math.max(pageClock.roundTripMs, dbClock.roundTripMs));
    const versions: number[] = [];
    for (let i = 0; i < BURST_EVENTS; i++) {
      version = (await ctx.store.append(sessionId, version, [roundtableEvent(n, i)], { actor: benchActor })).version;
      versions.push(version);
    }
    const painted = await allPainted(page, versions);
    const { rows } = await ctx.pool.query<{ version: number; ms: number }>(
      "SELECT version, (extract(epoch FROM recorded_at) * 1000)::float8 AS ms FROM events WHERE stream_id = $1 AND version = ANY($2)",
      [sessionId, versions],
    );
    for (const [index, v] of versions.entries()) {
      const marks = painted[v]!;
      const tx = rows.find((r) => Number(r.version) === v)!.ms - dbClock.offsetMs;
      const onOurs = (t: number | undefined) => (t === undefined ? Number.NaN : t - pageClock.offsetMs);
      samples.push({ tx, sse: onOurs(marks.sse), dom: onOurs(marks.dom), painted: onOurs(marks.painted), burst: n, index });
    }
    await page.close();
  }
  const total = percentiles(samples.map((s) => s.painted - s.tx));
  const withSse = samples.filter((s) => Number.isFinite(s.sse));
  const sse = withSse.length ? percentiles(withSse.map((s) => s.sse - s.tx)) : null;
  const byIndex = Array.from(
    { length: BURST_EVENTS },
    (_, i) => percentiles(samples.filter((s) => s.index === i).map((s) => s.painted - s.tx)).p50,
  );
  return {
    figure: {
      p50: total.p50,
      p95: total.p95,
      n: total.n,
      max: total.max,
      target_p95: BURST_TARGET_P95_MS,
      met: total.p95 <= BURST_TARGET_P95_MS,
      sse_p50: sse?.p50 ?? Number.NaN,
      sse_p95: sse?.p95 ?? Number.NaN,
    },
    note: {
      measured:
        "AgentOutputRecorded (discussion) appended in bursts, one transaction per event back to back, right after a freshly opened session page's live connection opened → each entry painted; timed from the appending transaction's start (recorded_at)",
      bursts: BURSTS,
      events_per_burst: BURST_EVENTS,
      tx_to_painted: total,
      tx_to_sse_message: sse,
      sse_to_painted: withSse.length ? percentiles(withSse.map((s) => s.painted - s.sse)) : null,
      p50_by_position_in_burst: byIndex,
      clock: {
        method: "page: performance.timeOrigin + performance.now(); recorded_at: PostgreSQL's clock_timestamp() offset; both per burst",
        worst_best_round_trip_ms: round(Math.max(...clocks), 3),
      },
    },
  };
}
