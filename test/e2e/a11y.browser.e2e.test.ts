// Every page for every person and screen in a real browser against one real
// `npm start`: axe-core finds no serious or critical violation on any page, signed out and
// in, light and dark; at 390 × 844 (a phone) and 1280 × 800 (a laptop) no page scrolls
// sideways and each page's primary action can be reached; the phone header's menu works
// from the keyboard; unknown pages answer a real 404 with the branded page; state badges
// speak people's words. Screenshots land in test/e2e/screenshots/ (look at them).
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshot, SCREENSHOTS_DIR, signIn } from "../helpers/browser";
import { LIVE_SERVER_TIMEOUT_MS, ROOT, startLiveServer, type LiveServer } from "../helpers/live-server";
import { tail } from "../helpers/processes";

const AXE_SOURCE = path.join(ROOT, "node_modules/axe-core/axe.min.js");

let app: LiveServer;
let browser: Browser;
/** The demo session once approved, and its rerun waiting for a confirm. */
let approvedId = "";
let awaitingId = "";
let conversationHref = "";
/** The Forge demo, waiting at its PRD gate. */
let forgeId = "";

interface PageCase {
  name: string;
  path: () => string;
  signedIn: boolean;
  /** What a person came to the page to do (or read first). */
  primary: (page: Page) => Locator;
}

const PAGES: PageCase[] = [
  { name: "signin", path: () => "/signin", signedIn: false, primary: (p) => p.getByRole("button", { name: "Sign in" }) },
  { name: "dashboard", path: () => "/", signedIn: true, primary: (p) => p.locator("[data-session-row] a").first() },
  { name: "session-awaiting", path: () => `/sessions/${awaitingId}`, signedIn: true, primary: (p) => p.getByTestId("confirm-button") },
  { name: "session-approved", path: () => `/sessions/${approvedId}`, signedIn: true, primary: (p) => p.getByTestId("rerun-button") },
  { name: "replay", path: () => `/sessions/${approvedId}/replay`, signedIn: true, primary: (p) => p.getByTestId("replay-scrubber") },
  // Moved back: the events after the position are listed too, muted (they once were dimmed below AA).
  {
    name: "replay-earlier",
    path: () => `/sessions/${approvedId}/replay?at=4`,
    signedIn: true,
    primary: (p) => p.getByTestId("replay-scrubber"),
  },
  { name: "forge", path: () => `/sessions/${forgeId}`, signedIn: true, primary: (p) => p.getByTestId("stage-rail") },
  { name: "tree", path: () => `/sessions/${approvedId}/tree`, signedIn: true, primary: (p) => p.getByTestId("fork-node").last() },
  { name: "settings", path: () => "/settings", signedIn: true, primary: (p) => p.getByRole("navigation", { name: "Settings" }) },
  {
    name: "settings-projects",
    path: () => "/settings/projects",
    signedIn: true,
    primary: (p) => p.getByRole("button", { name: "Add project" }),
  },
  { name: "settings-agents", path: () => "/settings/agents", signedIn: true, primary: (p) => p.locator("main table").first() },
  { name: "settings-shells", path: () => "/settings/shells", signedIn: true, primary: (p) => p.getByRole("heading", { name: "Shells" }) },
  { name: "settings-brains", path: () => "/settings/brains", signedIn: true, primary: (p) => p.getByTestId("brains") },
  {
    name: "settings-workflows",
    path: () => "/settings/workflows",
    signedIn: true,
    primary: (p) => p.locator('[data-testid=workflow-diagram][data-workflow="review_loop"]'),
  },
  {
    name: "settings-users",
    path: () => "/settings/users",
    signedIn: true,
    primary: (p) => p.getByRole("button", { name: "Create invitation link" }),
  },
  {
    name: "settings-tokens",
    path: () => "/settings/tokens",
    signedIn: true,
    primary: (p) => p.getByRole("button", { name: "Create token" }),
  },
  { name: "new-task", path: () => "/sessions/new", signedIn: true, primary: (p) => p.getByRole("button", { name: "Start task" }) },
  { name: "inbox", path: () => "/inbox", signedIn: true, primary: (p) => p.getByTestId("inbox-item").first() },
  { name: "usage", path: () => "/usage", signedIn: true, primary: (p) => p.getByTestId("usage-total") },
  { name: "chat", path: () => "/conversations", signedIn: true, primary: (p) => p.getByRole("button", { name: "Start conversation" }) },
  { name: "conversation", path: () => conversationHref, signedIn: true, primary: (p) => p.getByRole("textbox").first() },
  { name: "not-found", path: () => "/no-such-page", signedIn: true, primary: (p) => p.getByRole("link", { name: /dashboard/i }).last() },
];

