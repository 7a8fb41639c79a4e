// `/task <prompt>` from a conversation (req W13), in a real browser against a real `npm start`:
// an operator posts `/task …` in a conversation on the demo project; the conversation shows the
// command and a link to the session it started (no agent answers it); the link opens the
// session's page, which links back to the conversation, at the command. Each page: axe finds no
// serious or critical violation, nothing scrolls sideways at 390 and 1280 px, and no person is
// named `user:<id>`. Screenshots: test/e2e/screenshots/conversation-task-*.png (look at them).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutProblems } from "../helpers/axe";
import { launchChromium, signIn, trpcMutate as mutate } from "../helpers/browser";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

const OPERATOR = { name: "Otto Operator", email: "otto@cats.test", password: "operator password for tasks" };

let app: LiveServer;
let browser: Browser;

beforeAll(async () => {
  app = await startLiveServer("conversation-task");
  browser = await launchChromium();
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await app?.stop();
}, 60_000);

async function signedIn(email: string, password: string, pathname: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signIn(page, app.url, email, password, pathname);
  return page;
}

describe("/task in a conversation", () => {
  it("an operator's /task starts a task: the conversation links to its session, and the session back to the conversation", async () => {
    const admin = await signedIn(app.admin.email, app.admin.password, "/");
    const created = await mutate(admin, "users.create", { ...OPERATOR, role: "operator" });
    expect(created.status, created.body).toBe(200);
    await admin.context().close();

    const page = await signedIn(OPERATOR.email, OPERATOR.password, "/conversations");
    const started = await mutate(page, "conversations.start", {
      projectId: "demo",
      title: "Splitting slugify",
      message: "Should slugify() split on dashes as well as spaces?",
    });
    expect(started.status, started.body).toBe(200);
    const conversationId = (JSON.parse(started.body) as { result: { data: { sessionId: string } } }).result.data.sessionId;

    // The list links to the conversation; no page is rendered ahead of a click (AppLink).
    const prefetched: string[] = [];
    page.on("request", (r) => {
      if (r.headers()["next-router-prefetch"]) prefetched.push(r.url());
    });
    await page.goto(`${app.url}/conversations`);
    await page.getByRole("link", { name: "Splitting slugify" }).waitFor();
    await page.waitForTimeout(1_500);
    expect(prefetched).toEqual([]);

    await page.goto(`${app.url}/conversations/${conversationId}`);
    const entries = page.getByTestId("conversation-entries");
    await entries.locator('[data-kind="person"]').first().waitFor({ timeout: 30_000 });
    await page.getByLabel("Message").fill("/task Make slugify() split on dashes as well as spaces");
    await page.getByRole("button", { name: "Post" }).click();

    const command = entries.locator('[data-kind="task"]');
    await command.waitFor({ timeout: 30_000 });
    expect(await command.innerText()).toContain("/task Make slugify() split on dashes as well as spaces");
    expect(await command.innerText()).toContain(OPERATOR.name);
    const link = command.getByTestId("task-link");
    const href = (await link.getAttribute("href"))!;
    expect(href).toMatch(/^\/sessions\/s-[0-9a-f]+$/);
    // No agent answers the command: nothing after it in the thread, no call in flight.
    await page.waitForTimeout(1_000);
    expect(await entries.locator("li").last().getAttribute("data-kind")).toBe("task");
    expect(await page.getByTestId("thinking").count()).toBe(0);
    expect(await layoutProblems(page, "conversation-task-thread")).toEqual([]);

    await Promise.all([page.waitForURL(`${app.url}${href}`, { timeout: 15_000 }), link.click()]);
    const back = page.getByTestId("conversation-link");
    await back.waitFor({ timeout: 30_000 });
    expect(await back.innerText()).toBe("Splitting slugify");
    expect(await page.getByTestId("from-conversation").innerText()).toContain("Started by /task in the conversation");
    expect(await layoutProblems(page, "conversation-task-session")).toEqual([]);

    await Promise.all([page.waitForURL(new RegExp(`/conversations/${conversationId}#entry-\\d+$`), { timeout: 15_000 }), back.click()]);
    await page.getByTestId("conversation-entries").locator('[data-kind="task"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("task-link").getAttribute("href")).toBe(href);
    await page.context().close();
  }, 180_000);
});
