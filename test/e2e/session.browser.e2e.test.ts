// The session view in a real browser (Debian chromium through playwright-core) against a
// real `npm start`: an admin signs in, opens the demo session (a proposal waiting for
// confirm) and sees the roundtable as discussion; a viewer sees no Confirm button and a
// forged confirm from the viewer's cookie is refused (403); the admin confirms with the
// keyboard and watches the session go to `approved` live, without a reload; the export
// downloads a zip holding summary.json; a cancelled session's workspace is cleaned up from its
// page; an admin edits settings (a viewer cannot); the demo's
// conversations, one per collaboration mode, are read and driven in the browser. Then a
// start without ADMIN_* prints a setup link that creates the first admin. Screenshots land in test/e2e/screenshots/.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { unzipSync } from "fflate";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stateLabel } from "../../lib/state-labels";
import { layoutProblems } from "../helpers/axe";
import { launchChromium, screenshot, signIn, trpcMutate as mutate } from "../helpers/browser";
import { freePort } from "../helpers/ports";
import {
  descendantRunning,
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
import { startBrainStub } from "../helpers/brains-stub";
import { FIXED_SUM, makeSumRepo, reviewApprove, testPlan } from "../helpers/tasks";
import { BRAIN_MODEL, CLI_MODEL, startUsageBrain, USAGE_PRICING, usageProject } from "../helpers/usage";

const ROOT = path.resolve(import.meta.dirname, "../..");
const START_TIMEOUT_MS = 60_000;
const DEMO_LINE = /\[catcafe\] demo: created project "demo" and a proposal task waiting for your confirm: (s-[0-9a-f]+)[;\n]/;
const FORGE_LINE = /a Forge pipeline \(it waits at its PRD gate\): (s-[0-9a-f]+)/;
const SETUP_LINE = /no user yet: create the first admin at (http:\/\/\S+)/;
const ADMIN = { email: "ada@cats.test", password: "correct-horse-battery", name: "Ada Admin" };
const VIEWER = { email: "vic@cats.test", password: "viewer-password-123", name: "Vic Viewer" };

interface Instance {
  dataDir: string;
  port: number;
  baseUrl: string;
  proc: StartedProcess;
}

const instances: Instance[] = [];
let browser: Browser | null = null;

async function startCatCafe(env: Record<string, string>): Promise<Instance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-browser-e2e-"));
  const port = await freePort();
  const pgPort = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    CATCAFE_DATA_DIR: dataDir,
    PORT: String(port),
    CATCAFE_PG_PORT: String(pgPort),
    CATCAFE_LOG_LEVEL: "info",
    ...env,
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
    delete childEnv[name];
  if (!env.ADMIN_EMAIL) for (const name of ["ADMIN_EMAIL", "ADMIN_PASSWORD", "ADMIN_NAME"]) delete childEnv[name];
  const proc = startProcess(process.execPath, ["--import", "tsx", "scripts/start.ts"], { cwd: ROOT, env: childEnv, detached: true });
  const instance = { dataDir, port, baseUrl: `http://127.0.0.1:${port}`, proc };
  instances.push(instance);
  // start.ts rebuilds first when the sources changed since the last build (then it takes minutes).
  await waitForOutput(proc, /\[catcafe\] (ready: |.*running `next build` first)/, START_TIMEOUT_MS);
  await waitForOutput(
    proc,
    /\[catcafe\] ready: /,
    /running `next build` first/.test(proc.output()) ? WEB_BUILD_TIMEOUT_MS : START_TIMEOUT_MS,
  );
  await waitForHealth(`${instance.baseUrl}/api/health`, proc, { minRunners: 1, timeoutMs: 10_000 });
  return instance;
}

async function stop(instance: Instance): Promise<void> {
  process.kill(-instance.proc.pid, "SIGINT");
  const status = await waitForExit(instance.proc, 30_000);
  expect(status, tail(instance.proc.output())).toEqual({ code: 0, signal: null });
  await waitUntil(() => processesMentioning(instance.dataDir).length === 0, 15_000, `no process mentions ${instance.dataDir}`);
}

beforeAll(async () => {
  await ensureWebBuild();
  browser = await launchChromium();
}, WEB_BUILD_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  for (const instance of instances) {
    killTree(instance.proc.pid);
    for (const p of processesMentioning(instance.dataDir)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await waitUntil(() => processesMentioning(instance.dataDir).length === 0, 10_000, "leftovers are gone").catch(() => {});
    fs.rmSync(instance.dataDir, { recursive: true, force: true });
  }
});

/** A fresh browser context (its own cookies), dark or light. */
async function newPage(colorScheme: "light" | "dark" = "light"): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser!.newContext({ viewport: { width: 1440, height: 900 }, colorScheme, acceptDownloads: true });
  const page = await context.newPage();
  return { context, page };
}

const badge = (page: Page) => page.getByTestId("state-badge");

