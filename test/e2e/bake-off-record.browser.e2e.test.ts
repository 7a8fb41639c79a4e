// The bake-off comparison page and the agent record page in a real browser (Debian chromium
// through playwright-core) against a real `npm start`, on a seeded history
// (test/helpers/bake-off-history.ts) written to its database: three contenders side by side
// with their figures, live — an outcome and the judge's recommendation and the choice appended
// while the page is open change it without a reload — the pairwise compare links and the
// replays; the agent record per agent and model, and the same record from `catcafe agents
// stats`. Screenshots at 390 and 1280 px in test/e2e/screenshots/; axe: no serious violation.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppEventStore } from "../../server/app-store";
import { createPool } from "../../server/db/pool";
import type { EventStore } from "../../server/events/store";
import type { AgentRecord } from "../../server/agent-record/record";
import { upsertProject } from "../../server/projects/projects";
import { layoutProblems } from "../helpers/axe";
import { seedBakeOff, seedChosen, seedJudged, seedSession, type SeededBakeOff } from "../helpers/bake-off-history";
import { launchChromium, signIn, trpcMutate } from "../helpers/browser";
import { cleanEnv, LIVE_SERVER_TIMEOUT_MS, ROOT, run, startLiveServer, type LiveServer } from "../helpers/live-server";
import { freePort } from "../helpers/ports";
import { commitFiles } from "../helpers/tasks";

const PROJECT = "bakeoff";
const CLAUDE = { id: "claude-coder", model: "claude-m" };
const CODEX = { id: "codex-coder", model: "gpt-m" };

let app: LiveServer;
let browser: Browser;
let pool: ReturnType<typeof createPool>;
let store: EventStore;
let bakeOff: SeededBakeOff;
let tmp: string;