async function trpc<T>(page: Page, procedure: string, input: unknown, mutation = false): Promise<T> {
  const url = `${app.url}/api/trpc/${procedure}`;
  const res = mutation
    ? await page.request.post(url, { data: input })
    : await page.request.get(`${url}?input=${encodeURIComponent(JSON.stringify(input))}`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

async function waitForTask(page: Page, sessionId: string, done: (t: { fsm: string; status: string }) => boolean, what: string) {
  const deadline = Date.now() + 120_000;
  let last: { fsm: string; status: string } | null = null;
  while (Date.now() < deadline) {
    last = await trpc<{ fsm: string; status: string }>(page, "tasks.get", { sessionId });
    if (done(last)) return;
    await sleep(300);
  }
  throw new Error(`${sessionId} never reached ${what} (last ${JSON.stringify(last)}):\n${tail(app.process.output())}`);
}

async function open(opts: { colorScheme: "light" | "dark"; width: number; height: number; signedIn: boolean }): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: opts.width, height: opts.height }, colorScheme: opts.colorScheme });
  const page = await context.newPage();
  if (opts.signedIn) await signIn(page, app.url, app.admin.email, app.admin.password);
  return page;
}

/** Loads a page and waits until its client parts have rendered. */
async function visit(page: Page, pathname: string): Promise<void> {
  await page.goto(`${app.url}${pathname}`);
  await page.waitForLoadState("networkidle").catch(() => {});
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: AXE_SOURCE });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

function describeViolations(where: string, violations: AxeViolation[]): string {
  return violations
    .map(
      (v) =>
        `${where}: [${v.impact}] ${v.id} — ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("\n")}`,
    )
    .join("\n");
}

beforeAll(async () => {
  app = await startLiveServer("a11y");
  browser = await launchChromium();
  const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
  // The demo proposal: confirm it and wait for approved; its rerun waits for a confirm.
  approvedId = app.demoSessionId;
  await waitForTask(page, approvedId, (t) => t.fsm === "awaiting_operator_confirm", "awaiting_operator_confirm");
  await trpc(page, "tasks.confirm", { sessionId: approvedId, via: "button" }, true);
  await waitForTask(page, approvedId, (t) => t.status === "finished", "finished");
  awaitingId = (await trpc<{ sessionId: string }>(page, "tasks.rerun", { sessionId: approvedId }, true)).sessionId;
  await waitForTask(page, awaitingId, (t) => t.fsm === "awaiting_operator_confirm", "the rerun's awaiting_operator_confirm");
  await visit(page, "/");
  forgeId = ((await page.locator("[data-session-row]", { hasText: "Forge demo" }).first().getAttribute("data-href")) ?? "").replace(
    /^\/sessions\//,
    "",
  );
  expect(forgeId).not.toBe("");
  await waitForTask(page, forgeId, (t) => t.fsm === "prd_review", "the Forge demo's PRD gate");
  await visit(page, "/conversations");
  conversationHref = (await page.getByTestId("conversation-list").locator("a").first().getAttribute("href")) ?? "";
  expect(conversationHref).toMatch(/^\/conversations\//);
  await page.context().close();
}, LIVE_SERVER_TIMEOUT_MS + 240_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await app?.stop();
}, 60_000);

