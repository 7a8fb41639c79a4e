// Browser helpers for end-to-end tests: Debian's chromium driven by playwright-core (no
// browser download), signing in through the real sign-in form, and the directory where
// screenshots go (git-ignored; look at them after a run).
import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.CATCAFE_CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOTS_DIR = path.resolve(import.meta.dirname, "../e2e/screenshots");

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH))
    throw new Error(`no chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CATCAFE_CHROMIUM)`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Signs in through /signin and waits for the page it sends the user on to. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string, callbackPath = "/"): Promise<void> {
  await page.goto(`${baseUrl}/signin?callbackUrl=${encodeURIComponent(callbackPath)}`);
  await page.locator('input[name="email"]').fill(email);
  await page.locator('input[name="password"]').fill(password);
  await Promise.all([
    page.waitForURL((url) => url.pathname === callbackPath.split("?")[0], { timeout: 20_000 }),
    page.getByRole("button", { name: "Sign in" }).click(),
  ]);
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const file = path.join(SCREENSHOTS_DIR, name);
  // Sticky headers are drawn where the viewport is: start a full-page shot from the top.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A tRPC mutation sent from `page`, with its cookie: the status and the body as text. */
export async function trpcMutate(page: Page, procedure: string, input: unknown): Promise<{ status: number; body: string }> {
  return page.evaluate(
    async ([name, body]) => {
      const res = await fetch(`/api/trpc/${name}`, { method: "POST", headers: { "content-type": "application/json" }, body });
      return { status: res.status, body: await res.text() };
    },
    [procedure, JSON.stringify(input)] as const,
  );
}