beforeAll(async () => {
  const pgPort = await freePort();
  app = await startLiveServer("bake-off-record", { CATCAFE_PG_PORT: String(pgPort) });
  const { postgresPassword } = JSON.parse(fs.readFileSync(path.join(app.dataDir, "secrets.json"), "utf8")) as { postgresPassword: string };
  pool = createPool(`postgresql://catcafe:${encodeURIComponent(postgresPassword)}@127.0.0.1:${pgPort}/catcafe`, 4);
  store = createAppEventStore(pool);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bake-off-record-"));
  const repo = path.join(tmp, "repo");
  commitFiles(repo, { "README.md": "bake-off\n" });
  await upsertProject(pool, {
    id: PROJECT,
    name: "Bake-off",
    repoPath: repo,
    allowlist: [["npm", "test"]],
    agents: {
      coder: { kind: "scripted", id: "coder", responses: [{ reply: "-" }] },
      reviewer: { kind: "scripted", id: "reviewer", responses: [{ reply: "-" }] },
      tester: { kind: "scripted", id: "tester", responses: [{ reply: "-" }] },
    },
  });
  const now = Date.now();
  const big = { input: 10_000, output: 1_000 };
  await seedSession(store, pool, {
    projectId: PROJECT,
    coder: CLAUDE,
    rounds: [{ blocking: 1 }, { blocking: 0 }],
    coderTokens: big,
    startAt: new Date(now - 3 * 3_600_000),
    wallMs: 120_000,
  });
  bakeOff = await seedBakeOff(
    store,
    pool,
    PROJECT,
    [
      {
        id: "c1",
        coder: CLAUDE,
        label: "Claude Code",
        rounds: [{ blocking: 2 }, { blocking: 0, tests: [true, true] }],
        coderTokens: big,
        startAt: new Date(now - 3_600_000),
        wallMs: 240_000,
      },
      {
        id: "c2",
        coder: CODEX,
        label: "Codex",
        rounds: [{ blocking: 0, tests: [true, false] }],
        maxIterations: 1,
        coderTokens: { input: 5_000, output: 500 },
        startAt: new Date(now - 3_600_000),
        wallMs: 90_000,
      },
      {
        id: "c3",
        coder: CODEX,
        label: "Codex (second model run)",
        rounds: [{ blocking: 1 }],
        running: true,
        coderTokens: { input: 5_000, output: 500 },
        startAt: new Date(now - 3_600_000),
        wallMs: 60_000,
      },
    ],
    { startAt: new Date(now - 3_600_000) },
  );
  browser = await launchChromium();
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await pool?.end().catch(() => {});
  await app?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

async function signedIn(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await signIn(page, app.url, app.admin.email, app.admin.password, "/");
  return page;
}

const card = (page: Page, id: string) => page.locator(`[data-testid="contender-card"][data-contender="${id}"]`);
const figure = (page: Page, id: string, name: string) => card(page, id).getByTestId(`fig-${name}`);

describe("the bake-off comparison page", () => {
  it("shows the contenders side by side, follows them live (an outcome, the judge, the choice), links pairs and replays; 390/1280 without serious violations", async () => {
    const page = await signedIn();
    // The parent's session page leads to the comparison.
    await page.goto(`${app.url}/sessions/${bakeOff.parentId}`);
    const lead = page.getByTestId("bake-off-link");
    await lead.waitFor({ timeout: 15_000 });
    expect(await lead.innerText()).toContain("bake-off of 3 contenders");
    await Promise.all([page.waitForURL(`**/sessions/${bakeOff.parentId}/bake-off`), lead.getByRole("link").click()]);
    await expect.poll(() => card(page, "c3").count()).toBe(1);
    expect(await page.getByTestId("contender-card").count()).toBe(3);
    expect(await figure(page, "c1", "outcome").innerText()).toBe("approved");
    expect(await figure(page, "c1", "iterations").innerText()).toBe("2");
    expect(await figure(page, "c1", "blocking").innerText()).toBe("2 → 0");
    expect(await figure(page, "c1", "tests").innerText()).toBe("2 passed, 0 failed");
    expect(await figure(page, "c1", "wall").innerText()).toBe("4m");
    // Every call of c1's own: two builds at 10,000 / 1,000, two reviews and a test plan at 1,000 / 100.
    expect(await figure(page, "c1", "tokens").innerText()).toBe("23,000 / 2,300");
    expect(await figure(page, "c2", "outcome").innerText()).toBe("max_iterations_reached");
    expect(await figure(page, "c2", "iterations").innerText()).toBe("not approved");
    expect(await figure(page, "c2", "tests").innerText()).toBe("1 passed, 1 failed");
    expect(await figure(page, "c3", "outcome").innerText()).toBe("running (reviewing)");
    expect(await figure(page, "c3", "blocking").innerText()).toBe("1");
    // The judge waits for c3; only the approved c1 can be picked: the others' buttons say why.
    expect(await page.getByTestId("judge-button").isDisabled()).toBe(true);
    expect(await page.getByTestId("judge-why").innerText()).toBe("The judge compares ended contenders: c3 still runs.");
    expect(await page.getByTestId("pick-button").count()).toBe(3);
    expect(await card(page, "c1").getByTestId("pick-button").isDisabled()).toBe(false);
    expect(await card(page, "c2").getByTestId("pick-button").isDisabled()).toBe(true);
    expect(await card(page, "c2").getByTestId("pick-button-why").innerText()).toBe("Pick one of c1: c2 ended max_iterations_reached.");
    // Every pair in the compare view, and each replay.
    const pairs = await page
      .getByTestId("pair-link")
      .evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).getAttribute("href")));
    const [c1, c2, c3] = bakeOff.contenders.map((c) => c.sessionId);
    expect(pairs).toEqual([
      `/sessions/${c1}/compare?with=${c2}`,
      `/sessions/${c1}/compare?with=${c3}`,
      `/sessions/${c2}/compare?with=${c3}`,
    ]);
    expect(await card(page, "c2").getByRole("link", { name: "Replay" }).getAttribute("href")).toBe(`/sessions/${c2}/replay`);
    await expect.poll(() => page.getByTestId("bake-off-live").innerText(), { timeout: 15_000 }).toContain("Live");
    expect(await layoutProblems(page, "bake-off-comparison")).toEqual([]);

    // Live: c3 ends, the judge recommends, a person chooses — the page follows without a reload.
    await store.append(
      c3!,
      "any",
      [
        { type: "SessionStateChanged", data: { from: "reviewing", to: "max_iterations_reached", reason: "changes_requested" } },
        {
          type: "SessionFinalized",
          data: {
            outcome: "max_iterations_reached",
            reason: "changes_requested",
            iterations: 1,
            unresolved: [],
            errorClass: null,
            diagnosis: null,
          },
        },
      ],
      { actor: { kind: "runner", id: "r-test" } },
    );
    await expect.poll(() => figure(page, "c3", "outcome").innerText(), { timeout: 15_000 }).toBe("max_iterations_reached");
    await expect.poll(() => page.getByTestId("judge-button").isDisabled(), { timeout: 15_000 }).toBe(false);
    await seedJudged(store, bakeOff.parentId, {
      winner: "c1",
      ranking: ["c1", "c2", "c3"],
      reasons: ["the only one approved", "tests pass"],
    });
    await page.getByTestId("judge-recommendation").waitFor({ timeout: 15_000 });
    expect(await page.getByTestId("judge-recommendation").innerText()).toMatch(/the judge recommends c1[\s\S]*the only one approved/i);
    expect(await card(page, "c1").getByTestId("recommended-mark").count()).toBe(1);
    // Chosen by the signed-in admin: the page names the person, never the id the event holds.
    const me = await page.evaluate(async () => {
      const res = await fetch("/api/trpc/auth.me");
      return ((await res.json()) as { result: { data: { id: string; name: string } } }).result.data;
    });
    await seedChosen(store, bakeOff, "c1", "approved with every test passing", { kind: "user", id: me.id });
    await card(page, "c1").getByTestId("chosen-mark").waitFor({ timeout: 15_000 });
    expect(await page.getByTestId("chosen-summary").innerText()).toBe(`c1 was chosen by ${me.name}: approved with every test passing.`);
    expect(await page.getByTestId("pick-button").count()).toBe(0);
    // The others end not_chosen, their own outcome kept beside it.
    await expect
      .poll(() => figure(page, "c2", "outcome").innerText(), { timeout: 15_000 })
      .toBe("not_chosen (ended max_iterations_reached)");
    expect(await layoutProblems(page, "bake-off-comparison-chosen")).toEqual([]);
  });
});

