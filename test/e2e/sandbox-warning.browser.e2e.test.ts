// The sandbox warning in a real browser (Debian chromium through playwright-core) against a
// real `npm start`, whose runner is sandboxed (bubblewrap works here): no warning. A second
// runner process started with CATCAFE_SANDBOX=off against the same database makes
// /api/health report it off with the reason, and every page show an admin the banner naming
// it and the reason; a viewer sees none (docs/operations.md, "The sandbox"). When that runner
// stops, the banner goes. Screenshots land in test/e2e/screenshots/.
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, screenshot, signIn } from "../helpers/browser";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";
import { freePort } from "../helpers/ports";
import { spawnRunnerProcess } from "../helpers/runner-process";

const OFF_RUNNER = "unsandboxed-e2e";
const OFF_REASON = "turned off (CATCAFE_SANDBOX=off)";
const VIEWER = { email: "vera@cats.test", password: "viewer-sandbox-password-42", name: "Vera Viewer" };
/** Pages of different kinds: each shares the page shell, so each shows the banner. */
const PAGES = ["/", "/inbox", "/settings", "/sessions/new"];

interface HealthBody {
  ok: boolean;
  runners: number;
  liveRunners: Array<{ id: string; sandbox: { on: boolean; reason: string | null } | null }>;
}

let app: LiveServer;
let browser: Browser;
let pgPort: number;
let stateDir: string;
let offRunner: ChildProcess | null = null;

beforeAll(async () => {
  pgPort = await freePort();
  app = await startLiveServer("sandbox-warning", { CATCAFE_PG_PORT: String(pgPort) });
  browser = await launchChromium();
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-sandbox-warning-runners-"));
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  offRunner?.kill("SIGKILL");
  await browser?.close().catch(() => {});
  await app?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
}, 60_000);

async function health(): Promise<HealthBody> {
  const res = await fetch(`${app.url}/api/health`);
  expect(res.status).toBe(200);
  return (await res.json()) as HealthBody;
}

async function signedIn(email: string, password: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signIn(page, app.url, email, password, "/");
  return page;
}

/** The npm start database, as a runner on this machine would be given it. */
function databaseUrl(): string {
  const { postgresPassword } = JSON.parse(fs.readFileSync(path.join(app.dataDir, "secrets.json"), "utf8")) as { postgresPassword: string };
  return `postgresql://catcafe:${encodeURIComponent(postgresPassword)}@127.0.0.1:${pgPort}/catcafe`;
}

describe("the sandbox warning", () => {
  it("appears on every page for an admin, naming the runner started with CATCAFE_SANDBOX=off and why, as /api/health says; a viewer sees none; it goes when that runner stops", async () => {
    // npm start's runner alone: sandboxed, no banner.
    const before = await health();
    expect(before.liveRunners.length).toBeGreaterThanOrEqual(1);
    expect(before.liveRunners.every((r) => r.sandbox?.on === true)).toBe(true);
    const admin = await signedIn(app.admin.email, app.admin.password);
    await admin.getByTestId("signed-in-user").waitFor();
    expect(await admin.getByTestId("sandbox-warning").count()).toBe(0);

    offRunner = spawnRunnerProcess({
      databaseUrl: databaseUrl(),
      id: OFF_RUNNER,
      stateDir,
      workspacesRoot: path.join(app.dataDir, "workspaces"),
      env: { CATCAFE_SANDBOX: "off" },
    });
    await expect
      .poll(async () => (await health()).liveRunners.find((r) => r.id === OFF_RUNNER), { timeout: 30_000, interval: 250 })
      .toEqual({ id: OFF_RUNNER, sandbox: { on: false, reason: OFF_REASON } });
    const during = await health();
    // npm start's runner is still on: only the one started with CATCAFE_SANDBOX=off is off.
    expect(during.liveRunners.filter((r) => r.sandbox?.on === false).map((r) => r.id)).toEqual([OFF_RUNNER]);

    for (const pathname of PAGES) {
      await admin.goto(`${app.url}${pathname}`);
      const banner = admin.getByTestId("sandbox-warning");
      await banner.waitFor({ timeout: 10_000 });
      const text = await banner.innerText();
      expect(text, pathname).toContain("A runner runs agents without the sandbox");
      expect(text, pathname).toContain(`${OFF_RUNNER} on ${os.hostname()}: ${OFF_REASON}`);
      expect(text, pathname).toContain("docs/security.md");
      expect(await admin.getByTestId("unsandboxed-runner").count(), pathname).toBe(1);
      if (pathname === "/") await screenshot(admin, "sandbox-warning-admin.png");
    }

    // At a phone's width the banner wraps: the page does not scroll sideways.
    await admin.setViewportSize({ width: 390, height: 844 });
    await admin.goto(`${app.url}/`);
    await admin.getByTestId("sandbox-warning").waitFor();
    expect(await admin.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await screenshot(admin, "sandbox-warning-phone.png");
    await admin.setViewportSize({ width: 1280, height: 900 });

    // A viewer starts nothing and could not act on it: no banner.
    const created = await admin.evaluate(async (viewer) => {
      const res = await fetch("/api/trpc/users.create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...viewer, role: "viewer" }),
      });
      return { status: res.status, body: await res.text() };
    }, VIEWER);
    expect(created.status, created.body).toBe(200);
    const viewer = await signedIn(VIEWER.email, VIEWER.password);
    for (const pathname of ["/", "/inbox"]) {
      await viewer.goto(`${app.url}${pathname}`);
      await viewer.getByTestId("signed-in-user").waitFor();
      expect(await viewer.getByTestId("sandbox-warning").count(), pathname).toBe(0);
    }
    await screenshot(viewer, "sandbox-warning-viewer.png");
    await viewer.context().close();

    // Stopped (it records that): no longer live, no longer warned about.
    offRunner.kill("SIGTERM");
    await new Promise((resolve) => (offRunner!.exitCode !== null ? resolve(null) : offRunner!.once("exit", resolve)));
    expect((await health()).liveRunners.map((r) => r.id)).not.toContain(OFF_RUNNER);
    await admin.goto(`${app.url}/`);
    await admin.getByTestId("signed-in-user").waitFor();
    expect(await admin.getByTestId("sandbox-warning").count()).toBe(0);
    await admin.context().close();
  }, 180_000);
});
