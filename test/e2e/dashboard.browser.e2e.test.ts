// The team dashboard in a real browser against a real `npm start` (embedded PostgreSQL,
// web server, runner, demo): sign in; the dashboard lists the demo session; confirm it
// through the tRPC API with the admin's session cookie and wait until it is approved;
// replay it and step back with the keyboard to the position where it awaited the confirm;
// rerun it and find the fork in the tree; the settings pages render, with the workflow
// drawn as a diagram; sign out. Screenshots go to test/e2e/screenshots/ (git-ignored).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/ports";
import {
  killTree,
  processesMentioning,
  startProcess,
  tail,
  waitForExit,
  waitForHealth,
  waitForOutput,
  waitUntil,
  type StartedProcess,
} from "../helpers/processes";
import { ensureWebBuild, WEB_BUILD_TIMEOUT_MS } from "../helpers/web-build";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = path.join(import.meta.dirname, "screenshots");
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const DEMO_LINE = /\[catcafe\] demo: created project "demo" and a proposal task waiting for your confirm: (s-[0-9a-f]+)[;\n]/;
const ADMIN = { email: "ada@cats.test", password: "dashboard-e2e-password", name: "Ada Admin" };
const START_TIMEOUT_MS = 90_000;

let dataDir: string;
let port: number;
let pgPort: number;
let base: string;
let app: StartedProcess | null = null;
let browser: Browser | null = null;
let demoSessionId = "";

function startCatCafe(): StartedProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CATCAFE_DATA_DIR: dataDir,
    PORT: String(port),
    CATCAFE_PG_PORT: String(pgPort),
    CATCAFE_LOG_LEVEL: "info",
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    ADMIN_NAME: ADMIN.name,
  };
  for (const name of [
    "DATABASE_URL",
    "NEXTAUTH_SECRET",
    "NEXTAUTH_URL",
    "NODE_ENV",
    "VITEST",
    "VITEST_POOL_ID",
    "VITEST_WORKER_ID",
    "CATCAFE_DEMO",
    "CATCAFE_WORKSPACES_DIR",
  ])
    delete env[name];
  return startProcess(process.execPath, ["--import", "tsx", "scripts/start.ts"], { cwd: ROOT, env, detached: true });
}