describe("the agent record page and `catcafe agents stats`", () => {
  it("per agent and model on the project, the same from the CLI as JSON and as a table; 390/1280 without serious violations", async () => {
    const page = await signedIn();
    await page.goto(`${app.url}/usage`);
    await Promise.all([page.waitForURL("**/usage/agents**"), page.getByRole("link", { name: "agent record" }).click()]);
    await page.goto(`${app.url}/usage/agents?project=${PROJECT}&since=7d`);
    const rows = page.getByTestId("agent-record-row");
    await rows.first().waitFor();
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")),
    );
    // claude-coder: the seeded task (approved in 2, 120 s) and c1 (approved in 2, 240 s, chosen); codex-coder: c2 (capped)
    // and c3 (ended when the test above appended its end, so its wall time is this run's: not compared).
    expect(cells[0]).toEqual(["claude-coder", "claude-m", "2", "100% (2/2)", "2", "3m", "0.00 USD + unpriced", "1", "1"]);
    expect([...cells[1]!.slice(0, 5), ...cells[1]!.slice(6)]).toEqual(["codex-coder", "gpt-m", "2", "0% (0/2)", "–", "–", "2", "0"]);
    expect(await layoutProblems(page, "agent-record")).toEqual([]);

    // The CLI with an API token, as a script would run it.
    const created = await trpcMutate(page, "tokens.create", { name: "agent record e2e" });
    expect(created.status).toBe(200);
    const token = (JSON.parse(created.body) as { result: { data: { token: string } } }).result.data.token;
    const env = cleanEnv({ CATCAFE_URL: app.url, CATCAFE_TOKEN: token, HOME: tmp });
    const cli = (args: string[]) => run(path.join(ROOT, "bin", "catcafe.mjs"), args, { env, cwd: tmp, timeoutMs: 60_000 });
    const asJson = await cli(["agents", "stats", "--project", PROJECT, "--since", "7d", "--json"]);
    expect(asJson.code, asJson.stderr).toBe(0);
    const record = JSON.parse(asJson.stdout) as AgentRecord;
    expect(record.agents.map((a) => [a.agentId, a.model, a.tasks, a.approved, a.bakeOffs, a.chosen])).toEqual([
      ["claude-coder", "claude-m", 2, 2, 1, 1],
      ["codex-coder", "gpt-m", 2, 0, 2, 0],
    ]);
    const asTable = await cli(["agents", "stats", "--project", PROJECT]);
    expect(asTable.code, asTable.stderr).toBe(0);
    expect(asTable.stdout).toMatch(/^AGENT\s+MODEL\s+TASKS\s+APPROVED/m);
    expect(asTable.stdout).toMatch(/^claude-coder\s+claude-m\s+2\s+100% \(2\/2\)/m);
    const bad = await cli(["agents", "stats", "--project", PROJECT, "--since", "yesterday-ish"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not a time");
  });
});