describe("accessibility on every page", () => {
  for (const colorScheme of ["light", "dark"] as const) {
    it(`axe finds no serious or critical violation, ${colorScheme}`, async () => {
      const signedOut = await open({ colorScheme, width: 1280, height: 800, signedIn: false });
      const signedIn = await open({ colorScheme, width: 1280, height: 800, signedIn: true });
      const report: string[] = [];
      for (const c of PAGES) {
        const page = c.signedIn ? signedIn : signedOut;
        await visit(page, c.path());
        await c.primary(page).first().waitFor({ timeout: 20_000 });
        const violations = await axeViolations(page);
        if (violations.length) report.push(describeViolations(`${c.name} (${colorScheme})`, violations));
      }
      expect(report.join("\n"), "axe violations").toBe("");
      await signedOut.context().close();
      await signedIn.context().close();
    }, 300_000);
  }
});

describe("layout at a phone's and a laptop's width", () => {
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    it(`no page scrolls sideways at ${width} × ${height}, and each page's primary action is reachable`, async () => {
      const signedOut = await open({ colorScheme: "light", width, height, signedIn: false });
      const signedIn = await open({ colorScheme: "light", width, height, signedIn: true });
      const problems: string[] = [];
      for (const c of PAGES) {
        const page = c.signedIn ? signedIn : signedOut;
        await visit(page, c.path());
        const primary = c.primary(page).first();
        await primary.waitFor({ timeout: 20_000 });
        const { scrollWidth, clientWidth } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: document.documentElement.clientWidth,
        }));
        if (scrollWidth > clientWidth) problems.push(`${c.name}: the page is ${scrollWidth} px wide in a ${clientWidth} px window`);
        // Reachable by scrolling down only: once scrolled to, it lies inside the window's width.
        await primary.scrollIntoViewIfNeeded();
        const box = await primary.boundingBox();
        const scrollX = await page.evaluate(() => window.scrollX);
        if (!box || box.width === 0) problems.push(`${c.name}: the primary action is not shown`);
        else if (scrollX !== 0 || box.x < 0 || box.x + Math.min(box.width, 44) > clientWidth)
          problems.push(`${c.name}: the primary action is off to the side (x ${box.x}, width ${box.width}, window ${clientWidth})`);
        await screenshot(page, `layout-${width}-${c.name}.png`);
      }
      expect(problems).toEqual([]);
      await signedOut.context().close();
      await signedIn.context().close();
    }, 300_000);
  }

  it("the phone header folds the navigation into a menu that works from the keyboard", async () => {
    const page = await open({ colorScheme: "light", width: 390, height: 844, signedIn: true });
    await visit(page, `/sessions/${awaitingId}`);
    const nav = page.getByRole("navigation", { name: "Main" });
    const menu = page.getByRole("button", { name: "Menu" });
    expect(await nav.isVisible()).toBe(false);
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await menu.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => menu.getAttribute("aria-expanded")).toBe("true");
    expect(await nav.isVisible()).toBe(true);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.closest("nav")?.getAttribute("aria-label"))).toBe("Main");
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, "layout-390-menu-open.png") }); // the viewport: the open menu
    await page.keyboard.press("Escape");
    await expect.poll(() => menu.getAttribute("aria-expanded")).toBe("false");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent)).toBe(
      "Menu",
    );
    // The session's title stays readable: the whole line, not "D.".
    const title = page.getByRole("heading", { level: 1 });
    const box = await title.boundingBox();
    expect(box!.width).toBeGreaterThan(200);
    // At a laptop's width the navigation is shown and the menu button is not.
    await page.setViewportSize({ width: 1280, height: 800 });
    await expect.poll(() => nav.isVisible()).toBe(true);
    expect(await menu.isVisible()).toBe(false);
    await page.context().close();
  }, 120_000);

  it("the dashboard's table gets the width first at 1280 px: every column is inside it", async () => {
    const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
    await visit(page, "/");
    const table = page.locator("table:has([data-session-rows])");
    const wrapper = await table.evaluate((t) => {
      const scroller = t.parentElement!;
      return { scrollWidth: scroller.scrollWidth, clientWidth: scroller.clientWidth };
    });
    expect(wrapper.scrollWidth, "the sessions table is cut").toBeLessThanOrEqual(wrapper.clientWidth);
    const lastHeader = await table.locator("thead th").last().boundingBox();
    expect(lastHeader!.x + lastHeader!.width).toBeLessThanOrEqual(1280);
    // The runners panel sits below the table, not beside it.
    const tableBox = await table.boundingBox();
    const runners = await page.getByRole("heading", { name: "Runners" }).boundingBox();
    expect(runners!.y).toBeGreaterThan(tableBox!.y + tableBox!.height);
    await page.context().close();
  }, 60_000);
});