beforeAll(
  async () => {
    await ensureWebBuild();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-dashboard-e2e-"));
    port = await freePort();
    base = `http://localhost:${port}`;
    pgPort = await freePort();
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    app = startCatCafe();
    await waitForOutput(app, DEMO_LINE, START_TIMEOUT_MS);
    demoSessionId = DEMO_LINE.exec(app.output())![1]!;
    await waitForOutput(app, /\[catcafe\] ready: /, START_TIMEOUT_MS);
    await waitForHealth(`${base}/api/health`, app, { minRunners: 1, timeoutMs: 20_000 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  },
  WEB_BUILD_TIMEOUT_MS + START_TIMEOUT_MS * 2,
);

afterAll(async () => {
  await browser?.close().catch(() => {});
  if (app) {
    // Ctrl+C, as a terminal sends it; then make sure nothing is left.
    try {
      process.kill(-app.pid, "SIGINT");
      await waitForExit(app, 30_000);
    } catch {
      killTree(app.pid);
    }
  }
  if (!dataDir) return;
  for (const p of processesMentioning(dataDir)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  await waitUntil(() => processesMentioning(dataDir).length === 0, 10_000, "leftovers are gone").catch(() => {});
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

async function trpcQuery<T>(page: Page, procedure: string, input: unknown): Promise<T> {
  const res = await page.request.get(`${base}/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

async function trpcMutation<T>(page: Page, procedure: string, input: unknown): Promise<T> {
  const res = await page.request.post(`${base}/api/trpc/${procedure}`, { data: input });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

async function waitForTask(
  page: Page,
  sessionId: string,
  predicate: (t: { fsm: string; status: string }) => boolean,
  what: string,
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last: { fsm: string; status: string } | null = null;
  while (Date.now() < deadline) {
    last = await trpcQuery<{ fsm: string; status: string }>(page, "tasks.get", { sessionId });
    if (predicate(last)) return last;
    await sleep(250);
  }
  throw new Error(`session ${sessionId} never reached ${what} (last ${JSON.stringify(last)}); output:\n${tail(app?.output() ?? "")}`);
}

const positionOf = (url: string) => Number(new URL(url).searchParams.get("at"));

describe("the dashboard in a browser", () => {
  it("sign in → dashboard → confirm → approved → replay back to the confirm → rerun → fork tree → settings with the diagram → sign out", async () => {
    const context = await browser!.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: "dark" });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    // The security headers' CSP must not block anything the dashboard itself does.
    page.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) pageErrors.push(msg.text());
    });

    // Sign in: the dashboard is for team members only.
    await page.goto(`${base}/`);
    await page.waitForURL(/\/signin\?callbackUrl=/);
    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/`);
    await expect.poll(() => page.getByTestId("signed-in-user").textContent()).toContain(ADMIN.name);

    // A signed-in user sent to the sign-in page with a crafted callback goes home, never
    // off-site and never to a 500 (raw query strings a security review tried).
    for (const query of ["/%09/evil.example/phish", "/%0a/evil.example", "//evil.example", "/%5Cevil.example", "https://evil.example/"]) {
      const res = await context.request.get(`${base}/signin?callbackUrl=${query}`, { maxRedirects: 0 });
      expect(res.status(), query).toBeGreaterThanOrEqual(300);
      expect(res.status(), query).toBeLessThan(400);
      expect(new URL(res.headers()["location"] ?? "", base).origin, query).toBe(new URL(base).origin);
    }

    // The demo session is listed; once its roundtable is over it waits for a confirm.
    await waitForTask(page, demoSessionId, (t) => t.fsm === "awaiting_operator_confirm", "awaiting_operator_confirm");
    const headers = (await page.reload())!.headers();
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers).toMatchObject({ "x-content-type-options": "nosniff", "x-frame-options": "DENY", "referrer-policy": "same-origin" });
    const row = page.locator(`[data-session-row][data-href="/sessions/${demoSessionId}"]`);
    // The badge reads in people's words; the state id stays in data-state.
    await expect.poll(() => row.locator("[data-state]").first().getAttribute("data-state")).toBe("awaiting_operator_confirm");
    expect(await row.textContent()).toContain("Waiting for your confirm");
    expect(await row.textContent()).toContain("Demo: fix slugify()");
    expect(await row.textContent()).toContain("proposal");
    // Filters are URL parameters: a search that matches and one that does not.
    await page.goto(`${base}/?q=slugify&project=demo`);
    await expect.poll(() => page.locator("[data-session-row]").count()).toBe(1);
    await page.goto(`${base}/?q=no-such-session-anywhere`);
    await expect.poll(() => page.locator("[data-session-row]").count()).toBe(0);
    await page.goto(`${base}/`);
    await row.waitFor();
    // j selects the first row; the keyboard opens nothing until Enter.
    await page.keyboard.press("j");
    await expect.poll(() => row.getAttribute("data-selected")).toBe("");
    await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard.png") });

    // Confirm through the API with the admin's session cookie; the runner takes it to approved.
    await trpcMutation(page, "tasks.confirm", { sessionId: demoSessionId, via: "button" });
    await waitForTask(page, demoSessionId, (t) => t.status === "finished", "finished", 90_000);
    expect((await trpcQuery<{ outcome: string }>(page, "tasks.get", { sessionId: demoSessionId })).outcome).toBe("approved");

    // Replay: the latest position is approved; step back with ← to where it awaited the confirm.
    await page.goto(`${base}/sessions/${demoSessionId}/replay`);
    const fsm = page.getByTestId("replay-fsm");
    await expect.poll(() => fsm.getAttribute("data-state")).toBe("approved");
    const head = Number(await page.getByTestId("replay-position").textContent());
    let position = head;
    for (let presses = 0; ; presses++) {
      expect(presses, "stepped back to awaiting_operator_confirm").toBeLessThan(200);
      const state = await fsm.getAttribute("data-state");
      const event = (await page.getByTestId("replay-event").textContent()) ?? "";
      if (state === "awaiting_operator_confirm" && !event.includes("OperatorConfirmed")) break;
      await page.keyboard.press("ArrowLeft");
      position -= 1;
      await page.waitForURL((url) => positionOf(url.toString()) === position);
      // The server rendered the state at the new position.
      await page.getByText(`State at event ${position}`, { exact: true }).waitFor();
    }
    // The URL carries the position: a fresh load of it shows the same state.
    const replayUrl = page.url();
    expect(positionOf(replayUrl)).toBeLessThan(head);
    await page.goto(replayUrl);
    await expect.poll(() => fsm.getAttribute("data-state")).toBe("awaiting_operator_confirm");
    expect(await page.getByTestId("replay-status").textContent()).toContain("active");
    const outputs = await page.locator("article", { hasText: "roundtable discussion" }).count();
    expect(outputs).toBe(3);
    await page.screenshot({ path: path.join(SCREENSHOTS, "replay.png") });
    // Home and End jump to the first and latest events.
    await page.keyboard.press("Home");
    await page.waitForURL((url) => positionOf(url.toString()) === 1);
    await page.keyboard.press("End");
    await page.waitForURL((url) => positionOf(url.toString()) === head);
    await expect.poll(() => fsm.getAttribute("data-state")).toBe("approved");

    // Rerun: a fork of the demo session, shown in the tree from either end.
    const rerun = await trpcMutation<{ sessionId: string; parentId: string }>(page, "tasks.rerun", { sessionId: demoSessionId });
    expect(rerun.parentId).toBe(demoSessionId);
    await page.goto(`${base}/sessions/${rerun.sessionId}/tree`);
    const nodes = page.getByTestId("fork-node");
    await expect.poll(() => nodes.count()).toBe(2);
    expect(await nodes.nth(0).getAttribute("data-session-id")).toBe(demoSessionId);
    expect(await nodes.nth(1).getAttribute("data-session-id")).toBe(rerun.sessionId);
    expect(await nodes.nth(1).getAttribute("data-fork-reason")).toBe("rerun");
    expect(await nodes.nth(0).textContent()).toContain("Approved");
    await waitForTask(page, rerun.sessionId, (t) => t.fsm === "awaiting_operator_confirm", "the rerun's roundtable");
    await page.reload();
    await expect.poll(() => page.getByTestId("fork-tree-summary").textContent()).toContain("1 fork (1 rerun)");
    await page.screenshot({ path: path.join(SCREENSHOTS, "fork-tree.png") });
    await page.goto(`${base}/sessions/${demoSessionId}/tree`);
    await expect.poll(() => nodes.count()).toBe(2);

    // Settings: projects with the allowlist, agents, shells, brains, and the workflow diagram.
    await page.goto(`${base}/settings/projects`);
    await expect.poll(() => page.getByTestId("allowlist").textContent()).toContain("--test");
    await page.goto(`${base}/settings/agents`);
    await expect.poll(() => page.locator("table").textContent()).toContain("coder-sim");
    await page.goto(`${base}/settings/brains`);
    await expect.poll(() => page.getByTestId("brains").textContent()).toContain("scripted");
    await page.goto(`${base}/settings/shells`);
    await expect.poll(() => page.getByRole("heading", { name: "Shells" }).count()).toBe(1);
    await page.goto(`${base}/settings/workflows`);
    const diagram = page.locator('[data-testid=workflow-diagram][data-workflow="review_loop"]');
    await expect.poll(() => diagram.locator("[data-testid=diagram-state]").count(), { timeout: 20_000 }).toBe(15); // 14 states + "any active state"
    await expect.poll(() => diagram.locator(".react-flow__edge").count()).toBeGreaterThanOrEqual(17);
    expect(await diagram.locator('[data-state="awaiting_operator_confirm"]').count()).toBe(1);
    await page.setViewportSize({ width: 1440, height: 1300 });
    await sleep(300);
    await page.screenshot({ path: path.join(SCREENSHOTS, "settings-workflows.png") });
    await page.setViewportSize({ width: 1440, height: 900 });

    // Sign out from the header.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/signin/);
    await page.goto(`${base}/settings/workflows`);
    await page.waitForURL(/\/signin\?callbackUrl=/);
    // Signed out, the same crafted callbacks show the sign-in page (no 500).
    for (const query of ["/%09/evil.example/phish", "/%0a/evil.example", "//evil.example"]) {
      expect((await fetch(`${base}/signin?callbackUrl=${query}`)).status, query).toBe(200);
    }

    expect(pageErrors).toEqual([]);
    await context.close();
  }, 300_000);
});
