// session_page_10k_interactive_ms: a 10,000-event review-loop session's page in a real
// browser. The session is appended through the event store; the production web server
// (`next start`, built first when the code changed) serves the bench database; Debian's
// chromium (playwright-core) signs in as an operator and opens the page cold (a new tab, no
// cache) again and again. A sample is the time from the navigation's start to the first
// animation frame where the page is interactive: the operator's Actions panel and a
// timeline entry are painted and hydrated (React has attached itself to both), so a click
// on Confirm or Load older would be handled. Medians of the samples after one warm-up.
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
const SAMPLES = 7;
const ROOT = path.resolve(import.meta.dirname, "../..");
const NEXT_BIN = path.join(ROOT, "node_modules/.bin/next");
const CHROMIUM = process.env.CATCAFE_CHROMIUM ?? "/usr/bin/chromium";
const READY_TIMEOUT_MS = 60_000;
const BUILD_TIMEOUT_MS = 10 * 60_000;

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

      const pageUrl = `${web.url}/sessions/${sessionId}`;
      const times: number[] = [];
      const firstBytes: number[] = [];
      const lastBytes: number[] = [];
      let shape = { domNodes: 0, htmlBytes: 0, entries: 0, height: 0 };
      for (let i = 0; i <= SAMPLES; i++) {
        const page = await context.newPage();
        const client = await context.newCDPSession(page);
        await client.send("Network.setCacheDisabled", { cacheDisabled: true });
        const response = await page.goto(pageUrl, { waitUntil: "commit" });
        if (!response?.ok()) throw new Error(`${pageUrl} answered HTTP ${response?.status()}`);
        const t = (await page.evaluate(INTERACTIVE)) as { ms: number; firstByte: number; lastByte: number };
        if (i > 0) {
          // The first opening warms the server up.
          times.push(t.ms);
          firstBytes.push(t.firstByte);
          lastBytes.push(t.lastByte);
        }
        if (i === SAMPLES) {
          shape = await page.evaluate(() => ({
            domNodes: document.getElementsByTagName("*").length,
            htmlBytes: new TextEncoder().encode(document.documentElement.outerHTML).length,
            entries: document.querySelectorAll('[data-testid="timeline-item"]').length,
            height: document.documentElement.scrollHeight,
          }));
        }
        await page.close();
      }
      const s = percentiles(times);
      ctx.note("session_page", {
        events: EVENTS,
        samples: s,
        first_byte_p50: percentiles(firstBytes).p50,
        last_byte_p50: percentiles(lastBytes).p50,
        measured: "navigation start → first frame with the Actions panel and a timeline entry painted and hydrated (cold tab, cache off)",
        last_page: {
          dom_nodes: shape.domNodes,
          html_bytes: shape.htmlBytes,
          timeline_items: shape.entries,
          scroll_height_px: shape.height,
        },
      });
      return { session_page_10k_interactive_ms: { p50: s.p50, max: s.max, n: s.n, dom_nodes: shape.domNodes } };
    } finally {
      await browser?.close().catch(() => {});
      web.child.kill("SIGTERM");
      await new Promise((r) => (web.child.exitCode !== null ? r(null) : web.child.once("exit", r)));
    }
  },
};