describe("the Forge page and simulated agents", () => {
  for (const [width, height] of [
    [390, 844],
    [1280, 800],
  ] as const) {
    it(`the Forge page opens at its stage row with the gate's buttons in view at ${width} × ${height}, and says its agents are simulated`, async () => {
      const page = await open({ colorScheme: "light", width, height, signedIn: true });
      await visit(page, `/sessions/${forgeId}`);
      const rail = page.getByTestId("stage-rail");
      const pass = page.getByTestId("gate-pass");
      await pass.waitFor({ timeout: 20_000 });
      // Whatever loads or streams after the first paint: still where it opened a moment later.
      await sleep(1_500);
      const inView = async (what: string, locator: Locator) => {
        const box = await locator.boundingBox();
        expect(box, what).not.toBeNull();
        expect(box!.y, `${what}'s top (scrolled ${await page.evaluate(() => window.scrollY)})`).toBeGreaterThanOrEqual(0);
        expect(box!.y + box!.height, `${what}'s bottom`).toBeLessThanOrEqual(height);
      };
      await inView("the stage row", rail.locator("li").first());
      await inView("the gate's pass button", pass);
      const note = page.getByTestId("simulated-session-note");
      expect(await note.innerText()).toMatch(/Simulated agents: canned content/);
      expect(await note.innerText()).toMatch(/word counter/);
      await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `forge-open-${width}.png`) }); // the viewport as it opened
      await page.context().close();
    }, 60_000);
  }

  it("a Forge page opened while its pipeline runs stays at its stage row as the events arrive", async () => {
    const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
    const { sessionId } = await trpc<{ sessionId: string }>(
      page,
      "forge.new",
      { projectId: "demo", idea: "A tiny to-do list for the terminal" },
      true,
    );
    // Opened at once (not after the network is idle): the idea's draft streams in while the page loads.
    await page.goto(`${app.url}/sessions/${sessionId}`);
    await page.getByTestId("gate-pass").waitFor({ timeout: 30_000 });
    await sleep(1_500);
    expect(await page.evaluate(() => window.scrollY), "the page scrolled by itself").toBe(0);
    const pass = await page.getByTestId("gate-pass").boundingBox();
    expect(pass!.y + pass!.height).toBeLessThanOrEqual(800);
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, "forge-open-running-1280.png") });
    await page.context().close();
  }, 60_000);

  it("New task's warning about simulated agents names the chosen workflow", async () => {
    const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
    await visit(page, "/sessions/new");
    await page.getByLabel("Project").selectOption("demo");
    const note = page.getByTestId("simulated-note");
    await page.getByLabel("Workflow").selectOption("review_loop");
    expect(await note.getAttribute("data-workflow")).toBe("review_loop");
    expect(await note.innerText()).toMatch(/simulated.*slugify\(\)/s);
    expect(await note.innerText()).not.toMatch(/Forge|word counter/);
    await page.getByLabel("Workflow").selectOption("forge");
    await expect.poll(() => note.getAttribute("data-workflow")).toBe("forge");
    expect(await note.innerText()).toMatch(/In Forge .*word counter/);
    expect(await note.innerText()).not.toMatch(/slugify/);
    await screenshot(page, "new-task-simulated-forge.png");
    await page.context().close();
  }, 60_000);
});

