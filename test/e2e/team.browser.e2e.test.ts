// The team administers itself in a real browser against one real `npm start` (req X2, U3):
// an admin invites an operator on /settings/users and a second browser, signed out, opens the
// link, sets a name and password and lands signed in as an operator; the tokens page shows a
// new token once and revokes it; someone who is not an admin gets no admin controls; no page
// shows a person as `user:<id>`; signing out at 127.0.0.1 stays on 127.0.0.1 (the server's
// NEXTAUTH_URL says localhost); axe finds nothing serious on the new pages at 390 and 1280 px.
// Screenshots land in test/e2e/screenshots/team-*.png (look at them).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshot, signIn } from "../helpers/browser";
import { layoutProblems } from "../helpers/axe";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

const PASSWORD = "a long password for the new cat";

let app: LiveServer;
let browser: Browser;
let admin: Page;

beforeAll(async () => {
  app = await startLiveServer("team");
  browser = await launchChromium();
  admin = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await signIn(admin, app.url, app.admin.email, app.admin.password);
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await app?.stop();
}, 60_000);

async function trpc<T>(page: Page, procedure: string, input: unknown, mutation = false): Promise<T> {
  const url = `${app.url}/api/trpc/${procedure}`;
  const res = mutation
    ? await page.request.post(url, { data: input })
    : await page.request.get(`${url}?input=${encodeURIComponent(JSON.stringify(input))}`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: T } }).result.data;
}

/** Opens a page and waits for what it is for (live pages keep a stream open: no "network idle"). */
async function visit(page: Page, pathname: string, ready: string): Promise<void> {
  await page.goto(`${app.url}${pathname}`);
  await page.locator(ready).first().waitFor({ timeout: 30_000 });
}

async function visibleText(page: Page): Promise<string> {
  return page.locator("body").innerText();
}

