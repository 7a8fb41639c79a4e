// A team's first week, in a real browser against one real first `npm start` (no admin in the
// environment), with no API call outside what the pages themselves send (req X2): the admin
// signs up from the setup link, allows the team's local model server, and invites an operator
// and a viewer by link; the operator, in a browser of their own, joins, adds a fresh local
// repository, binds a coder (a command agent) and a reviewer and tester (HTTP brains on a
// local stub) from the role pickers after pressing Check, starts a task, confirms it, sees it
// approved, sets delivery to a local bare remote, presses Test, delivers, and the commit is in
// the remote; the viewer, in a third browser, sees all of it and can act on none of it (no
// action buttons; a forced request is refused with 403). Every page visited: axe finds no
// serious or critical violation, nothing scrolls sideways at 390 and 1280 px, and no person
// is named `user:<id>`. Screenshots land in test/e2e/screenshots/first-week-*.png (look at them).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrainStub, streamOf, writeStream, type BrainStub } from "../helpers/brains-stub";
import { launchChromium, signIn } from "../helpers/browser";
import { layoutProblems } from "../helpers/axe";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

const ADMIN = { name: "Grace Admin", email: "grace@team.test", password: "first week admin password" };
const OPERATOR = { name: "Olga Operator", email: "olga@team.test", password: "first week operator password" };
const VIEWER = { name: "Victor Viewer", email: "victor@team.test", password: "first week viewer password" };
const PROJECT = "widgets";

let app: LiveServer;
let browser: Browser;
let stub: BrainStub;
let workDir: string;
let repo: string;
let remote: string;

/** The stub's answers by model: the reviewer approves, the tester plans the project's own `npm test`. */
const ANSWERS: Record<string, string> = {
  "stub-reviewer": JSON.stringify({ decision: "approve", summary: "hello.txt says hello; the tests pass.", findings: [] }),
  "stub-tester": JSON.stringify({
    summary: "Run the project's tests.",
    commands: [{ argv: ["npm", "test"], description: "the project's tests", expect: { exitCode: 0 } }],
  }),
};

beforeAll(async () => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-first-week-"));
  // The team's own repository: a test that passes once hello.txt says hello.
  repo = path.join(workDir, "widgets");
  fs.mkdirSync(repo);
  fs.writeFileSync(path.join(repo, "package.json"), JSON.stringify({ name: "widgets", private: true, scripts: { test: "node test.js" } }));
  fs.writeFileSync(
    path.join(repo, "test.js"),
    'const fs = require("fs");\nif (fs.existsSync("hello.txt") && !fs.readFileSync("hello.txt", "utf8").includes("hello")) process.exit(1);\nconsole.log("ok");\n',
  );
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("-c", "user.name=Team", "-c", "user.email=team@team.test", "commit", "-q", "-m", "widgets");
  remote = path.join(workDir, "widgets.git");
  execFileSync("git", ["init", "--bare", "-q", remote]);
  git("push", "-q", remote, "main");

  stub = await startBrainStub(async (req, res) => {
    if (req.url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: Object.keys(ANSWERS).map((id) => ({ id, object: "model" })) }));
      return;
    }
    const body = JSON.parse(req.body || "{}") as { model?: string; stream?: boolean };
    const answer = ANSWERS[body.model ?? ""] ?? "no such model";
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      await writeStream(res, streamOf("openai", [answer], { input: 40, output: 12 }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: "c1",
        object: "chat.completion",
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }],
        usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
      }),
    );
  });
  app = await startLiveServer("first-week", {}, { firstRun: true });
  browser = await launchChromium();
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stub?.close();
  await app?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
}, 60_000);

async function newPage(width = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: width === 390 ? 844 : 800 } });
  return context.newPage();
}

/** Opens a page and waits for what it is for (live pages keep a stream open: no "network idle"). */
async function visit(page: Page, pathname: string, ready: string): Promise<void> {
  await page.goto(`${app.url}${pathname}`);
  await page.locator(ready).first().waitFor({ timeout: 30_000 });
}

