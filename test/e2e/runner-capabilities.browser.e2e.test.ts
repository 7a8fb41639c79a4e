// The Runners panel of the dashboard in a real browser, against a real `npm start`: a second
// runner process started with labels (CATCAFE_RUNNER_LABELS) and a CATCAFE_REPOSITORY_PATHS
// mapping the demo project to a clone that is not there shows its labels and that project as
// one it cannot serve, with why (docs/scaling.md, "Which runner runs a step"); a viewer sees
// the project, not the paths. Screenshots land in test/e2e/screenshots/.
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutProblems } from "../helpers/axe";
import { launchChromium, signIn } from "../helpers/browser";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";
import { freePort } from "../helpers/ports";
import { spawnRunnerProcess } from "../helpers/runner-process";

const RUNNER = "labelled-e2e";
const VIEWER = { email: "vic@cats.test", password: "viewer-capabilities-password-42", name: "Vic Viewer" };

let app: LiveServer;
let browser: Browser;
let pgPort: number;
let stateDir: string;
let runner: ChildProcess | null = null;

beforeAll(async () => {
  pgPort = await freePort();
  app = await startLiveServer("runner-capabilities", { CATCAFE_PG_PORT: String(pgPort) });
  browser = await launchChromium();
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-capabilities-runners-"));
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  runner?.kill("SIGKILL");
  await browser?.close().catch(() => {});
  await app?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
}, 60_000);

function databaseUrl(): string {
  const { postgresPassword } = JSON.parse(fs.readFileSync(path.join(app.dataDir, "secrets.json"), "utf8")) as { postgresPassword: string };
  return `postgresql://catcafe:${encodeURIComponent(postgresPassword)}@127.0.0.1:${pgPort}/catcafe`;
}

async function signedIn(email: string, password: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signIn(page, app.url, email, password, "/");
  return page;
}

describe("the Runners panel", () => {
  it("shows a runner's labels and the projects it cannot serve with the reason; a viewer sees the projects without paths", async () => {
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    const projects = (await client.query<{ id: string; repo_path: string }>("SELECT id, repo_path FROM projects ORDER BY id")).rows;
    await client.end();
    expect(projects.length).toBeGreaterThan(0);
    const demo = projects[0]!;
    const missing = path.join(stateDir, "no-clone-here");
    runner = spawnRunnerProcess({
      databaseUrl: databaseUrl(),
      id: RUNNER,
      stateDir,
      workspacesRoot: path.join(stateDir, "workspaces"),
      env: { CATCAFE_RUNNER_LABELS: "gpu, linux", CATCAFE_REPOSITORY_PATHS: JSON.stringify({ [demo.repo_path]: missing }) },
    });

    const admin = await signedIn(app.admin.email, app.admin.password);
    const row = admin.locator("li", { has: admin.getByText(RUNNER, { exact: true }) });
    await expect
      .poll(
        async () => {
          await admin.goto(`${app.url}/`);
          return row.count();
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(1);
    expect(await row.getByTestId("runner-labels").innerText()).toMatch(/gpu\s+linux/);
    const unserved = await row.getByTestId("runner-unserved").innerText();
    expect(unserved).toContain("Cannot serve");
    expect(unserved).toContain(`${demo.id}: no clone at ${missing} (CATCAFE_REPOSITORY_PATHS maps ${demo.repo_path} to ${missing})`);
    // npm start's own runner serves every project: nothing listed for it.
    expect(await admin.getByTestId("runner-unserved").count()).toBe(1);
    expect(await layoutProblems(admin, "runners-capabilities-admin")).toEqual([]);

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
    await viewer.goto(`${app.url}/`);
    const seen = await viewer.getByTestId("runner-unserved").innerText();
    expect(seen).toContain(demo.id);
    expect(seen).not.toContain(missing);
    await viewer.context().close();
    await admin.context().close();
  }, 180_000);
});