describe("the team, administered in the browser", () => {
  let invitedEmail = "";
  let member: Page;

  it("an admin invites an operator; a signed-out browser opens the link, sets a name and password, and is signed in as an operator", async () => {
    await visit(admin, "/settings/users", "[data-testid=users]");
    expect(
      await admin.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: /Users/ }).getAttribute("aria-current"),
    ).toBe("page");
    await admin.getByLabel("Role", { exact: true }).selectOption("operator");
    await admin.getByRole("button", { name: "Create invitation link" }).click();
    const link = await admin.getByTestId("invitation-link").inputValue();
    // Built on the host the admin is using, not the server's configured URL.
    expect(link).toMatch(new RegExp(`^${app.url.replace(/[.]/g, "\\.")}/invite/ci_[A-Za-z0-9_-]{40,}$`));
    await admin.getByTestId("invitations").getByText("anyone with the link").waitFor();
    expect(await layoutProblems(admin, "team-users")).toEqual([]);

    member = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await member.goto(link);
    await member.getByRole("heading", { name: "Join Cat Cafe as an operator" }).waitFor();
    expect(await visibleText(member)).toContain("invited you");
    expect(await layoutProblems(member, "team-invite")).toEqual([]);
    invitedEmail = `ada-${Date.now()}@cats.test`;
    await member.locator('input[name="name"]').fill("Ada Invited");
    await member.locator('input[name="email"]').fill(invitedEmail);
    await member.locator('input[name="password"]').fill(PASSWORD);
    await member.locator('input[name="confirm"]').fill(PASSWORD);
    await Promise.all([
      member.waitForURL((url) => url.pathname === "/", { timeout: 30_000 }),
      member.getByRole("button", { name: "Create account and sign in" }).click(),
    ]);
    expect(await trpc(member, "auth.me", undefined)).toMatchObject({ email: invitedEmail, name: "Ada Invited", role: "operator" });

    // The link worked once.
    const again = await (await browser.newContext()).newPage();
    await again.goto(link);
    await again.getByRole("heading", { name: "This invitation was already used" }).waitFor();
    await again.context().close();
  }, 180_000);

  it("the admin sees the new member with their last sign-in, and makes them a viewer; a viewer gets no admin controls", async () => {
    await visit(admin, "/settings/users", "[data-testid=users]");
    const row = admin.locator(`[data-testid=users] tr[data-email="${invitedEmail}"]`);
    await expect.poll(() => row.innerText()).toContain("Ada Invited");
    expect(await row.innerText()).not.toContain("never"); // signed in just now
    await row.getByLabel("Role of Ada Invited").selectOption("viewer");
    await expect
      .poll(async () =>
        trpc<Array<{ email: string; role: string }>>(admin, "users.list", undefined).then(
          (l) => l.find((u) => u.email === invitedEmail)?.role,
        ),
      )
      .toBe("viewer");
    // The rule that an admin remains, as a clear message.
    const me = admin.locator(`[data-testid=users] tr[data-email="${app.admin.email}"]`);
    await me.getByRole("button", { name: /Disable/ }).click();
    await admin.getByRole("alert").filter({ hasText: "you cannot disable yourself" }).waitFor();

    await visit(member, "/settings/users", "nav[aria-label=Settings]");
    const text = await visibleText(member);
    expect(text).toContain("is shown to the admin role and above");
    expect(await member.getByRole("button", { name: "Create invitation link" }).count()).toBe(0);
    expect(await member.locator("[data-testid=users]").count()).toBe(0);
    await visit(member, "/settings/tokens", "form[aria-label='Create a token']");
    expect(await member.locator("[data-testid=all-tokens]").count()).toBe(0);
  }, 120_000);

  it("a token is created and shown once, listed, then revoked; an admin sees it among everyone's", async () => {
    await member.setViewportSize({ width: 1280, height: 800 });
    await visit(member, "/settings/tokens", "form[aria-label='Create a token']");
    await member.locator("#token-name").fill("e2e script");
    await member.getByLabel("Expires after").selectOption("30");
    await member.getByRole("button", { name: "Create token" }).click();
    const token = await member.getByTestId("new-token").inputValue();
    expect(token).toMatch(/^cc_[A-Za-z0-9_-]{40,}$/);
    const row = member.locator('[data-testid=my-tokens] tr[data-token="e2e script"]');
    await expect.poll(() => row.innerText()).toContain("active");
    expect(await layoutProblems(member, "team-tokens")).toEqual([]);
    // Shown once: a reload lists it without its value.
    await visit(member, "/settings/tokens", "[data-testid=my-tokens]");
    expect(await member.getByTestId("new-token").count()).toBe(0);
    expect(await member.content()).not.toContain(token);

    await visit(admin, "/settings/tokens", "[data-testid=all-tokens]");
    const owned = admin.locator('[data-testid=all-tokens] tr[data-token="e2e script"]');
    expect(await owned.innerText()).toContain("Ada Invited");

    await member
      .locator('[data-testid=my-tokens] tr[data-token="e2e script"]')
      .getByRole("button", { name: /Revoke/ })
      .click();
    await expect.poll(() => member.locator('[data-testid=my-tokens] tr[data-token="e2e script"]').innerText()).toContain("revoked");
    const res = await member.request.get(`${app.url}/api/trpc/auth.me`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await res.json()) as { result: { data: unknown } }).result.data).toBeNull();
  }, 120_000);

  it("no page names a person as user:<id>", async () => {
    // A conversation whose mode an admin switched and which they ended: both lines name them.
    const { sessionId: conversationId } = await trpc<{ sessionId: string }>(
      admin,
      "conversations.start",
      { projectId: "demo", title: "names" },
      true,
    );
    await trpc(admin, "conversations.setMode", { sessionId: conversationId, mode: "voting" }, true);
    await trpc(admin, "conversations.terminate", { sessionId: conversationId, reason: "done here" }, true);
    const demo = app.demoSessionId;
    const pages: Array<[string, string]> = [
      ["/", "[data-session-row]"],
      [`/sessions/${demo}`, "main h1"],
      [`/sessions/${demo}/replay`, "[data-testid=replay-scrubber]"],
      [`/sessions/${demo}/tree`, "[data-testid=fork-node]"],
      [`/conversations/${conversationId}`, "[data-kind=terminated]"],
      ["/inbox", "main"],
      ["/settings/users", "[data-testid=users]"],
      ["/settings/tokens", "form[aria-label='Create a token']"],
    ];
    const found: string[] = [];
    for (const [pathname, ready] of pages) {
      await visit(admin, pathname, ready);
      await admin.waitForTimeout(300);
      const text = await visibleText(admin);
      const ids = text.match(/user:[0-9a-z-]+/gi);
      if (ids) found.push(`${pathname}: ${ids.join(", ")}`);
      if (pathname.startsWith("/conversations/")) {
        expect(text).toMatch(/Mode switched from \w+ to voting by /);
        await screenshot(admin, "team-names-conversation.png");
      }
    }
    expect(found).toEqual([]);
  }, 180_000);

  it("signing out at 127.0.0.1 lands on 127.0.0.1's sign-in page", async () => {
    await visit(admin, "/settings/tokens", "form[aria-label='Create a token']");
    expect(new URL(app.url).hostname).toBe("127.0.0.1");
    await Promise.all([
      admin.waitForURL((url) => url.pathname === "/signin", { timeout: 30_000 }),
      admin.getByRole("button", { name: "Sign out" }).click(),
    ]);
    expect(admin.url()).toBe(`${app.url}/signin`);
    await admin.getByRole("button", { name: "Sign in" }).waitFor();
  }, 60_000);
});
