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
import crypto from "node:crypto";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { PrismaPg } from "@prisma/adapter-pg";
import { chromium, type Browser } from "playwright-core";
import { buildFingerprint, buildIsCurrent, writeBuildStamp } from "../../scripts/lib/build";
import { createUser } from "../../server/auth/users";
import { PrismaClient } from "../../server/db/generated/client";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { percentiles } from "../lib/percentiles";
import { sleep } from "../lib/timing";
import { longTaskSession } from "../lib/task-fixtures";

const EVENTS = 10_000;
const SMALL_EVENTS = 40;
const SAMPLES = 5;
const ROOT = path.resolve(import.meta.dirname, "../..");
const NEXT_BIN = path.join(ROOT, "node_modules/.bin/next");
const CHROMIUM = process.env.CATCAFE_CHROMIUM ?? "/usr/bin/chromium";
const READY_TIMEOUT_MS = 60_000;
const BUILD_TIMEOUT_MS = 10 * 60_000;
/** Git-ignored, beside the report. */
const SCREENSHOT = path.resolve(import.meta.dirname, "../results/session-page-10k.png");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The production build, made first when the code changed since the last one. */
function ensureBuild(log: (line: string) => void): void {
  if (buildIsCurrent(ROOT)) return;
  log("session_page: the code changed since the last build: running `next build` first (minutes)");
  const fingerprint = buildFingerprint(ROOT);
  execFileSync(NEXT_BIN, ["build"], {
    cwd: ROOT,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
    stdio: "ignore",
    timeout: BUILD_TIMEOUT_MS,
  });
  writeBuildStamp(ROOT, fingerprint);
}

async function startWeb(databaseUrl: string): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: crypto.randomBytes(32).toString("hex"),
    NEXTAUTH_URL: url,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    CATCAFE_LOG_LEVEL: "warn",
  };
  const child = spawn(NEXT_BIN, ["start", "-p", String(port), "-H", "127.0.0.1"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString("utf8")));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString("utf8")));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited (${child.exitCode}):\n${output.slice(-2000)}`);
    const ok = await fetch(`${url}/api/health`).then(
      (r) => r.status < 500 || r.status === 503,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`next start did not answer within ${READY_TIMEOUT_MS} ms:\n${output.slice(-2000)}`);
    await sleep(200);
  }
  return { url, child, output: () => output };
}

function launch(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM} (apt-get install -y chromium, or set CATCAFE_CHROMIUM)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
}

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
    ensureBuild(ctx.log);
    const t0 = performance.now();
    const sessionId = await longTaskSession(ctx.store, benchActor, EVENTS);
    const smallId = await longTaskSession(ctx.store, benchActor, SMALL_EVENTS);
    ctx.log(`session_page: built a ${EVENTS}-event session in ${Math.round(performance.now() - t0)} ms`);
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: ctx.url, max: 2 }) });
    const operator = {
      email: `bench-${crypto.randomBytes(4).toString("hex")}@cats.test`,
      password: crypto.randomBytes(12).toString("hex"),
    };
    try {
      await createUser(prisma, { ...operator, name: "Bench Operator", role: "operator" });
    } finally {
      await prisma.$disconnect();
    }
    const web = await startWeb(ctx.url);
    let browser: Browser | null = null;
    try {
      browser = await launch();
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const signin = await context.newPage();
      await signin.goto(`${web.url}/signin?callbackUrl=${encodeURIComponent("/")}`);
      await signin.locator('input[name="email"]').fill(operator.email);
      await signin.locator('input[name="password"]').fill(operator.password);
      await Promise.all([
        signin.waitForURL((u) => u.pathname === "/", { timeout: 30_000 }),
        signin.getByRole("button", { name: "Sign in" }).click(),
      ]);
      await signin.close();

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
    } finally {
      await browser?.close().catch(() => {});
      web.child.kill("SIGTERM");
      await new Promise((r) => (web.child.exitCode !== null ? r(null) : web.child.once("exit", r)));
    }
  },
};