/** The value of a field labelled `label` inside `testId` (a one-time link or token, shown once). */
async function createInvitation(admin: Page, role: "operator" | "viewer"): Promise<string> {
  await admin.getByLabel("Role", { exact: true }).selectOption(role);
  await admin.getByRole("button", { name: "Create invitation link" }).click();
  const link = admin.getByTestId("invitation-link");
  await expect.poll(() => link.inputValue(), { timeout: 10_000 }).toMatch(/\/invite\/ci_/);
  return link.inputValue();
}

async function acceptInvitation(link: string, who: typeof OPERATOR, width: number): Promise<Page> {
  const page = await newPage(width);
  await page.goto(link);
  await page.locator('input[name="name"]').fill(who.name);
  await page.locator('input[name="email"]').fill(who.email);
  await page.locator('input[name="password"]').fill(who.password);
  await page.locator('input[name="confirm"]').fill(who.password);
  await Promise.all([
    page.waitForURL((url) => url.pathname === "/", { timeout: 30_000 }),
    page.getByRole("button", { name: "Create account and sign in" }).click(),
  ]);
  return page;
}

/** Binds `role` from the project page's picker, after a Check that must say ok. */
async function bindRole(page: Page, role: string, fill: (section: ReturnType<Page["getByTestId"]>) => Promise<void>, ok: RegExp) {
  const section = page.getByTestId(`role-${role}`);
  await fill(section);
  await section.getByRole("button", { name: `Check ${role}` }).click();
  const result = section.getByTestId("role-check-result");
  await expect.poll(() => result.innerText(), { timeout: 30_000 }).toMatch(ok);
  await section.getByRole("button", { name: `Save ${role}` }).click();
  await section
    .getByRole("status")
    .filter({ hasText: /Saved \(change #\d+\)/ })
    .waitFor({ timeout: 10_000 });
}

describe("a team's first week, from the browser only", () => {
  const problems: string[] = [];
  let admin: Page;
  let operator: Page;
  let sessionId = "";

  it("the admin signs up from the setup link, allows the team's model server, and invites an operator and a viewer", async () => {
    expect(app.setupUrl, "npm start prints a setup link when no admin is configured").toMatch(/\/setup\?token=/);
    admin = await newPage();
    // The link names the server's configured address; the team opens it where it serves them.
    await admin.goto(app.setupUrl!.replace(/^https?:\/\/[^/]+/, app.url));
    await admin.locator('input[name="name"]').fill(ADMIN.name);
    await admin.locator('input[name="email"]').fill(ADMIN.email);
    await admin.locator('input[name="password"]').fill(ADMIN.password);
    await admin.locator('input[name="confirm"]').fill(ADMIN.password);
    await Promise.all([
      admin.waitForURL((url) => url.pathname === "/", { timeout: 30_000 }),
      admin.getByRole("button", { name: "Create admin and sign in" }).click(),
    ]);
    problems.push(...(await layoutProblems(admin, "first-week-dashboard")));

    // The stub model server runs on this machine: an admin allows it (docs/security.md).
    await visit(admin, "/settings/projects", 'form[aria-label="Add project"]');
    await admin.locator("#server-all-privateHosts").fill(new URL(stub.url).hostname);
    await admin.locator("#server-all-privateHosts").press("Enter");
    await admin.getByText(/Saved 1 change\(s\) as #\d+/).waitFor({ timeout: 10_000 });

    await visit(admin, "/settings/users", "[data-testid=users]");
    const operatorLink = await createInvitation(admin, "operator");
    const viewerLink = await createInvitation(admin, "viewer");
    expect(operatorLink).not.toBe(viewerLink);
    problems.push(...(await layoutProblems(admin, "first-week-users")));

    operator = await acceptInvitation(operatorLink, OPERATOR, 1280);
    const viewer = await acceptInvitation(viewerLink, VIEWER, 390);
    await viewer.context().close();
    await visit(admin, "/settings/users", "[data-testid=users]");
    for (const [who, role] of [
      [OPERATOR, "operator"],
      [VIEWER, "viewer"],
    ] as const) {
      const row = admin.locator(`[data-testid=users] tr[data-email="${who.email}"]`);
      await expect.poll(() => row.innerText()).toContain(who.name);
      expect(await row.getByLabel(`Role of ${who.name}`).inputValue()).toBe(role);
    }
  }, 240_000);

  it("the operator adds the team's repository and binds a command coder and brain reviewer and tester, each checked first", async () => {
    await visit(operator, "/settings/projects", 'form[aria-label="Add project"]');
    const form = operator.locator('form[aria-label="Add project"]');
    await form.locator("#add-project-id").fill(PROJECT);
    await form.locator("#add-project-name").fill("Widgets");
    await form.locator("#add-project-repoPath").fill(repo);
    await form.locator("#add-project-allowlist").fill("npm test");
    await form.getByRole("button", { name: "Add project" }).click();
    await operator.getByTestId("add-project-done").waitFor({ timeout: 20_000 });
    // The page says where to bind the roles; follow its link (read first: the list re-renders as the page refreshes).
    const rolesLink = await operator.getByTestId("add-project-done").getByRole("link").first().getAttribute("href");
    expect(rolesLink).toMatch(new RegExp(`^/settings/projects/${PROJECT}`));
    await operator.goto(`${app.url}${rolesLink}`);
    await operator.getByTestId("role-coder").waitFor();

    const stubBase = `${stub.url}/v1`;
    await bindRole(
      operator,
      "coder",
      async (s) => {
        await s.locator("#role-coder-kind").selectOption("command");
        await s
          .locator("#role-coder-argv")
          .fill(`node -e "require('fs').writeFileSync('hello.txt', 'hello from the coder\\n'); console.log('wrote hello.txt')"`);
      },
      /valid: runs node/,
    );
    for (const role of ["reviewer", "tester"]) {
      await bindRole(
        operator,
        role,
        async (s) => {
          await s.locator(`#role-${role}-kind`).selectOption("brain");
          await s.locator(`#role-${role}-provider`).selectOption("openai");
          await s.locator(`#role-${role}-model`).fill(`stub-${role}`);
          await s.locator(`#role-${role}-base-url`).fill(stubBase);
        },
        /endpoint: ok/,
      );
    }
    expect(stub.requests.filter((r) => r.url === "/v1/models").length).toBeGreaterThanOrEqual(2);
    problems.push(...(await layoutProblems(operator, "first-week-project")));
  }, 180_000);

  it("the operator starts a task, confirms the proposal, and sees it approved", async () => {
    await visit(operator, "/sessions/new", "#project");
    await operator.locator("#project").selectOption(PROJECT);
    await operator.locator("#workflow").selectOption("review_loop");
    await operator.getByTestId("workflow-ready").waitFor();
    await operator.locator("#prompt").fill("Add hello.txt that says hello");
    problems.push(...(await layoutProblems(operator, "first-week-new-task")));
    await Promise.all([
      operator.waitForURL(/\/sessions\/s-[0-9a-f]+/, { timeout: 30_000 }),
      operator.getByRole("button", { name: "Start task" }).click(),
    ]);
    sessionId = /\/sessions\/(s-[0-9a-f]+)/.exec(operator.url())![1]!;
    const badge = operator.getByTestId("state-badge");
    await expect.poll(() => badge.getAttribute("data-state"), { timeout: 90_000 }).toBe("awaiting_operator_confirm");
    problems.push(...(await layoutProblems(operator, "first-week-session-proposal")));
    await operator.getByTestId("confirm-button").click();
    const dialog = operator.getByTestId("confirm-dialog");
    if (await dialog.count()) await dialog.getByRole("button", { name: /Confirm/ }).click();
    await expect.poll(() => badge.getAttribute("data-state"), { timeout: 120_000 }).toBe("approved");
    // The reviewer and tester were the team's brains: the stub heard both.
    const models = stub.requests
      .filter((r) => r.url.endsWith("/chat/completions"))
      .map((r) => (JSON.parse(r.body) as { model: string }).model);
    expect(new Set(models)).toEqual(new Set(["stub-reviewer", "stub-tester"]));
    problems.push(...(await layoutProblems(operator, "first-week-session-approved")));
  }, 300_000);

  it("the operator sets delivery to the bare remote, tests it, delivers, and the commit is in the remote", async () => {
    const before = execFileSync("git", ["-C", remote, "rev-parse", "main"], { encoding: "utf8" }).trim();
    await visit(operator, `/settings/projects/${PROJECT}`, 'form[aria-label="Delivery settings"]');
    const delivery = operator.locator('form[aria-label="Delivery settings"]');
    await delivery.locator(`#delivery-${PROJECT}-deliveryMethod`).selectOption("push");
    await delivery.locator(`#delivery-${PROJECT}-deliveryRemote`).fill(remote);
    await delivery.getByRole("button", { name: "Save delivery" }).click();
    await delivery
      .getByRole("status")
      .filter({ hasText: /Saved \(change #\d+\)/ })
      .waitFor({ timeout: 10_000 });
    await delivery.getByRole("button", { name: "Test delivery" }).click();
    const tested = operator.getByTestId("delivery-test-result");
    await expect.poll(() => tested.innerText(), { timeout: 30_000 }).toMatch(new RegExp(`reachable, main at ${before.slice(0, 7)}`));
    problems.push(...(await layoutProblems(operator, "first-week-project-delivery")));

    await visit(operator, `/sessions/${sessionId}`, "[data-testid=delivery-panel]");
    await operator.getByTestId("deliver-button").click();
    const branch = `catcafe/${sessionId}`;
    await expect
      .poll(
        () => {
          try {
            return execFileSync("git", ["-C", remote, "show", `${branch}:hello.txt`], { encoding: "utf8", stdio: "pipe" });
          } catch {
            return "";
          }
        },
        { timeout: 90_000 },
      )
      .toBe("hello from the coder\n");
    const log = execFileSync("git", ["-C", remote, "log", "--format=%s", `main..${branch}`], { encoding: "utf8" });
    expect(log.trim().split("\n").length).toBeGreaterThanOrEqual(1);
    await expect.poll(() => operator.getByTestId("delivery-panel").innerText(), { timeout: 30_000 }).toMatch(/pushed|Delivered/i);
    problems.push(...(await layoutProblems(operator, "first-week-session-delivered")));
  }, 240_000);

  it("the viewer sees the team's work and can act on none of it; a forced request is refused with 403", async () => {
    const viewer = await newPage(390);
    await signIn(viewer, app.url, VIEWER.email, VIEWER.password, `/sessions/${sessionId}`);
    await expect.poll(() => viewer.getByTestId("state-badge").getAttribute("data-state"), { timeout: 30_000 }).toBe("approved");
    const text = await viewer.locator("body").innerText();
    expect(text).toContain(OPERATOR.name); // who started and confirmed it, by name
    for (const id of ["confirm-button", "rerun-button", "cancel-button", "deliver-button", "approve-delivery-button", "follow-up"])
      expect(await viewer.getByTestId(id).count(), id).toBe(0);
    problems.push(...(await layoutProblems(viewer, "first-week-viewer-session")));

    await visit(viewer, `/sessions/${sessionId}/replay`, "[data-testid=replay-scrubber]");
    problems.push(...(await layoutProblems(viewer, "first-week-viewer-replay")));
    await visit(viewer, `/settings/projects/${PROJECT}`, "main");
    for (const name of [/^Save /, /^Check /, /Test delivery/, /Add project/])
      expect(await viewer.getByRole("button", { name }).count(), String(name)).toBe(0);
    problems.push(...(await layoutProblems(viewer, "first-week-viewer-project")));
    await visit(viewer, "/", "main");
    problems.push(...(await layoutProblems(viewer, "first-week-viewer-dashboard")));

    const forced = await viewer.evaluate(async (id) => {
      const res = await fetch("/api/trpc/sessions.deliver", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sessionId: id }),
      });
      return { status: res.status, body: await res.text() };
    }, sessionId);
    expect(forced.status, forced.body).toBe(403);
    expect(forced.body).toContain("FORBIDDEN");
  }, 180_000);

  it("no page visited had a serious accessibility problem, a sideways scroll or a person named by id", () => {
    expect(problems).toEqual([]);
  });
});
