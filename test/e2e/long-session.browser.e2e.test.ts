// A long session's page in a real browser (Debian chromium through playwright-core) against a
// real `npm start` (docs/session-view.md, "Long sessions"): a 3,000-event review loop opens at
// its latest entries with its status, Load older puts the page before them in front (no event
// twice, the count of earlier events going down), Jump to latest goes back to the end, and the
// operator's runtime context is read when opened, not with the page, nor are the pages its links
// lead to; a person's message arriving live (one, or a burst of tall ones) is followed to while
// the reader is at the end, and not while they read above. Screenshots at 390 and 1280 land in test/e2e/screenshots/; axe
// finds nothing serious.
import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { longTaskSession } from "../../bench/lib/task-fixtures";
import { createAppEventStore } from "../../server/app-store";
import { createPool, type Db } from "../../server/db/pool";
import type { EventStore } from "../../server/events/store";
import { layoutProblems } from "../helpers/axe";
import { launchChromium, signIn } from "../helpers/browser";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";
import { freePort } from "../helpers/ports";

const EVENTS = 3000;

let app: LiveServer;
let browser: Browser;
let sessionId: string;
let pool: Db;
let store: EventStore;

beforeAll(async () => {
  const pgPort = await freePort();
  app = await startLiveServer("long-session", { CATCAFE_PG_PORT: String(pgPort) });
  const { postgresPassword } = JSON.parse(fs.readFileSync(path.join(app.dataDir, "secrets.json"), "utf8")) as { postgresPassword: string };
  pool = createPool(`postgresql://catcafe:${encodeURIComponent(postgresPassword)}@127.0.0.1:${pgPort}/catcafe`, 2);
  store = createAppEventStore(pool);
  sessionId = await longTaskSession(store, { kind: "system", id: "e2e" }, EVENTS);
  browser = await launchChromium();
}, LIVE_SERVER_TIMEOUT_MS + 120_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await pool?.end();
  await app?.stop();
}, 60_000);

/** The end of the timeline (an empty marker after its last entry) is within the viewport. */
const endInView = (page: Page) =>
  page.getByTestId("timeline-end").evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.top <= window.innerHeight;
  });

/** The page's scroll position has not moved for 300 ms (a smooth scroll has ended). */
const scrolledToRest = (page: Page) => () =>
  page.evaluate(async () => {
    const before = window.scrollY;
    await new Promise((done) => setTimeout(done, 300));
    return window.scrollY === before;
  });

const versions = (page: Page) =>
  page.locator('[data-testid="timeline-item"]').evaluateAll((items) => items.map((i) => Number(i.getAttribute("data-version"))));

describe("a long session's page", () => {
  it("opens at its latest entries, loads older ones in front, jumps back to the latest, and reads the runtime context when opened", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, app.url, app.admin.email, app.admin.password);
    const runtimeReads: string[] = [];
    // Pages the session page's links lead to, rendered ahead by the router (none: they are not prefetched).
    const prefetched: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("tasks.runtimeContext")) runtimeReads.push(r.url());
      if (r.headers()["next-router-prefetch"] || r.headers()["rsc"]) prefetched.push(r.url());
    });
    await page.goto(`${app.url}/sessions/${sessionId}`);

    // The status is the whole session's, the entries its latest, and the page at their end.
    await expect.poll(async () => (await versions(page)).at(-1), { timeout: 10_000 }).toBeGreaterThan(EVENTS - 10);
    expect(
      await page
        .locator("dt", { hasText: /^Events$/ })
        .locator("xpath=following-sibling::dd[1]")
        .innerText(),
    ).toBe(String(EVENTS));
    await expect.poll(() => endInView(page), { timeout: 10_000 }).toBe(true);
    const first = await versions(page);
    expect(first[0]).toBeGreaterThan(EVENTS - 200);
    const earlierText = async () => (await page.getByTestId("load-older").innerText()).match(/(\d+) earlier event/)?.[1];
    const earlierAtFirst = Number(await earlierText());
    expect(earlierAtFirst).toBe(first[0]! - 1);

    // Load older: the page before, in front, each event once.
    await page.getByTestId("load-older-button").click();
    await expect.poll(async () => (await versions(page)).length, { timeout: 10_000 }).toBeGreaterThan(first.length);
    const both = await versions(page);
    expect(both.slice(-first.length)).toEqual(first);
    expect(new Set(both).size).toBe(both.length);
    expect(both).toEqual([...both].sort((a, b) => a - b));
    expect(Number(await earlierText())).toBe(both[0]! - 1);
    expect(Number(await earlierText())).toBeLessThan(earlierAtFirst);

    // Jump to latest, from the top of the timeline.
    await page.evaluate(() => window.scrollTo(0, 0));
    expect(await endInView(page)).toBe(false);
    await page.getByTestId("jump-to-latest").click();
    await expect.poll(() => endInView(page), { timeout: 10_000 }).toBe(true);

    // At the end, a message arriving live is followed to; read from above, the page stays put.
    const post = async (text: string) =>
      (
        await store.append(sessionId, "any", [{ type: "OperatorMessagePosted", data: { text } }], {
          actor: { kind: "user", id: "e2e-reader" },
        })
      ).version;
    const followed = await post("Still with us at the end?");
    await expect.poll(async () => (await versions(page)).at(-1), { timeout: 10_000 }).toBe(followed);
    await expect.poll(scrolledToRest(page), { timeout: 10_000 }).toBe(true);
    expect(await endInView(page)).toBe(true);
    // A burst of tall entries, as a roundtable's outputs arrive: each taller than the slack
    // (useFollowEnd), each arriving while the page still scrolls to the one before, each followed.
    const tall = (n: number) => Array.from({ length: 10 }, (_, i) => `Point ${i + 1} of reply ${n}.`).join("\n");
    let burst = 0;
    for (let n = 1; n <= 4; n++) {
      burst = await post(tall(n));
      await page.waitForTimeout(60);
    }
    await expect.poll(async () => (await versions(page)).at(-1), { timeout: 10_000 }).toBe(burst);
    await expect.poll(scrolledToRest(page), { timeout: 10_000 }).toBe(true);
    expect(await endInView(page)).toBe(true);
    // Read from the top once the page has seen the reader leave the end (the observer reports at the next frames).
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const unfollowed = await post("Reading the top of it.");
    await expect.poll(async () => (await versions(page)).at(-1), { timeout: 10_000 }).toBe(unfollowed);
    await page.waitForTimeout(500);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    expect(await endInView(page)).toBe(false);

    // Nothing rendered ahead for the breadcrumb's, Replay's or the fork tree's links.
    expect(prefetched).toEqual([]);

    // The runtime context: nothing read with the page; read and shown when opened.
    expect(runtimeReads).toEqual([]);
    const runtime = page.getByTestId("runtime-context");
    await runtime.locator("summary").click();
    expect(await runtime.getByTestId("runtime-limits").innerText()).toMatch(/attempts|built-in defaults/);
    expect(await runtime.locator("summary").innerText()).toMatch(/^review_loop v\d+ · started .* · \d+ agents$/);
    expect(runtimeReads).toHaveLength(1);

    expect(await layoutProblems(page, "long-session")).toEqual([]);
    await context.close();
  }, 180_000);
});
