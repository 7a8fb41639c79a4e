// A team's operator wires a project in a real browser against one real `npm start` (req X2):
// the New task page shows Forge not ready (no planner), Start disabled, with a link to the
// project's role pickers; there the operator picks a brain for the planner (a local stub
// provider, which the admin allowed as a private host), presses Check and sees the answer in
// place, saves, and the New task page shows Forge ready. Then delivery to a local bare
// remote, and its Test answering with the branch head. Screenshots at 390 and 1280 px land in
// test/e2e/screenshots/ (look at them); axe finds no serious or critical violation.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrainStub, STUB_PRIVATE_HOSTS, type BrainStub } from "../helpers/brains-stub";
import { launchChromium, screenshot, signIn } from "../helpers/browser";
import { seriousViolations } from "../helpers/axe";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

const OPERATOR = { email: "olga@cats.test", password: "operator-roles-password-42", name: "Olga Operator" };

let app: LiveServer;
let browser: Browser;
let stub: BrainStub;
let remoteDir: string;

beforeAll(async () => {
  app = await startLiveServer("project-roles");
  browser = await launchChromium();
  stub = await startBrainStub((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(req.url.endsWith("/models") ? { object: "list", data: [{ id: "stub-planner", object: "model" }] } : {}));
  });
  remoteDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-roles-remote-"));
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stub?.close();
  await app?.stop();
  if (remoteDir) fs.rmSync(remoteDir, { recursive: true, force: true });
}, 60_000);

async function trpc<T>(page: Page, procedure: string, input: unknown): Promise<T> {
  const res = await page.request.post(`${app.url}/api/trpc/${procedure}`, { data: input });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

async function signedIn(email: string, password: string, width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  await signIn(page, app.url, email, password, "/");
  return page;
}

async function chooseForge(page: Page) {
  await page.goto(`${app.url}/sessions/new`);
  await page.locator("#project").selectOption("team");
  await page.locator("#workflow").selectOption("forge");
}

describe("an operator wires a project's roles and delivery", () => {
  it("binds a planner with the picker (Check, Save) so Forge is ready, and tests a delivery to a bare remote", async () => {
    // The admin: a project without a planner, an operator, and the stub's host allowed (docs/security.md).
    const admin = await signedIn(app.admin.email, app.admin.password, 1280);
    const repo = path.join(app.dataDir, "demo-project");
    const sim = (role: string) => ({ kind: "scripted", id: `${role}-sim`, responses: [{ reply: "ok" }] });
    await trpc(admin, "projects.upsert", {
      id: "team",
      name: "Team",
      repoPath: repo,
      allowlist: [["node", "--test", "**"]],
      agents: { coder: sim("coder"), reviewer: sim("reviewer"), tester: sim("tester") },
    });
    await trpc(admin, "settings.configureServer", { privateHosts: [...STUB_PRIVATE_HOSTS] });
    await trpc(admin, "users.create", { ...OPERATOR, role: "operator" });

    const page = await signedIn(OPERATOR.email, OPERATOR.password, 1280);
    await chooseForge(page);
    const notReady = page.getByTestId("workflow-not-ready");
    await notReady.waitFor();
    expect(await notReady.innerText()).toMatch(/no agent plays planner/);
    expect(await page.getByRole("button", { name: "Start task" }).isDisabled()).toBe(true);
    await screenshot(page, "new-task-forge-not-ready-1280.png");

    // To the role pickers, from the page's own link.
    await notReady.getByRole("link").click();
    await page.waitForURL(/\/settings\/projects\/team/);
    const planner = page.getByTestId("role-planner");
    await planner.locator("#role-planner-kind").selectOption("brain");
    await planner.locator("#role-planner-provider").selectOption("openai");
    await planner.locator("#role-planner-model").fill("stub-planner");
    await planner.locator("#role-planner-base-url").fill(`${stub.url}/v1`);
    await planner.getByRole("button", { name: "Check planner" }).click();
    const result = planner.getByTestId("role-check-result");
    await result.waitFor({ timeout: 20_000 });
    expect(await result.innerText()).toMatch(/endpoint: ok/);
    expect(await result.innerText()).toMatch(/model: exists/);
    expect(stub.requests.some((r) => r.url === "/v1/models")).toBe(true);
    await planner.getByRole("button", { name: "Save planner" }).click();
    await planner
      .getByRole("status")
      .filter({ hasText: /Saved \(change #\d+\)/ })
      .waitFor({ timeout: 10_000 });
    // The page reads again after the save: Forge is ready.
    await expect.poll(() => page.getByTestId("readiness-forge").innerText(), { timeout: 10_000 }).toBe("forge: ready");

    // Delivery: push to a bare remote on this machine, then Test.
    const bare = path.join(remoteDir, "team.git");
    execFileSync("git", ["init", "--bare", "-q", bare]);
    execFileSync("git", ["-C", repo, "push", "-q", bare, "HEAD:refs/heads/main"]);
    const head = execFileSync("git", ["-C", repo, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const delivery = page.locator('form[aria-label="Delivery settings"]');
    await delivery.locator("#delivery-team-deliveryMethod").selectOption("push");
    await delivery.locator("#delivery-team-deliveryRemote").fill(bare);
    await delivery.getByRole("button", { name: "Save delivery" }).click();
    await delivery
      .getByRole("status")
      .filter({ hasText: /Saved \(change #\d+\)/ })
      .waitFor({ timeout: 10_000 });
    await page.locator('form[aria-label="Delivery settings"]').getByRole("button", { name: "Test delivery" }).click();
    const tested = page.getByTestId("delivery-test-result");
    await tested.waitFor({ timeout: 20_000 });
    expect(await tested.innerText()).toMatch(new RegExp(`reachable, main at ${head.slice(0, 7)}`));
    await screenshot(page, "project-roles-1280.png");
    expect(await seriousViolations(page), "axe on the project's page").toEqual([]);

    // The same page on a phone: nothing scrolls sideways.
    const phone = await signedIn(OPERATOR.email, OPERATOR.password, 390);
    await phone.goto(`${app.url}/settings/projects/team`);
    await phone.getByTestId("role-planner").waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(phone, "project-roles-390.png");

    // Back on New task: Forge is ready, Start is enabled.
    await chooseForge(page);
    await page.getByTestId("workflow-ready").waitFor();
    expect(await page.getByTestId("workflow-not-ready").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Start task" }).isDisabled()).toBe(false);
    expect(await seriousViolations(page), "axe on New task").toEqual([]);
    await screenshot(page, "new-task-forge-ready-1280.png");
    // And it starts: the pipeline's page opens with its planner's first stage under way or done.
    await page.locator("#prompt").fill("A command that prints the word count of a file");
    await Promise.all([
      page.waitForURL(/\/sessions\/s-[0-9a-f]+/, { timeout: 30_000 }),
      page.getByRole("button", { name: "Start task" }).click(),
    ]);
    await page.getByTestId("stage-idea").waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId("stage-idea").getAttribute("data-state"), { timeout: 30_000 }).not.toBe("pending");
    expect(
      stub.requests.some((r) => r.url === "/v1/chat/completions"),
      "the planner was called",
    ).toBe(true);
  }, 180_000);
});
