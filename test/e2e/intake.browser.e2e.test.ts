// Intake in a real browser against one real `npm start` (docs/intake.md): an operator fills the
// project's intake form (tracker, repository, triggers) and sets the webhook secret, which the
// page then shows only as "set on … by <name>"; a labelled issue signed with that secret and
// POSTed to /api/hooks/github starts a task whose page links to the issue; a comment command the
// web server cannot check (no delivery token in its environment) waits in the inbox with its
// reason and the issue's link, and Start task starts it. Screenshots at 390 and 1280 px in
// test/e2e/screenshots/ (look at them); axe finds no serious or critical violation.
import crypto from "node:crypto";
import path from "node:path";
import examples from "@octokit/webhooks-examples";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutProblems } from "../helpers/axe";
import { launchChromium, signIn } from "../helpers/browser";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

const OPERATOR = { email: "ivy@cats.test", password: "intake-operator-password-42", name: "Ivy Intake" };
const SECRET = `whsec-${crypto.randomBytes(16).toString("hex")}`;

let app: LiveServer;
let browser: Browser;

beforeAll(async () => {
  app = await startLiveServer("intake-browser");
  browser = await launchChromium();
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await app?.stop();
}, 60_000);

async function signedIn(email: string, password: string, width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  await signIn(page, app.url, email, password, "/");
  return page;
}

async function trpc<T>(page: Page, procedure: string, input: unknown): Promise<T> {
  const res = await page.request.post(`${app.url}/api/trpc/${procedure}`, { data: input });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

interface Example {
  repository: { full_name: string };
  sender: { login: string };
  label: { name: string };
  issue: { number: number; title: string; body: string | null; html_url: string };
  comment: { body: string; user: { login: string } };
}
const example = (event: string, test: (e: Record<string, unknown>) => boolean) =>
  JSON.parse(JSON.stringify(examples.find((e) => e.name === event)!.examples.find((e) => test(e as Record<string, unknown>)))) as Example;

async function deliver(event: string, payload: unknown): Promise<Record<string, unknown>> {
  const body = JSON.stringify(payload);
  const res = await fetch(`${app.url}/api/hooks/github`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": crypto.randomUUID(),
      "x-hub-signature-256": `sha256=${crypto.createHmac("sha256", SECRET).update(body).digest("hex")}`,
    },
    body,
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("intake in the dashboard", () => {
  it("the intake form saves the rules and the secret; a labelled issue starts a task linked to it; a held comment waits in the inbox and starts from there", async () => {
    const admin = await signedIn(app.admin.email, app.admin.password, 1280);
    const sim = (role: string, reply: string) => ({ kind: "scripted", id: `${role}-sim`, responses: [{ reply }] });
    await trpc(admin, "projects.upsert", {
      id: "shop",
      name: "Shop",
      repoPath: path.join(app.dataDir, "demo-project"),
      allowlist: [["node", "--test", "**"]],
      agents: { coder: sim("coder", "Proposal: fix it."), reviewer: sim("reviewer", "Fine."), tester: sim("tester", "Testable.") },
    });
    await trpc(admin, "users.create", { ...OPERATOR, role: "operator" });

    const page = await signedIn(OPERATOR.email, OPERATOR.password, 1280);
    await page.goto(`${app.url}/settings/projects/shop#intake`);
    const rules = page.locator('form[aria-label="Intake rules"]');
    await rules.locator("#intake-shop-provider").selectOption("github");
    await rules.locator("#intake-shop-repository").fill("acme/shop");
    await page.getByTestId("intake-trigger-label").getByRole("checkbox").first().check();
    await page.getByTestId("intake-trigger-comment").getByRole("checkbox").first().check();
    await rules.getByRole("button", { name: "Save intake rules" }).click();
    await rules
      .getByRole("status")
      .filter({ hasText: /Saved \(change #\d+\)/ })
      .waitFor({ timeout: 10_000 });
    const secretForm = page.locator('form[aria-label="Webhook secret"]');
    await secretForm.locator("#intake-shop-secret").fill(SECRET);
    await secretForm.getByRole("button", { name: "Set secret" }).click();
    await expect.poll(() => page.getByTestId("intake-secret-status").innerText(), { timeout: 10_000 }).toMatch(/set on .+ by Ivy Intake/);
    expect(await secretForm.locator("#intake-shop-secret").inputValue()).toBe("");
    expect(await page.content()).not.toContain(SECRET);
    expect(await layoutProblems(page, "intake-settings")).toEqual([]);

    // A labelled issue, signed with that secret: a task, whose page links to the issue.
    const labeled = example("issues", (e) => e.action === "labeled");
    labeled.repository.full_name = "acme/shop";
    labeled.label.name = "catcafe";
    labeled.issue.number = 42;
    labeled.issue.title = "Checkout total is off by one";
    labeled.issue.html_url = "https://github.com/acme/shop/issues/42";
    const started = await deliver("issues", labeled);
    expect(started).toMatchObject({ trigger: "label" });
    await page.goto(`${app.url}/sessions/${String(started.started)}`);
    const link = page.getByTestId("session-issue");
    await link.waitFor();
    expect(await link.innerText()).toBe("Started from GitHub issue acme/shop#42 (label)");
    expect(await link.getByRole("link").getAttribute("href")).toBe("https://github.com/acme/shop/issues/42");

    // A comment command: the web server has no delivery token to check the commenter with, so it is held.
    const comment = example("issue_comment", (e) => e.action === "created" && !(e.issue as { pull_request?: unknown }).pull_request);
    comment.repository.full_name = "acme/shop";
    comment.issue.number = 43;
    comment.issue.title = "Add a coupon field";
    comment.issue.html_url = "https://github.com/acme/shop/issues/43";
    comment.comment.body = "/catcafe add it to the checkout form";
    const held = await deliver("issue_comment", comment);
    expect(held).toMatchObject({ reason: "permission_unknown" });

    await page.goto(`${app.url}/inbox`);
    const item = page.getByTestId("intake-held-item");
    await item.waitFor();
    expect(await item.innerText()).toMatch(/write access not checked/);
    expect(await item.innerText()).toMatch(/the project has no delivery token/);
    expect(await item.getByRole("link").getAttribute("href")).toBe("https://github.com/acme/shop/issues/43");
    expect(await layoutProblems(page, "intake-inbox")).toEqual([]);
    await Promise.all([
      page.waitForURL(/\/sessions\/s-[0-9a-f]+/, { timeout: 30_000 }),
      item.getByRole("button", { name: "Start task" }).click(),
    ]);
    await page.getByTestId("session-issue").waitFor();
    expect(await page.getByTestId("session-issue").innerText()).toBe("Started from GitHub issue acme/shop#43 (comment)");
    await page.goto(`${app.url}/inbox`);
    await page.getByText("No issue waits to be started.").waitFor();
  });
});