describe("not found", () => {
  it("unknown sessions, their replay and tree and unknown paths answer 404 with the branded page and a way back", async () => {
    const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
    for (const pathname of [
      "/sessions/s-0000000000000000",
      "/sessions/s-0000000000000000/replay",
      "/sessions/s-0000000000000000/tree",
      "/no/such/page",
    ]) {
      const res = await page.goto(`${app.url}${pathname}`);
      expect(res!.status(), pathname).toBe(404);
      expect(await page.getByRole("heading", { level: 1 }).innerText(), pathname).toMatch(/not found/i);
      expect(await page.getByRole("navigation", { name: "Main" }).count(), pathname).toBe(1);
      expect(await page.getByRole("link", { name: "Back to the dashboard" }).getAttribute("href"), pathname).toBe("/");
    }
    await screenshot(page, "not-found.png");
    await page.context().close();
  }, 60_000);
});

describe("words people use", () => {
  it("badges show labels with the state id kept for tests and on hover; finished sessions show no live dot; row links are visible without hover", async () => {
    const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
    await visit(page, "/");
    const awaitingRow = page.locator(`[data-session-row][data-href="/sessions/${awaitingId}"]`);
    const badge = awaitingRow.locator("[data-state]").first();
    expect(await badge.getAttribute("data-state")).toBe("awaiting_operator_confirm");
    expect(await badge.getAttribute("title")).toContain("awaiting_operator_confirm");
    expect(await badge.innerText()).toBe("Waiting for your confirm");
    // Replay and tree links are there for touch, not only on hover.
    expect(await awaitingRow.getByRole("link", { name: "replay" }).isVisible()).toBe(true);
    expect(await awaitingRow.getByRole("link", { name: "tree" }).isVisible()).toBe(true);

    await visit(page, `/sessions/${approvedId}`);
    expect(await page.getByTestId("state-badge").locator("[data-state]").innerText()).toBe("Approved");
    expect(await page.getByTestId("live-indicator").innerText()).not.toMatch(/live/);
    await page.context().close();
  }, 60_000);

  it("single-key shortcuts can be turned off, and the choice is kept", async () => {
    const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
    await visit(page, "/");
    const firstRow = page.locator("[data-session-row]").first();
    await page.keyboard.press("j");
    await expect.poll(() => firstRow.getAttribute("data-selected")).toBe("");
    const toggle = page.getByRole("checkbox", { name: "Single-key shortcuts" });
    expect(await toggle.isChecked()).toBe(true);
    await toggle.uncheck();
    await visit(page, "/");
    expect(await page.getByRole("checkbox", { name: "Single-key shortcuts" }).isChecked()).toBe(false);
    await page.locator("body").click({ position: { x: 5, y: 300 } });
    await page.keyboard.press("j");
    await sleep(300);
    expect(await firstRow.getAttribute("data-selected")).toBeNull();
    await page.getByRole("checkbox", { name: "Single-key shortcuts" }).check();
    await page.context().close();
  }, 60_000);

  it("a fork tree without forks points at the Rerun button, not the API or the CLI", async () => {
    const page = await open({ colorScheme: "light", width: 1280, height: 800, signedIn: true });
    await visit(page, "/");
    // The Forge demo has never been forked.
    const href = await page.locator("[data-session-row]", { hasText: "Forge demo" }).first().getAttribute("data-href");
    await visit(page, `${href}/tree`);
    const lineage = await page.getByTestId("fork-tree-summary").locator("xpath=ancestor::section[1]").innerText();
    expect(lineage).toContain("No forks yet. Use Rerun on the session's page");
    expect(lineage).not.toMatch(/POST \/api|catcafe /);
    await page.context().close();
  }, 60_000);
});