describe("the session view", () => {
  let app: Instance;
  // Each test makes what it needs (its own session, its own pages), so they pass in any
  // order; only the instance and the accounts are shared.
  let viewerCreated: Promise<void> | null = null;

  beforeAll(async () => {
    app = await startCatCafe({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ADMIN_NAME: ADMIN.name });
  }, WEB_BUILD_TIMEOUT_MS + START_TIMEOUT_MS);

  afterAll(async () => {
    // Ctrl+C stops everything cleanly (exit 0, nothing left running).
    if (app) await stop(app);
  }, 45_000);

  async function adminAt(pathname: string, colorScheme: "light" | "dark" = "light"): Promise<Page> {
    const { page } = await newPage(colorScheme);
    await signIn(page, app.baseUrl, ADMIN.email, ADMIN.password, pathname);
    return page;
  }

  /** A new proposal task on the demo project, started by the admin; its id. */
  async function newProposal(page: Page, prompt = "Fix slugify() so the tests pass"): Promise<string> {
    const started = await mutate(page, "tasks.start", { projectId: "demo", prompt, mode: "proposal" });
    expect(started.status, started.body).toBe(200);
    return (JSON.parse(started.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;
  }

  function ensureViewer(page: Page): Promise<void> {
    viewerCreated ??= mutate(page, "users.create", { ...VIEWER, role: "viewer" }).then((created) => {
      expect(created.status, created.body).toBe(200);
    });
    return viewerCreated;
  }

  async function awaitingConfirm(page: Page): Promise<void> {
    // The roundtable may still be running as the page opens: the badge follows it live.
    await expect.poll(() => badge(page).getAttribute("data-state"), { timeout: 30_000 }).toBe("awaiting_operator_confirm");
  }

  it("an admin signs in, opens the demo session and sees the roundtable as discussion, each labelled simulated", async () => {
    const demoId = DEMO_LINE.exec(app.proc.output())![1]!;
    const adminPage = await adminAt(`/sessions/${demoId}`);
    await awaitingConfirm(adminPage);
    await expect.poll(() => adminPage.getByTestId("live-indicator").getAttribute("data-connection"), { timeout: 10_000 }).toBe("live");
    const discussion = adminPage.getByTestId("timeline").getByTestId("discussion-entry");
    await expect.poll(() => discussion.count(), { timeout: 10_000 }).toBe(3);
    expect(await discussion.evaluateAll((els) => els.map((e) => e.getAttribute("data-role")))).toEqual(["coder", "reviewer", "tester"]);
    for (let i = 0; i < 3; i++) {
      const text = await discussion.nth(i).innerText();
      expect(text).toMatch(/discussion/i);
      expect(text).toMatch(/simulated/i);
    }
    expect(await adminPage.getByTestId("verdict").count()).toBe(0);
    // Proposal and critiques side by side, with Confirm and Follow up instead.
    const review = adminPage.getByTestId("proposal-review");
    await review.getByTestId("proposal-coder").waitFor();
    expect(await review.getByTestId("proposal-reviewer").count()).toBe(1);
    expect(await review.getByTestId("proposal-tester").count()).toBe(1);
    expect(await adminPage.getByTestId("proposal-confirm").isVisible()).toBe(true);
    expect(await adminPage.getByTestId("proposal-follow-up").isVisible()).toBe(true);
    expect(await adminPage.getByTestId("confirm-button").isVisible()).toBe(true);
    await screenshot(adminPage, "session-awaiting-confirm.png");
  });

  it("the Forge demo in the pipeline view: the stage rail, the PRD waiting at its gate, an edit, feedback and a pass in the browser, live to Delivery", async () => {
    const forgeId = FORGE_LINE.exec(app.proc.output())![1]!;
    const page = await adminAt(`/sessions/${forgeId}`);
    const stage = (name: string) => page.getByTestId(`stage-${name}`);
    await expect.poll(() => stage("prd").getAttribute("data-state"), { timeout: 30_000 }).toBe("waiting");
    expect(await stage("idea").getAttribute("data-state")).toBe("completed");
    expect(await stage("design").getAttribute("data-state")).toBe("pending");
    await expect.poll(() => page.getByTestId("gate-actions").isVisible()).toBe(true);
    await screenshot(page, "forge-prd-gate.png");

    // An edit: the person retitles the PRD; the list then says who edited it, as v2.
    const prd = page.getByTestId("artifact-.forge/prd.md");
    await prd.click();
    await page.getByTestId("artifact-tab-edit").click();
    const editor = page.getByTestId("artifact-editor");
    await expect.poll(() => editor.inputValue()).toContain("# PRD: word counter");
    await editor.fill((await editor.inputValue()).replace("# PRD: word counter", "# PRD: wc, a word counter"));
    await page.getByTestId("artifact-save").click();
    await expect.poll(() => prd.textContent(), { timeout: 10_000 }).toContain(`v2 · edited by ${ADMIN.name}`);

    // Feedback: the actor drafts again; the gate comes back at iteration 2 with the person's title kept.
    await page.getByTestId("gate-text").fill("Drop the monitoring requirement: the idea does not ask for it.");
    await page.getByTestId("gate-feedback").click();
    await expect.poll(() => stage("prd").textContent(), { timeout: 30_000 }).toContain("iteration 2/5");
    await expect.poll(() => stage("prd").getAttribute("data-state"), { timeout: 30_000 }).toBe("waiting");
    await prd.click();
    await expect.poll(() => page.getByTestId("artifact-text").textContent(), { timeout: 10_000 }).toContain("# PRD: wc, a word counter");
    // The redraft kept the person's edit: v3, credited to both; the version menu is the same list.
    expect(await prd.textContent()).toContain(`v3 · agent, with ${ADMIN.name}'s edit kept`);
    const menu = (await page.getByTestId("artifact-version").locator("option").allTextContents()).map((o) =>
      o.split(" · ").slice(0, 2).join(" · "),
    );
    expect(menu).toEqual(["v1 · agent", `v2 · edited by ${ADMIN.name}`, `v3 · agent, with ${ADMIN.name}'s edit kept`]);
    expect(await page.getByTestId("artifact-text").textContent()).not.toContain("monitoring dashboard");
    await page.getByTestId("artifact-tab-diff").click();
    await expect.poll(() => page.getByTestId("artifact-diff").textContent()).toContain("− Count the lines");
    await screenshot(page, "forge-prd-diff.png");

    // Pass: the critic, then design, plan, coding, check and delivery run without a gate, live.
    await page.getByTestId("gate-pass").click();
    await expect.poll(() => stage("delivery").getAttribute("data-state"), { timeout: 60_000 }).toBe("completed");
    for (const name of ["idea", "prd", "design", "plan", "coding", "check"])
      expect(await stage(name).getAttribute("data-state")).toBe("completed");
    expect(await page.getByTestId("gate-actions").count()).toBe(0);
    await expect.poll(() => badge(page).getAttribute("data-state")).toBe("completed");
    // The summary counts each stage's runs and the critic's verdicts (the PRD drafted twice, then passed).
    await expect.poll(() => page.getByTestId("summary-iterations").textContent()).toContain("prd 2");
    expect(await page.getByTestId("summary-verdicts").textContent()).toBe("4 passed");
    await page.getByTestId("artifact-.forge/delivery_report.md").click();
    await expect.poll(() => page.getByTestId("artifact-text").textContent()).toContain("Delivery report");
    const download = page.waitForEvent("download");
    await page.getByTestId("artifact-download").click();
    const file = await (await download).path();
    expect(fs.readFileSync(file!, "utf8")).toContain("# Delivery report: word counter");
    await screenshot(page, "forge-completed.png");
  });

  /** A tRPC query with the page's cookie: its data. */
  async function query<T>(page: Page, procedure: string, input: unknown): Promise<T> {
    const body = await page.evaluate(async ([name, json]) => (await fetch(`/api/trpc/${name}?input=${encodeURIComponent(json)}`)).text(), [
      procedure,
      JSON.stringify(input),
    ] as const);
    return (JSON.parse(body) as { result: { data: T } }).result.data;
  }

  /** How many events of `type` the session has recorded. */
  async function countEvents(page: Page, sessionId: string, type: string): Promise<number> {
    const entries = await query<Array<{ type: string }>>(page, "sessions.timeline", { sessionId, limit: 1000 });
    return entries.filter((e) => e.type === type).length;
  }

  /** No error said on the page: no alert, no "internal error". */
  async function noErrorShown(page: Page, what: string): Promise<void> {
    // (Next.js's route announcer is an alert too: it reads the new page's title.)
    const alerts = page.locator("body > :not(next-route-announcer)").getByRole("alert").filter({ hasText: /\S/ });
    expect(await alerts.allInnerTexts(), what).toEqual([]);
    expect(await page.locator("body").innerText(), what).not.toMatch(/internal error/i);
  }

  it("double clicks do each thing once and show no error: Start task, Confirm in its dialog, Post, Forge feedback and Pass, settings Save, Deliver", async () => {
    const logFrom = app.proc.output().length;
    const page = await adminAt("/sessions/new");

    // Start task: one session, and the page lands on it.
    const prompt = `Double-clicked start ${Date.now()}`;
    await page.getByLabel("Project").selectOption("demo");
    await page.getByLabel("What should the cats do?").fill(prompt);
    await Promise.all([
      page.waitForURL(/\/sessions\/s-[0-9a-f]+$/, { timeout: 15_000 }),
      page.getByRole("button", { name: "Start task" }).dblclick(),
    ]);
    const sessionId = page.url().split("/").pop()!;
    const started = await query<{ items: Array<{ id: string }> }>(page, "sessions.list", { q: prompt });
    expect(started.items.map((i) => i.id)).toEqual([sessionId]);

    // Confirm, in its dialog: one OperatorConfirmed.
    await awaitingConfirm(page);
    await page.getByTestId("confirm-button").click();
    // The dialog over the dimmed page (no backdrop blur: see session-actions.tsx).
    await page.getByTestId("confirm-dialog-action").waitFor();
    await screenshot(page, "confirm-dialog.png");
    const wide = page.viewportSize()!;
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "confirm-dialog-390.png");
    await page.setViewportSize(wide);
    await page.getByTestId("confirm-dialog-action").dblclick();
    await expect.poll(() => badge(page).getAttribute("data-state"), { timeout: 30_000 }).not.toBe("awaiting_operator_confirm");
    expect(await countEvents(page, sessionId, "OperatorConfirmed")).toBe(1);
    await noErrorShown(page, "after Confirm");
    await screenshot(page, "double-click-confirm.png");

    // Post in a conversation: one message.
    const conversation = await mutate(page, "conversations.start", { projectId: "demo", title: "Double clicks" });
    expect(conversation.status, conversation.body).toBe(200);
    const conversationId = (JSON.parse(conversation.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;
    await page.goto(`${app.baseUrl}/conversations/${conversationId}`);
    await page.getByLabel("Message").fill("Posted with a double click");
    await page.getByRole("button", { name: "Post" }).dblclick();
    await entries(page, "person").filter({ hasText: "Posted with a double click" }).first().waitFor({ timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 1_000)); // a second post, had there been one, would be there by now
    expect(await entries(page, "person").filter({ hasText: "Posted with a double click" }).count()).toBe(1);
    expect(await countEvents(page, conversationId, "MessagePosted")).toBe(1);
    await noErrorShown(page, "after Post");

    // Forge: Pass at its first gate (the idea's, which takes edits only), then feedback at the PRD's.
    const forge = await mutate(page, "forge.new", { projectId: "demo", idea: "A word counter, double-clicked" });
    expect(forge.status, forge.body).toBe(200);
    const forgeId = (JSON.parse(forge.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;
    await page.goto(`${app.baseUrl}/sessions/${forgeId}`);
    await expect.poll(() => page.getByTestId("gate-actions").isVisible(), { timeout: 30_000 }).toBe(true);
    await page.getByTestId("gate-pass").dblclick();
    await expect.poll(() => countEvents(page, forgeId, "GatePassed"), { timeout: 10_000 }).toBe(1);
    await page.getByTestId("gate-text").waitFor({ timeout: 30_000 });
    expect(await countEvents(page, forgeId, "GatePassed")).toBe(1);
    await page.getByTestId("gate-text").fill("Say who counts the words.");
    await page.getByTestId("gate-feedback").dblclick();
    await expect.poll(() => countEvents(page, forgeId, "FeedbackGiven"), { timeout: 10_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await countEvents(page, forgeId, "FeedbackGiven")).toBe(1);
    await noErrorShown(page, "after the Forge gate");
    await screenshot(page, "double-click-forge.png");

    // Settings: one change saved.
    await page.goto(`${app.baseUrl}/settings/projects`);
    const demo = page.locator('section[aria-label="Settings of demo"]');
    const historyLength = async () => (await query<unknown[]>(page, "settings.history", { projectId: "demo" })).length;
    const before = await historyLength();
    await demo.locator('[id="project-demo-maxIterations"]').fill("4");
    await demo.getByRole("button", { name: "Save" }).dblclick();
    await demo.getByRole("status").filter({ hasText: "Saved 1 change(s)" }).waitFor({ timeout: 10_000 });
    expect(await historyLength()).toBe(before + 1);
    await noErrorShown(page, "after Save");
    await screenshot(page, "double-click-settings.png");
    // Nor did the server log any of it as a failure (a conflict taken for an internal error).
    const failures = app.proc
      .output()
      .slice(logFrom)
      .split("\n")
      .filter((line) => /procedure failed|handler failed|MCP tool failed/.test(line));
    expect(failures).toEqual([]);
    await page.context().close();
  }, 120_000);

  it("a viewer sees no Confirm button, and a forged confirm with the viewer's cookie is refused with 403", async () => {
    const adminPage = await adminAt("/");
    const sessionId = await newProposal(adminPage);
    await ensureViewer(adminPage);

    const { page: viewerPage } = await newPage("dark");
    await signIn(viewerPage, app.baseUrl, VIEWER.email, VIEWER.password, `/sessions/${sessionId}`);
    await awaitingConfirm(viewerPage);
    await viewerPage.getByTestId("viewer-note").waitFor();
    await expect.poll(() => viewerPage.getByTestId("discussion-entry").count(), { timeout: 10_000 }).toBe(3);
    for (const id of ["confirm-button", "proposal-confirm", "follow-up", "rerun-button", "cancel-button"])
      expect(await viewerPage.getByTestId(id).count(), id).toBe(0);
    // `c` does nothing for a viewer.
    await viewerPage.keyboard.press("c");
    expect(await viewerPage.getByTestId("confirm-dialog").count()).toBe(0);

    const forged = await mutate(viewerPage, "tasks.confirm", { sessionId, via: "button" });
    expect(forged.status, forged.body).toBe(403);
    expect(forged.body).toContain("FORBIDDEN");
    // Nothing moved: the session still waits for a confirm (read from the server, not a timer).
    await adminPage.goto(`${app.baseUrl}/sessions/${sessionId}`);
    expect(await badge(adminPage).getAttribute("data-state")).toBe("awaiting_operator_confirm");
    await adminPage.context().close();
    await viewerPage.context().close();
  });

  it("the admin follows up with `f`, confirms with `c` and watches the session reach approved live, without a reload; a stale tab's confirm is told it moved on", async () => {
    const adminPage = await adminAt("/");
    const sessionId = await newProposal(adminPage);
    await ensureViewer(adminPage);
    const { page: viewerPage } = await newPage("dark");
    await signIn(viewerPage, app.baseUrl, VIEWER.email, VIEWER.password, `/sessions/${sessionId}`);
    await adminPage.goto(`${app.baseUrl}/sessions/${sessionId}`);
    await awaitingConfirm(adminPage);
    await expect.poll(() => adminPage.getByTestId("live-indicator").getAttribute("data-connection"), { timeout: 10_000 }).toBe("live");

    let navigations = 0;
    adminPage.on("framenavigated", (frame) => {
      if (frame === adminPage.mainFrame()) navigations++;
    });
    await adminPage.evaluate(() => Object.assign(window, { __sameDocument: true }));

    // `f` focuses the follow-up box; a follow-up without a confirm signal builds nothing.
    await adminPage.keyboard.press("f");
    await adminPage.keyboard.type("What about emoji in titles?");
    await adminPage.keyboard.press("Control+Enter");
    await adminPage.getByTestId("operator-message").filter({ hasText: "What about emoji in titles?" }).waitFor({ timeout: 10_000 });
    await adminPage
      .getByTestId("system-reply")
      .filter({ hasText: /Pending confirmation/ })
      .waitFor({ timeout: 10_000 });
    expect(await badge(adminPage).getAttribute("data-state")).toBe("awaiting_operator_confirm");
    await adminPage.keyboard.press("Escape");

    // A second tab that misses the live updates (its event stream is blocked) stays stale.
    const stalePage = await adminPage.context().newPage();
    await stalePage.route("**/api/trpc/live.updates**", (route) => route.abort());
    await stalePage.goto(`${app.baseUrl}/sessions/${sessionId}`);
    await stalePage.getByTestId("confirm-button").waitFor();

    await adminPage.keyboard.press("c");
    const dialog = adminPage.getByTestId("confirm-dialog");
    await dialog.getByTestId("confirm-dialog-action").waitFor();
    expect(await dialog.innerText()).toContain(ADMIN.name);
    await adminPage.keyboard.press("Enter");

    // Work in progress shows who is working, with a ticking clock (the demo's steps are quick).
    const running = await adminPage
      .getByTestId("running-step")
      .waitFor({ timeout: 10_000 })
      .then(() => true)
      .catch(() => false);
    if (running) await screenshot(adminPage, "session-running.png").catch(() => {});
    await expect.poll(() => badge(adminPage).getAttribute("data-state"), { timeout: 60_000 }).toBe("approved");
    const verdict = adminPage.getByTestId("verdict");
    await verdict.first().waitFor();
    expect(await verdict.first().getByTestId("verdict-decision").innerText()).toMatch(/Approved/);
    const tests = adminPage.getByTestId("test-results");
    await tests.first().waitFor();
    expect(await tests.first().getByTestId("test-results-summary").innerText()).toBe("1/1 passed");
    const command = tests.first().getByTestId("test-command").first();
    expect(await command.getAttribute("data-passed")).toBe("true");
    expect(await command.getByTestId("exit-code").innerText()).toBe("exit 0");
    expect(await adminPage.getByTestId("confirmed").innerText()).toContain(ADMIN.name);
    expect(await adminPage.getByTestId("outcome").innerText()).toContain("Approved");

    expect(navigations).toBe(0);
    expect(await adminPage.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);

    // The coder's commit opens as a diff.
    await adminPage.getByTestId("build").first().getByTestId("diff-toggle").click();
    const diff = adminPage.getByTestId("diff-view").first();
    await diff.waitFor({ timeout: 10_000 });
    expect(await diff.innerText()).toContain("src/slugify.js");
    await adminPage.getByTestId("proposal-review").waitFor({ state: "detached" });
    await screenshot(adminPage, "session-approved.png");

    // The stale tab's confirm loses: it says the session already moved on and catches up.
    await stalePage.keyboard.press("c");
    await stalePage.getByTestId("confirm-dialog-action").waitFor();
    await stalePage.keyboard.press("Enter");
    await stalePage
      .getByTestId("notice")
      .filter({ hasText: /already moved on/ })
      .waitFor({ timeout: 10_000 });
    await expect.poll(() => badge(stalePage).getAttribute("data-state"), { timeout: 10_000 }).toBe("approved");
    await stalePage.close();

    // The viewer's page followed along too, also without a reload.
    await expect.poll(() => badge(viewerPage).getAttribute("data-state"), { timeout: 10_000 }).toBe("approved");
    await viewerPage.getByTestId("test-results").first().waitFor();
    await screenshot(viewerPage, "session-approved-dark.png");
  }, 120_000);

  it("an admin edits a brain's model and a project's iteration cap in Settings; each save is an event with its actor; a bad value's message sits beside its field; a viewer cannot", async () => {
    // A team's own project, added with the form (no script): a model is required for an HTTP agent.
    const adminPage = await adminAt("/settings/projects");
    const add = adminPage.locator('form[aria-label="Add project"]');
    await add.locator("#add-project-id").fill("shop");
    await add.locator("#add-project-name").fill("Shop");
    await add.locator("#add-project-repoPath").fill(path.join(app.dataDir, "demo-project"));
    await add.locator("#add-project-allowlist").fill("node --test **");
    await add.locator("#add-project-coder-kind").selectOption("simulated");
    await add.locator("#add-project-reviewer-kind").selectOption("openai");
    await add.locator("#add-project-tester-kind").selectOption("none");
    await add.getByRole("button", { name: "Add project" }).click();
    await add.getByRole("alert").filter({ hasText: "an openai agent needs its model" }).waitFor({ timeout: 10_000 });
    await add.getByLabel("reviewer model").fill("gpt-5");
    await add.getByRole("button", { name: "Add project" }).click();
    await add
      .getByTestId("add-project-done")
      .filter({ hasText: /\.catcafe\/ (loads without a problem|in the repository)|No \.catcafe/ })
      .waitFor({ timeout: 10_000 });
    await screenshot(adminPage, "settings-project-added.png");
    await adminPage.reload();
    const shop = adminPage.locator('section[aria-label="Settings of shop"]');
    const field = (name: string) => shop.locator(`[id="project-shop-${name}"]`);
    expect(await field("models.reviewer").inputValue()).toBe("gpt-5");
    expect(await shop.getByTestId("in-force-stepTimeoutMs").innerText()).toMatch(/600000\s+built-in/);

    await field("models.reviewer").fill("gpt-5-mini");
    await field("maxIterations").fill("5");
    await shop.getByRole("button", { name: "Save" }).click();
    await shop.getByRole("status").filter({ hasText: "Saved 2 change(s)" }).waitFor({ timeout: 10_000 });

    // The change is an event with the admin as its actor, and it is in the history.
    const history = await adminPage.evaluate(async () => {
      const res = await fetch(`/api/trpc/settings.history?input=${encodeURIComponent(JSON.stringify({ projectId: "shop" }))}`);
      return (await res.json()) as {
        result: { data: Array<{ version: number; actor: { kind: string }; actorName: string; changes: unknown[] }> };
      };
    });
    const [latest] = history.result.data;
    expect(latest).toMatchObject({
      actor: { kind: "user" },
      actorName: ADMIN.name,
      changes: [
        { path: ["agents", "reviewer", "model"], from: "gpt-5", to: "gpt-5-mini" },
        { path: ["maxIterations"], from: 3, to: 5 },
      ],
    });
    await adminPage.reload();
    expect(await field("models.reviewer").inputValue()).toBe("gpt-5-mini");
    expect(await field("maxIterations").inputValue()).toBe("5");

    // A value out of range: the files' message, beside its field; nothing is saved.
    await field("stepTimeoutMs").fill("0");
    await shop.getByRole("button", { name: "Save" }).click();
    const error = shop.locator('[id="project-shop-stepTimeoutMs-error"]');
    await error.waitFor({ timeout: 10_000 });
    expect(await error.innerText()).toBe("settings.timeouts.stepMs: 0 is out of range: must be at least 1");
    expect(await field("stepTimeoutMs").getAttribute("aria-invalid")).toBe("true");
    await screenshot(adminPage, "settings-project-invalid.png");
    const after = await adminPage.evaluate(async () => {
      const res = await fetch(`/api/trpc/settings.history?input=${encodeURIComponent(JSON.stringify({ projectId: "shop" }))}`);
      return ((await res.json()) as { result: { data: unknown[] } }).result.data.length;
    });
    expect(after).toBe(history.result.data.length);
    await screenshot(adminPage, "settings-projects.png");

    // Revert the model and the cap from the history: the form shows what was before, without a reload.
    await shop.locator("summary").filter({ hasText: "History" }).click();
    await shop.getByRole("button", { name: `Revert #${latest!.version}` }).click();
    await expect.poll(() => field("models.reviewer").inputValue(), { timeout: 10_000 }).toBe("gpt-5");
    expect(await field("maxIterations").inputValue()).toBe("3");
    expect(await field("stepTimeoutMs").inputValue()).toBe("");

    // An operator's session page shows the runtime context it ran with.
    const demoId = DEMO_LINE.exec(app.proc.output())![1]!;
    await adminPage.goto(`${app.baseUrl}/sessions/${demoId}`);
    const context = adminPage.getByTestId("runtime-context");
    await context.locator("summary").click();
    expect(await context.getByTestId("runtime-limits").innerText()).toMatch(/step 600000 ms · 4 attempts · backoff 1000, 2000, 4000 ms/);
    expect(await context.getByTestId("runtime-agent").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-role")))).toEqual([
      "coder",
      "reviewer",
      "tester",
    ]);
    // Its live worktree, named by the host of the runner that made it and the path there (docs/scaling.md).
    const worktrees = await context.getByTestId("runtime-worktrees").innerText();
    expect(worktrees.startsWith(`${os.hostname()}:/`), worktrees).toBe(true);
    expect(worktrees.endsWith(`/workspaces/${demoId}`), worktrees).toBe(true);
    expect(await layoutProblems(adminPage, "session-runtime-worktrees")).toEqual([]);

    // A viewer does not see the project settings, and a forged save is refused.
    await ensureViewer(adminPage);
    const { page: viewerPage } = await newPage();
    await signIn(viewerPage, app.baseUrl, VIEWER.email, VIEWER.password, "/settings/projects");
    expect(await viewerPage.locator('section[aria-label="Settings of shop"]').count()).toBe(0);
    const forged = await mutate(viewerPage, "settings.configureProject", { projectId: "shop", maxIterations: 9 });
    expect(forged.status, forged.body).toBe(403);
    await adminPage.context().close();
    await viewerPage.context().close();
  }, 60_000);

  it("the inbox shows a session that needs a person as it happens, live, with the count in the header; an operator acknowledges it", async () => {
    const adminPage = await adminAt("/inbox");
    await expect.poll(() => adminPage.getByTestId("inbox-connection").getAttribute("data-live"), { timeout: 10_000 }).toBe("true");
    const countNow = async () => {
      const badge = adminPage.getByTestId("inbox-count");
      return (await badge.count()) ? Number(await badge.innerText()) : 0;
    };
    const before = await countNow();
    let navigations = 0;
    adminPage.on("framenavigated", (frame) => {
      if (frame === adminPage.mainFrame()) navigations++;
    });
    // A proposal started elsewhere (the API) reaches its confirm while the inbox is open.
    const sessionId = await newProposal(adminPage, "Tell me when you need me");
    const item = adminPage.locator(`[data-testid="inbox-item"][data-session="${sessionId}"]`);
    await item.waitFor({ timeout: 30_000 });
    const shownAt = Date.now();
    expect(await item.innerText()).toMatch(/waits for a confirm/);
    await expect.poll(countNow, { timeout: 5_000 }).toBe(before + 1);
    // How long after the event the page showed it (from the event's own time; logged, not asserted).
    const timeline = async () =>
      adminPage.evaluate(async (id) => {
        const res = await fetch(`/api/trpc/sessions.timeline?input=${encodeURIComponent(JSON.stringify({ sessionId: id }))}`);
        return ((await res.json()) as { result: { data: Array<{ type: string; summary: string; recordedAt: string; actor: string }> } })
          .result.data;
      }, sessionId);
    const waiting = (await timeline()).find((e) => e.type === "SessionStateChanged" && e.summary.includes("waits for a person"));
    expect(waiting).toBeDefined();
    console.log(`inbox: shown ${shownAt - Date.parse(waiting!.recordedAt)} ms after the session started waiting`);
    await screenshot(adminPage, "inbox-live.png");

    await item.getByRole("button", { name: "Acknowledge" }).click();
    await item.waitFor({ state: "detached", timeout: 10_000 });
    await expect.poll(countNow, { timeout: 5_000 }).toBe(before);
    expect(navigations).toBe(0);
    const acked = (await timeline()).filter((e) => e.type === "AttentionAcknowledged");
    expect(acked.map((e) => [e.summary, e.actor.startsWith("user:")])).toEqual([["Acknowledged (waiting)", true]]);
    await adminPage.context().close();
  }, 90_000);

  it("cleans up a cancelled session's workspace from its page, after a confirm step; the page then says when and by whom; a phone and a laptop show it without problems", async () => {
    const page = await adminAt("/");
    const sessionId = await newProposal(page, "Start, then stop: nothing to keep");
    await page.goto(`${app.baseUrl}/sessions/${sessionId}`);
    await awaitingConfirm(page);
    const cancelled = await mutate(page, "tasks.cancel", { sessionId });
    expect(cancelled.status, cancelled.body).toBe(200);
    await expect.poll(() => badge(page).getAttribute("data-state"), { timeout: 30_000 }).toBe("cancelled");
    const worktree = path.join(app.dataDir, "workspaces", sessionId);
    expect(fs.existsSync(worktree)).toBe(true);

    const panel = page.getByTestId("workspace-panel");
    await page.getByTestId("clean-up-button").click();
    // Nothing happens before the confirm; "Keep it" takes the question back.
    await page.getByRole("button", { name: "Keep it" }).click();
    expect(fs.existsSync(worktree)).toBe(true);
    await page.getByTestId("clean-up-button").click();
    await screenshot(page, "workspace-clean-up-confirm.png");
    await page.getByTestId("clean-up-confirm").click();
    const pruned = page.getByTestId("workspace-pruned");
    await pruned.waitFor({ timeout: 30_000 });
    expect(await pruned.innerText()).toMatch(
      new RegExp(`^Workspace cleaned up \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC by ${ADMIN.name}\\.`),
    );
    expect(fs.existsSync(worktree)).toBe(false);
    expect(await panel.getByTestId("clean-up-button").count()).toBe(0);
    expect(await layoutProblems(page, "workspace-cleaned-up")).toEqual([]);
    await page.context().close();
  }, 90_000);

  it("Export downloads a zip holding summary.json", async () => {
    const adminPage = await adminAt("/");
    const sessionId = await newProposal(adminPage);
    await adminPage.goto(`${app.baseUrl}/sessions/${sessionId}`);
    await awaitingConfirm(adminPage);
    const confirmed = await mutate(adminPage, "tasks.confirm", { sessionId, via: "api" });
    expect(confirmed.status, confirmed.body).toBe(200);
    await expect.poll(() => badge(adminPage).getAttribute("data-state"), { timeout: 60_000 }).toBe("approved");

    const [download] = await Promise.all([adminPage.waitForEvent("download"), adminPage.getByTestId("export-link").click()]);
    const file = path.join(app.dataDir, `export-${sessionId}.zip`);
    await download.saveAs(file);
    const files = unzipSync(new Uint8Array(fs.readFileSync(file)));
    const summaryName = Object.keys(files).find((name) => name.endsWith("summary.json"));
    expect(summaryName, Object.keys(files).join(", ")).toBeDefined();
    const summary = JSON.parse(Buffer.from(files[summaryName!]!).toString("utf8")) as Record<string, unknown>;
    expect(JSON.stringify(summary)).toContain("approved");
    await adminPage.context().close();
  }, 90_000);

  it("forks an approved session from its replay at an event, with a note; the fork runs to approved and the tree shows why it was made", async () => {
    const adminPage = await adminAt("/");
    const started = await mutate(adminPage, "tasks.start", {
      projectId: "demo",
      prompt: "Fix slugify() so the tests pass",
      mode: "implementation",
    });
    expect(started.status, started.body).toBe(200);
    const parentId = (JSON.parse(started.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;
    await adminPage.goto(`${app.baseUrl}/sessions/${parentId}`);
    await expect.poll(() => badge(adminPage).getAttribute("data-state"), { timeout: 60_000 }).toBe("approved");

    // Pages rendered ahead by the router, unasked: none, although each event of the list and
    // each round is a link to the replay at it.
    const prefetched: string[] = [];
    adminPage.on("request", (r) => {
      if (r.headers()["next-router-prefetch"]) prefetched.push(r.url());
    });
    // A landmark on the scrubber says what it is on hover and goes there on a click (or a tap).
    await adminPage.goto(`${app.baseUrl}/sessions/${parentId}/replay?at=1`);
    const landmark = adminPage.getByTestId("replay-landmark").last();
    const title = (await landmark.getAttribute("title"))!;
    const at = Number(title.split(":")[0]);
    expect(at).toBeGreaterThan(1);
    await landmark.click();
    await expect.poll(() => adminPage.getByLabel("Event position").getAttribute("aria-valuetext")).toMatch(new RegExp(`^event ${at} of `));
    // An event of the list clicked at once, while the landmark's move waits to navigate: the
    // event's position is where the replay goes and stays.
    await Promise.all([
      adminPage.waitForURL(/\/replay\?at=3$/),
      adminPage.locator('[data-testid="replay-events"] a[href$="?at=3"]').click(),
    ]);
    await expect.poll(() => adminPage.getByLabel("Event position").getAttribute("aria-valuetext")).toMatch(/^event 3 of /);
    await new Promise((r) => setTimeout(r, 500)); // the landmark's move, had it not been dropped, would have landed by now
    expect(new URL(adminPage.url()).search).toBe("?at=3");
    expect(await adminPage.getByLabel("Event position").getAttribute("aria-valuetext")).toMatch(/^event 3 of /);
    expect(prefetched).toEqual([]);

    // Event 5: the build was scheduled; the fork builds again from there.
    await adminPage.goto(`${app.baseUrl}/sessions/${parentId}/replay?at=5`);
    await adminPage.getByTestId("fork-note").fill("build it again, from the same start");
    expect(await adminPage.getByTestId("fork-submit").innerText()).toContain("Fork at event 5");
    await screenshot(adminPage, "replay-fork-here.png");
    await Promise.all([
      adminPage.waitForURL((url) => /\/sessions\/s-[0-9a-f]+$/.test(url.pathname) && !url.pathname.endsWith(parentId), { timeout: 15_000 }),
      adminPage.getByTestId("fork-submit").click(),
    ]);
    const forkId = adminPage.url().split("/").pop()!;
    await expect.poll(() => badge(adminPage).getAttribute("data-state"), { timeout: 60_000 }).toBe("approved");

    // At the end of a finished session the replay also offers a modify; before its end, not.
    await adminPage.goto(`${app.baseUrl}/sessions/${parentId}/replay`);
    expect(await adminPage.getByLabel(/^Modify: make a change/).count()).toBe(1);
    await adminPage.goto(`${app.baseUrl}/sessions/${parentId}/replay?at=6`);
    expect(await adminPage.getByLabel(/^Modify: make a change/).count()).toBe(0);

    await adminPage.goto(`${app.baseUrl}/sessions/${parentId}/tree`);
    const node = adminPage.locator(`[data-testid=fork-node][data-session-id="${forkId}"]`);
    expect(await node.getAttribute("data-fork-reason")).toBe("manual");
    expect(await node.getByTestId("fork-note").innerText()).toContain("build it again, from the same start");
    expect(await node.innerText()).toContain("at event 5");
    await screenshot(adminPage, "fork-tree.png");
    await adminPage.context().close();
  }, 120_000);

  it("modifies a delivered Forge session from its page, then compares the two branches side by side", async () => {
    const adminPage = await adminAt("/");
    const started = await mutate(adminPage, "forge.new", {
      projectId: "demo",
      idea: "A command-line word counter with a unit test.",
      gates: [],
    });
    expect(started.status, started.body).toBe(200);
    const baseId = (JSON.parse(started.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;
    await adminPage.goto(`${app.baseUrl}/sessions/${baseId}`);
    await expect.poll(() => badge(adminPage).getAttribute("data-state"), { timeout: 90_000 }).toBe("completed");

    await adminPage.getByTestId("modify-change").fill("Add a --lines option that prints only the line count and the file.");
    await Promise.all([
      adminPage.waitForURL((url) => /\/sessions\/s-[0-9a-f]+$/.test(url.pathname) && !url.pathname.endsWith(baseId), { timeout: 15_000 }),
      adminPage.getByTestId("modify-submit").click(),
    ]);
    const modifyId = adminPage.url().split("/").pop()!;
    await expect.poll(() => adminPage.getByTestId("stage-change").getAttribute("data-state"), { timeout: 30_000 }).toBe("completed");
    await expect.poll(() => badge(adminPage).getAttribute("data-state"), { timeout: 90_000 }).toBe("completed");
    await adminPage.getByTestId("artifact-.forge/change_report.md").click();
    await expect.poll(() => adminPage.getByTestId("artifact-text").textContent()).toContain("## Patch");
    await screenshot(adminPage, "forge-modify-completed.png");

    await adminPage.goto(`${app.baseUrl}/sessions/${baseId}/tree`);
    await adminPage.locator(`[data-testid=fork-node][data-session-id="${modifyId}"]`).getByTestId("compare-link").click();
    await adminPage.waitForURL(new RegExp(`/sessions/${baseId}/compare\\?with=${modifyId}$`));
    expect(await adminPage.getByTestId("divergence").innerText()).toMatch(/^Both read events 1–\d+ \(s-/);
    expect(await adminPage.getByTestId("code-summary").innerText()).toMatch(/^1 file\(s\): \+\d+ −\d+ \(A → B\)$/);
    expect(await adminPage.getByTestId("diff-view").innerText()).toContain("bin/wc.js");
    const plan = adminPage.locator('[data-testid=artifact-pair][data-path=".forge/plan.json"]');
    expect(await plan.getAttribute("data-same")).toBe("false");
    expect(await plan.getByTestId("artifact-diff").innerText()).toContain("Add the --lines option");
    expect(await adminPage.locator('[data-testid=artifact-pair][data-path=".forge/prd.md"]').getAttribute("data-same")).toBe("true");
    expect(await adminPage.getByTestId("side-B").innerText()).toContain(`modify of ${baseId} at event`);
    expect(await adminPage.getByTestId("side-B").innerText()).toContain(`by ${ADMIN.name}`);
    expect(await adminPage.getByTestId("tests-B").innerText()).toContain("PASS node --test test/count.test.js");
    await screenshot(adminPage, "compare-branches.png");
    await adminPage.context().close();
  }, 240_000);

  it("starts a new proposal task on the demo project from the New task form and lands on its live session", async () => {
    const adminPage = await adminAt("/sessions/new");
    const currentNav = (page: Page) => page.getByRole("navigation", { name: "Main" }).locator('[aria-current="page"]');
    // The header marks New task here, and only here (not on every page under /sessions).
    expect(await currentNav(adminPage).allTextContents()).toEqual(["New task"]);
    await adminPage.getByLabel("Project").selectOption("demo");
    await adminPage.getByLabel("What should the cats do?").fill("Also make slugify() collapse repeated dashes");
    await screenshot(adminPage, "new-task.png");
    await Promise.all([
      adminPage.waitForURL(/\/sessions\/s-[0-9a-f]+$/, { timeout: 15_000 }),
      adminPage.getByRole("button", { name: "Start task" }).click(),
    ]);
    expect(adminPage.url().split("/").pop()).toMatch(/^s-[0-9a-f]+$/);
    expect(await currentNav(adminPage).allTextContents()).toEqual(["Dashboard"]);
    await awaitingConfirm(adminPage);
    await expect.poll(() => adminPage.getByTestId("timeline").getByTestId("discussion-entry").count(), { timeout: 10_000 }).toBe(3);
    await adminPage.context().close();
  }, 60_000);

  /** The demo's conversation in `mode` (one per mode is seeded), opened from the Chat page. */
  async function openDemoConversation(page: Page, mode: string): Promise<void> {
    await page.goto(`${app.baseUrl}/conversations`);
    // The list is newest first: the demo's, seeded at the start, is the last one in its mode
    // (other tests start conversations of their own).
    const row = page.getByTestId("conversation-list").locator("li", { hasText: mode }).last();
    await Promise.all([page.waitForURL(/\/conversations\/c-[0-9a-f]+$/, { timeout: 15_000 }), row.getByRole("link").click()]);
    await expect.poll(() => page.getByTestId("conversation-mode").innerText()).toBe(mode);
  }

  const entries = (page: Page, kind: string) => page.getByTestId("conversation-entries").locator(`[data-kind="${kind}"]`);

  it("free discussion: the agents mention each other until the loop guard stalls them; @ completion; a post goes on live", async () => {
    const page = await adminAt("/conversations");
    const currentNav = page.getByRole("navigation", { name: "Main" }).locator('[aria-current="page"]');
    expect(await currentNav.allTextContents()).toEqual(["Chat"]);
    await openDemoConversation(page, "free_discussion");
    await expect.poll(() => page.getByTestId("conversation-status").innerText(), { timeout: 30_000 }).toBe("stalled");
    expect(await entries(page, "agent").evaluateAll((els) => els.map((e) => e.textContent?.match(/@([\w-]+)/)?.[1]))).toEqual([
      "coder-sim",
      "reviewer-sim",
      "tester-sim",
    ]);
    expect(await entries(page, "stalled").innerText()).toContain("coder-sim → reviewer-sim → tester-sim → coder-sim");
    expect(await page.getByTestId("stalled-banner").innerText()).toMatch(/Nobody is called until a person writes/);
    await screenshot(page, "conversation-free-stalled.png");

    // @ completion from the conversation's agents: "@rev" offers the reviewer; Enter takes it.
    const box = page.getByLabel("Message");
    await box.click();
    await box.pressSequentially("@rev");
    await page.getByTestId("mention-options").waitFor();
    expect(await page.getByTestId("mention-options").getByRole("option").allInnerTexts()).toEqual([
      expect.stringContaining("@reviewer-sim"),
    ]);
    await screenshot(page, "conversation-mention-completion.png");
    await box.press("Enter");
    await box.pressSequentially("what about emoji?");
    expect(await box.inputValue()).toBe("@reviewer-sim what about emoji?");
    // A mention of nobody known is refused with the names, beside the box.
    await page.getByRole("button", { name: "Post" }).click();
    await expect.poll(() => page.getByTestId("conversation-status").innerText(), { timeout: 10_000 }).toBe("open");
    await expect.poll(() => entries(page, "agent").count(), { timeout: 20_000 }).toBeGreaterThan(3);
    await box.fill("@nobody hello");
    await page.getByRole("button", { name: "Post" }).click();
    await expect.poll(() => page.getByRole("alert").first().innerText()).toMatch(/no agent @nobody in this conversation/);
    await page.context().close();
  }, 90_000);

  it("expert routing and SOP: the routing shows its candidates, scores and why; the procedure's steps loop once and complete", async () => {
    const page = await adminAt("/conversations");
    await openDemoConversation(page, "expert_routing");
    const routing = page.getByTestId("routing").first();
    await routing.waitFor({ timeout: 30_000 });
    expect(await routing.innerText()).toMatch(/Routed to @tester-sim/);
    expect(await routing.innerText()).toMatch(/@tester-sim: 2 \(tests, edge cases\)/);
    await expect.poll(() => entries(page, "agent").count(), { timeout: 20_000 }).toBe(1);
    await screenshot(page, "conversation-expert-routing.png");

    await openDemoConversation(page, "sop");
    await page.getByTestId("sop-completed").waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("sop-completed").innerText()).toContain("plan → implement → review → implement → review");
    await screenshot(page, "conversation-sop.png");
    await page.context().close();
  }, 90_000);

  it("starts a conversation from the Chat page: a config that is not JSON is said beside the field; a valid one opens the conversation", async () => {
    const page = await adminAt("/conversations");
    // The example config is made for the project's agents: once they are known.
    await page.getByText(/^Agents: @/).waitFor({ timeout: 10_000 });
    await page.getByLabel("Mode", { exact: true }).selectOption("voting");
    expect(JSON.parse(await page.getByLabel("Mode config (JSON)").inputValue())).toMatchObject({ quorum: 2 });
    await page.getByLabel("Mode config (JSON)").fill("{ quorum: ");
    await page.getByRole("button", { name: "Start conversation" }).click();
    await expect.poll(() => page.getByRole("alert").first().innerText()).toMatch(/^the config is not valid JSON: /);
    await page.getByLabel("Mode config (JSON)").fill('{"quorum": 2}');
    await page.getByLabel("First message (optional)").fill("Tabs or spaces?");
    await Promise.all([
      page.waitForURL(/\/conversations\/c-[0-9a-f]+$/, { timeout: 15_000 }),
      page.getByRole("button", { name: "Start conversation" }).click(),
    ]);
    expect(await page.getByTestId("conversation-mode").innerText()).toBe("voting");
    await page.getByTestId("tally").waitFor({ timeout: 30_000 });
    await page.context().close();
  }, 60_000);

  it("a conversation replayed at an agent's reply, then forked from there: the fork makes the call in flight again and goes on", async () => {
    const page = await adminAt("/conversations");
    await openDemoConversation(page, "free_discussion");
    await entries(page, "agent").first().waitFor({ timeout: 30_000 });
    const firstReply = entries(page, "agent").first();
    await Promise.all([page.waitForURL(/\?at=\d+$/), firstReply.getByRole("link", { name: "replay from here" }).click()]);
    const banner = page.getByTestId("replay-banner");
    expect(await banner.innerText()).toMatch(/Replay: the conversation as it was at event \d+ of \d+/);
    expect(await entries(page, "agent").count()).toBe(1);
    expect(await page.getByLabel("Message").count()).toBe(0);
    await screenshot(page, "conversation-replay.png");
    await Promise.all([
      page.waitForURL(/\/conversations\/c-[0-9a-f]+$/, { timeout: 15_000 }),
      banner.getByRole("button", { name: "Fork from here" }).click(),
    ]);
    await expect.poll(() => page.getByRole("heading", { level: 1 }).innerText()).toMatch(/\(fork\)$/);
    // The reviewer's call, in flight at the fork, is made again in the fork: it answers, and so on to the stall.
    await expect.poll(() => page.getByTestId("conversation-status").innerText(), { timeout: 30_000 }).toBe("stalled");
    expect(await entries(page, "agent").count()).toBe(3);
    await page.context().close();
  }, 90_000);

  it("Deliver on an approved session opens a pull request and shows its link; a viewer has no Deliver button and a forged delivery is refused (403)", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-deliver-e2e-"));
    const repo = makeSumRepo(root);
    const remote = path.join(root, "origin.git");
    execFileSync("git", ["init", "-q", "--bare", remote]);
    const stub = await startBrainStub((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.method === "GET") return res.end("[]");
      res.statusCode = 201;
      return res.end(JSON.stringify({ number: 42, html_url: "https://github.test/acme/app/pull/42" }));
    });
    try {
      const page = await adminAt("/");
      const upsert = await mutate(page, "projects.upsert", {
        id: "deliver-e2e",
        name: "Deliver e2e",
        repoPath: repo,
        allowlist: [["node", "--test", "**"]],
        agents: {
          coder: { kind: "scripted", id: "coder-e2e", responses: [{ reply: "Fixed.", files: { "src/sum.js": FIXED_SUM } }] },
          reviewer: { kind: "scripted", id: "reviewer-e2e", responses: [{ reply: reviewApprove }] },
          tester: { kind: "scripted", id: "tester-e2e", responses: [{ reply: testPlan() }] },
        },
        settings: {
          // The stand-in provider runs on this machine: the admin allows it (docs/security.md).
          access: { privateHosts: ["127.0.0.1"] },
          delivery: { method: "pull_request", remote, pullRequest: { provider: "github", apiBaseUrl: stub.url, repository: "acme/app" } },
        },
      });
      expect(upsert.status, upsert.body).toBe(200);
      const started = await mutate(page, "tasks.start", { projectId: "deliver-e2e", prompt: "Fix sum()", mode: "implementation" });
      expect(started.status, started.body).toBe(200);
      const sessionId = (JSON.parse(started.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;
      await page.goto(`${app.baseUrl}/sessions/${sessionId}`);
      await expect.poll(() => badge(page).getAttribute("data-state"), { timeout: 30_000 }).toBe("approved");
      // A double click delivers once (one idempotency key for both).
      await page.getByTestId("deliver-button").dblclick();
      const link = page.getByTestId("pull-request-link");
      await link.waitFor({ timeout: 30_000 });
      expect(await link.getAttribute("href")).toBe("https://github.test/acme/app/pull/42");
      // The session's commit statuses (docs/delivery.md, "Commit statuses") go to the same API: set aside here.
      expect(stub.requests.filter((r) => !/\/statuses\/[0-9a-f]{40}$/.test(r.url)).map((r) => r.method)).toEqual(["GET", "POST"]);
      expect(await countEvents(page, sessionId, "DeliveryRequested")).toBe(1);
      await noErrorShown(page, "after Deliver");
      await screenshot(page, "session-delivered.png");

      await ensureViewer(page);
      const { page: viewerPage } = await newPage();
      await signIn(viewerPage, app.baseUrl, VIEWER.email, VIEWER.password, `/sessions/${sessionId}`);
      await viewerPage.getByTestId("pull-request-link").waitFor({ timeout: 10_000 });
      expect(await viewerPage.getByTestId("deliver-button").count()).toBe(0);
      const forged = await mutate(viewerPage, "sessions.deliver", { sessionId });
      expect(forged.status, forged.body).toBe(403);
      await page.context().close();
      await viewerPage.context().close();
    } finally {
      await stub.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);

  it("usage: a session whose coder is an agent CLI and reviewer a brain shows their tokens and cost per model; the Usage page adds them up per project and per day", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-usage-e2e-"));
    const brain = await startUsageBrain();
    try {
      fs.writeFileSync(path.join(app.dataDir, "settings.json"), JSON.stringify({ pricing: USAGE_PRICING }));
      const page = await adminAt("/");
      const upsert = await mutate(page, "projects.upsert", usageProject("usage-e2e", "Usage e2e", root, brain.url));
      expect(upsert.status, upsert.body).toBe(200);
      const started = await mutate(page, "tasks.start", { projectId: "usage-e2e", prompt: "Fix sum()", mode: "implementation" });
      expect(started.status, started.body).toBe(200);
      const sessionId = (JSON.parse(started.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;
      await page.goto(`${app.baseUrl}/sessions/${sessionId}`);
      await expect.poll(() => badge(page).getAttribute("data-state"), { timeout: 30_000 }).toBe("approved");
      const panel = page.getByTestId("usage-panel");
      await panel.waitFor({ timeout: 10_000 });
      await expect
        .poll(() => page.getByTestId("usage-model").allInnerTexts())
        // 0.01059 and 0.00472 EUR (cached input at the cache rates): to the cent, finer below a
        // cent. The scripted tester's call counts, with no tokens and nothing to price. Cached: the
        // input tokens read from the prompt cache, part of In (the CLI's 300, the brain's 1,024).
        .toEqual([
          `${CLI_MODEL}\t1,500\t300\t450\t0.01 EUR`,
          `${BRAIN_MODEL}\t2,000\t1,024\t100\t0.0047 EUR`,
          `unknown\t0\t0\t0\t0.00 EUR`,
        ]);
      expect(await page.getByTestId("usage-total").innerText()).toBe("All\t3,500\t1,324\t550\t0.02 EUR");
      await panel.scrollIntoViewIfNeeded();
      await screenshot(page, "session-usage.png");
      // At 390 and 1280 px: axe, no sideways scroll, screenshots session-usage-390.png and session-usage-1280.png.
      expect(await layoutProblems(page, "session-usage")).toEqual([]);

      await page.goto(`${app.baseUrl}/usage?days=7&project=usage-e2e`);
      const total = page.getByTestId("usage-total");
      expect(await total.innerText()).toMatch(
        /Calls\s+3\s+Tokens in\s+3,500\s+Cached in\s+1,324 read, 200 written\s+Tokens out\s+550\s+Cost\s+0\.02 EUR/,
      );
      const rows = await page.getByTestId("usage-row").allInnerTexts();
      const today = new Date().toISOString().slice(0, 10);
      // The cached column: the tokens read from the prompt cache, and those written to it below.
      const cached = "1,324\n+ 200 written\n";
      expect(rows).toEqual([`Usage e2e\t3\t3,500\t${cached}\t550\t0.02 EUR`, `${today}\t3\t3,500\t${cached}\t550\t0.02 EUR`]);
      expect(await page.locator('nav[aria-label="Main"] a[aria-current="page"]').innerText()).toBe("Usage");
      await screenshot(page, "usage-page.png");
      // At 390 and 1280 px: axe, no sideways scroll, screenshots usage-page-390.png and usage-page-1280.png.
      expect(await layoutProblems(page, "usage-page")).toEqual([]);
      await page.context().close();
    } finally {
      await brain.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);

  it("voting: the tally sits where it happened; a switch with a bad config names the field; a good one is a system message; a viewer only reads", async () => {
    const page = await adminAt("/conversations", "dark");
    await openDemoConversation(page, "voting");
    const tally = page.getByTestId("tally");
    await tally.waitFor({ timeout: 30_000 });
    expect(await tally.innerText()).toMatch(/Vote 1: winner node:test/);
    await screenshot(page, "conversation-voting-dark.png");

    await page.getByLabel("Collaboration mode").selectOption("expert_routing");
    await page.getByLabel("Config (JSON)").fill('{"maxAgents": 9}');
    await page.getByRole("button", { name: "Switch mode" }).click();
    await expect.poll(() => page.getByRole("alert").first().innerText()).toMatch(/^modeConfig\.maxAgents: /);
    expect(await page.getByTestId("conversation-mode").innerText()).toBe("voting");
    await page.getByLabel("Config (JSON)").fill('{"maxAgents": 2}');
    await page.getByRole("button", { name: "Switch mode" }).click();
    await expect.poll(() => page.getByTestId("conversation-mode").innerText(), { timeout: 10_000 }).toBe("expert_routing");
    expect(await entries(page, "system").last().innerText()).toMatch(/Mode switched from voting to expert_routing/);
    const url = page.url();

    await ensureViewer(page);
    const { page: viewerPage } = await newPage();
    await signIn(viewerPage, app.baseUrl, VIEWER.email, VIEWER.password, new URL(url).pathname);
    await viewerPage.getByTestId("conversation-entries").waitFor();
    expect(await viewerPage.getByLabel("Message").count()).toBe(0);
    expect(await viewerPage.getByRole("button", { name: "Switch mode" }).count()).toBe(0);
    const forged = await mutate(viewerPage, "conversations.post", { sessionId: url.split("/").pop(), text: "@coder-sim hi" });
    expect(forged.status, forged.body).toBe(403);
    await page.context().close();
    await viewerPage.context().close();
  }, 90_000);

  it("for a screen reader: a skip link leads past the header; the state and the running step are polite live regions; after Confirm focus is on the state, which says the new one", async () => {
    const page = await adminAt("/");
    const sessionId = await newProposal(page, "Make slugify() keep digits");
    await page.goto(`${app.baseUrl}/sessions/${sessionId}`);
    await awaitingConfirm(page);

    // The first Tab reaches "Skip to content"; following it puts focus on the main column.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    expect(await page.getByTestId("skip-link").isVisible()).toBe(true);
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");

    const state = badge(page);
    expect(await state.evaluate((el) => [el.getAttribute("role"), el.getAttribute("aria-live")])).toEqual(["status", "polite"]);
    expect(await state.textContent()).toBe("Session state: Waiting for your confirm");
    const running = page.getByTestId("running-step-status");
    expect(await running.evaluate((el) => [el.getAttribute("role"), el.getAttribute("aria-live")])).toEqual(["status", "polite"]);
    expect(await page.getByTestId("timeline-announcer").getAttribute("aria-live")).toBe("polite");

    await page.getByTestId("confirm-button").click();
    await page.getByTestId("confirm-dialog-action").click();
    await expect.poll(() => state.getAttribute("data-state"), { timeout: 20_000 }).not.toBe("awaiting_operator_confirm");
    // Focus is on the live region, which says the state the session went to (not the body).
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-testid")), { timeout: 5_000 })
      .toBe("state-badge");
    const now = await state.getAttribute("data-state");
    // In people's words; the id stays in data-state.
    expect(await state.textContent()).toBe(`Session state: ${stateLabel(now!)}`);
    // The running step is said while it runs (the demo's steps are quick; the region stays for the next).
    await expect.poll(() => running.textContent(), { timeout: 20_000 }).toMatch(/is working|running the test commands|waits for/);
    await screenshot(page, "session-after-confirm-focus.png");
    // Live marks (docs/session-view.md): each begins half a second after it appears and rests
    // within 5 s (WCAG 2.2.2); an animation that runs for ever would fail here (NaN seconds).
    const marks = await page.evaluate(() =>
      [...document.querySelectorAll("*")].flatMap((el) => {
        const style = getComputedStyle(el);
        if (style.animationName === "none") return [];
        const delay = parseFloat(style.animationDelay);
        return [
          {
            name: style.animationName,
            delay,
            seconds: delay + parseFloat(style.animationDuration) * Number(style.animationIterationCount),
          },
        ];
      }),
    );
    expect(marks.map((m) => m.name)).toContain("ping-brief");
    for (const mark of marks) {
      expect(mark.delay, mark.name).toBe(0.5);
      expect(mark.seconds, mark.name).toBeLessThanOrEqual(5);
    }
    await expect.poll(() => state.getAttribute("data-state"), { timeout: 60_000 }).toBe("approved");
    expect(await state.textContent()).toBe("Session state: Approved");
    await page.context().close();
  }, 120_000);

  it("with the runner stopped: New task warns that none is alive, and a new task's page says how to start one once its step has waited ~15 s", async () => {
    const runnerPid = descendantRunning(app.proc.pid, "server/runner/main.ts");
    expect(runnerPid, "the runner under npm start").toBeDefined();
    // Stopped, not killed (npm start would start a new one): its heartbeat ages out in 15 s.
    process.kill(runnerPid!, "SIGSTOP");
    try {
      const page = await adminAt("/sessions/new");
      await expect
        .poll(
          async () => {
            await page.reload();
            return page.getByTestId("no-runner-warning").count();
          },
          { timeout: 45_000, interval: 2_000 },
        )
        .toBe(1);
      expect(await page.getByTestId("no-runner-warning").innerText()).toMatch(/No runner is alive.*npm run runner/);
      await screenshot(page, "new-task-no-runner.png");

      const sessionId = await newProposal(page, "Trim slugify() input while no runner is alive");
      await page.goto(`${app.baseUrl}/sessions/${sessionId}`);
      await expect.poll(() => page.getByTestId("running-step").innerText(), { timeout: 5_000 }).toMatch(/waits for a runner/);
      await page.getByTestId("no-runner").waitFor({ timeout: 30_000 });
      expect(await page.getByTestId("no-runner").innerText()).toBe("No runner is alive — start one with npm run runner");
      expect(await page.getByTestId("running-step-status").textContent()).toBe("No runner is alive — start one with `npm run runner`");
      await screenshot(page, "session-no-runner.png");
      await page.context().close();
    } finally {
      process.kill(runnerPid!, "SIGCONT");
    }
    await waitForHealth(`${app.baseUrl}/api/health`, app.proc, { minRunners: 1, timeoutMs: 30_000 });
  }, 150_000);
});

describe("the first admin from the printed setup link", () => {
  it(
    "creates the admin, signs them in, and they may confirm",
    async () => {
      await ensureWebBuild();
      const app = await startCatCafe({});
      const match = SETUP_LINE.exec(app.proc.output());
      expect(match, tail(app.proc.output())).not.toBeNull();
      // The printed link names localhost; the browser reaches the same server on 127.0.0.1.
      const link = new URL(match![1]!);
      const { context, page } = await newPage();
      await page.goto(`${app.baseUrl}${link.pathname}${link.search}`);
      await page.locator('input[name="name"]').fill("First Admin");
      await page.locator('input[name="email"]').fill("first@cats.test");
      await page.locator('input[name="password"]').fill("first-admin-password");
      await page.locator('input[name="confirm"]').fill("first-admin-password");
      await Promise.all([
        page.waitForURL((url) => url.pathname === "/", { timeout: 20_000 }),
        page.getByRole("button", { name: /Create admin/ }).click(),
      ]);
      await page.getByRole("heading", { name: "Dashboard" }).waitFor();

      const demo = DEMO_LINE.exec(app.proc.output())![1]!;
      await page.goto(`${app.baseUrl}/sessions/${demo}`);
      await expect.poll(() => badge(page).getAttribute("data-state"), { timeout: 30_000 }).toBe("awaiting_operator_confirm");
      expect(await page.getByTestId("confirm-button").isVisible()).toBe(true);
      // The link worked once.
      const again = await context.newPage();
      await again.goto(`${app.baseUrl}${link.pathname}${link.search}`);
      await again.getByRole("heading", { name: "Already set up" }).waitFor();
      await context.close();
      await stop(app);
    },
    WEB_BUILD_TIMEOUT_MS + START_TIMEOUT_MS + 90_000,
  );
});
