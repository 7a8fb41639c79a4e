// session_page_10k_interactive_ms: a 10,000-event review-loop session's page in a real
// browser. The session is appended through the event store; the production web server
// (`next start`, built first when the code changed) serves the bench database; Debian's
// chromium (playwright-core) signs in as an operator and opens the page cold (a new tab, no
// cache) again and again. A sample is the time from the navigation's start to the first
// animation frame where the page is interactive: the operator's Actions panel and a
// timeline entry are painted and hydrated (React has attached itself to both), so a click
// on Confirm or Load older would be handled. Medians of the samples after one warm-up,
// with the app's scripts cached (the figure) and not (cold_p50), and a 40-event session's
// page beside it in the notes (what any session page costs on this machine). Then Load
// older is clicked once, and a screenshot is kept in bench/results/.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { percentiles } from "../lib/percentiles";
import { longTaskSession } from "../lib/task-fixtures";
import { ensureBuild, ROOT, withSignedInBrowser } from "../lib/web-app";

const EVENTS = 10_000;
const SMALL_EVENTS = 40;
const SAMPLES = 5;
/** Git-ignored, beside the report. */
const SCREENSHOT = path.resolve(import.meta.dirname, "../results/session-page-10k.png");

/** In the page: ms from the navigation's start to the frame where Actions and an entry are painted and hydrated. */
const INTERACTIVE = `new Promise((resolve) => {
  const hydrated = (el) => !!el && Object.keys(el).some((k) => k.startsWith("__reactFiber"));
  const check = () => {
    const actions = document.querySelector('[data-testid="actions"]');
    const entry = document.querySelector('[data-testid="timeline-item"]');
    if (hydrated(actions) && hydrated(entry) && entry.getBoundingClientRect().height > 0) {
      const nav = performance.getEntriesByType("navigation")[0];
      resolve({ ms: performance.now(), firstByte: nav.responseStart, lastByte: nav.responseEnd, domContentLoaded: nav.domContentLoadedEventEnd });
    }
    else requestAnimationFrame(check);
  };
  check();
})`;

export const sessionPage: Measurement = {
  name: "session_page",
  keys: ["session_page_10k_interactive_ms"],
  async run(ctx) {
    ensureBuild((line) => ctx.log(`session_page: ${line}`));
    const t0 = performance.now();
    const sessionId = await longTaskSession(ctx.store, benchActor, EVENTS);
    const smallId = await longTaskSession(ctx.store, benchActor, SMALL_EVENTS);
    ctx.log(`session_page: built a ${EVENTS}-event session in ${Math.round(performance.now() - t0)} ms`);
    return withSignedInBrowser(ctx.url, async (context, web) => {
      /** Opens `url` `SAMPLES` times in a new tab after one warm-up opening; its timings. */
      const sample = async (url: string, cache: boolean) => {
        const times: number[] = [];
        const firstBytes: number[] = [];
        for (let i = 0; i <= SAMPLES; i++) {
          const page = await context.newPage();
          const cdp = await context.newCDPSession(page);
          await cdp.send("Network.setCacheDisabled", { cacheDisabled: !cache });
          const response = await page.goto(url, { waitUntil: "commit" });
          if (!response?.ok()) throw new Error(`${url} answered HTTP ${response?.status()}`);
          const t = (await page.evaluate(INTERACTIVE)) as { ms: number; firstByte: number };
          if (i > 0) {
            times.push(t.ms);
            firstBytes.push(t.firstByte);
          }
          await page.close();
        }
        return { ...percentiles(times), first_byte_p50: percentiles(firstBytes).p50 };
      };
      const pageUrl = `${web.url}/sessions/${sessionId}`;
      // A short session beside it: what any session page costs here (JS, hydration, the machine).
      const small = await sample(`${web.url}/sessions/${smallId}`, true);
      const warm = await sample(pageUrl, true);
      const cold = await sample(pageUrl, false);

      // The page as a reader finds it: its shape, a screenshot, and Load older working.
      const page = await context.newPage();
      await page.goto(pageUrl);
      await page.evaluate(INTERACTIVE);
      const shape = await page.evaluate(() => ({
        dom_nodes: document.getElementsByTagName("*").length,
        html_bytes: new TextEncoder().encode(document.documentElement.outerHTML).length,
        timeline_items: document.querySelectorAll('[data-testid="timeline-item"]').length,
        scroll_height_px: document.documentElement.scrollHeight,
        at_the_end: window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 200,
      }));
      fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
      await page.getByTestId("load-older-button").click();
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="timeline-item"]').length > n, shape.timeline_items);
      const afterLoadOlder = await page.locator('[data-testid="timeline-item"]').count();
      await page.close();

      ctx.note("session_page", {
        events: EVENTS,
        measured:
          "navigation start → first frame with the Actions panel and a timeline entry painted and hydrated, in a new tab; warm: the app's scripts in the browser cache (as after any earlier page), cold: cache off",
        warm,
        cold,
        small_session: { events: SMALL_EVENTS, ...small },
        page: { ...shape, timeline_items_after_load_older: afterLoadOlder, screenshot: path.relative(ROOT, SCREENSHOT) },
      });
      return {
        session_page_10k_interactive_ms: { p50: warm.p50, max: warm.max, n: warm.n, cold_p50: cold.p50, dom_nodes: shape.dom_nodes },
      };
    });
  },
};
