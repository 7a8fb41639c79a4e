// Starting a bake-off from New task in a real browser (Debian chromium through playwright-core)
// against a real `npm start` (docs/bake-off.md): the field is offered in proposal mode; an
// unknown coder is refused with the reason, shown on the form; two of the demo's agents start a
// bake-off, whose confirm forks them: the parent waits in `bake_off` with two contender
// sessions, and its page offers no Cancel (a bake-off is picked or dismissed). Then the
// comparison page follows the contenders live to their ends without a reload; Ask the judge
// is pressed (the demo's simulated reviewer answers strict JSON: its advice shows); Pick with a reason
// delivers the winner by the demo's settings (a merge into its target branch, carried out)
// and the other card turns not_chosen. The form and the comparison (mid-run and after the
// pick) are checked at 390 and 1280 px (axe: no serious violation, no sideways scroll);
// screenshots land in test/e2e/screenshots/.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutProblems } from "../helpers/axe";
import { launchChromium, screenshot, signIn, trpcMutate } from "../helpers/browser";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

let app: LiveServer;
let browser: Browser;

beforeAll(async () => {
  app = await startLiveServer("bake-off");
  browser = await launchChromium();
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await app?.stop();
}, 60_000);

async function query<T>(page: Page, procedure: string, input: unknown): Promise<T> {
  const res = await page.evaluate(
    async ({ procedure, input }) => {
      const r = await fetch(`/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`);
      return { status: r.status, body: await r.text() };
    },
    { procedure, input },
  );
  expect(res.status, res.body).toBe(200);
  return (JSON.parse(res.body) as { result: { data: T } }).result.data;
}

interface BakeOffView {
  state: string;
  contenders: Array<{ id: string; sessionId: string | null; coder: string; label: string }>;
}

describe("a bake-off from New task", () => {
  it("is started from the form (an unknown coder refused on it), and its confirm forks the contenders", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, app.url, app.admin.email, app.admin.password, "/sessions/new");
    await page.getByLabel("Project").selectOption("demo");
    await page.getByLabel("What should the cats do?").fill("Fix slugify() (a bake-off)");
    const field = page.getByLabel("Bake-off (optional)");
    await field.fill("coder-sim, nobody");
    expect(await layoutProblems(page, "new-task-bake-off")).toEqual([]);

    await page.getByRole("button", { name: "Start bake-off" }).click();
    await page.getByText("no agent nobody in this project").waitFor({ timeout: 10_000 });
    expect(page.url()).toMatch(/\/sessions\/new$/);
    await screenshot(page, "new-task-bake-off-refused.png");

    await field.fill("coder-sim, planner-sim");
    await Promise.all([
      page.waitForURL(/\/sessions\/s-[0-9a-f]+$/, { timeout: 15_000 }),
      page.getByRole("button", { name: "Start bake-off" }).click(),
    ]);
    const sessionId = page.url().split("/").pop()!;
    const configured = await query<BakeOffView>(page, "bakeOffs.get", { sessionId });
    expect(configured.contenders.map((c) => [c.id, c.coder, c.sessionId])).toEqual([
      ["c1", "coder-sim", null],
      ["c2", "planner-sim", null],
    ]);

    await expect
      .poll(async () => (await query<{ fsm: string }>(page, "tasks.get", { sessionId })).fsm, { timeout: 30_000 })
      .toBe("awaiting_operator_confirm");
    const confirmed = await trpcMutate(page, "tasks.confirm", { sessionId, via: "button" });
    expect(confirmed.status, confirmed.body).toBe(200);
    const forked = await query<BakeOffView>(page, "bakeOffs.get", { sessionId });
    expect(forked.state).toBe("bake_off");
    expect(forked.contenders.map((c) => c.sessionId)).toEqual([
      expect.stringMatching(new RegExp(`^${sessionId}-c1-`)),
      expect.stringMatching(new RegExp(`^${sessionId}-c2-`)),
    ]);
    // The session's page shows where it is, in words.
    const badge = page.locator("[data-state]").first();
    await expect.poll(() => badge.getAttribute("data-state"), { timeout: 15_000 }).toBe("bake_off");
    expect(await badge.innerText()).toContain("Bake-off running");
    // It is picked or dismissed, never cancelled: no Cancel button.
    await page.getByRole("button", { name: "Rerun" }).waitFor();
    expect(await page.getByTestId("cancel-button").count()).toBe(0);
    await screenshot(page, "bake-off-parent.png");

    // The comparison page, live: the cards follow the contenders to their ends without a reload.
    await page.goto(`${app.url}/sessions/${sessionId}/bake-off`);
    const card = (id: string) => page.locator(`[data-testid="contender-card"][data-contender="${id}"]`);
    await card("c2").waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId("bake-off-live").innerText(), { timeout: 15_000 }).toMatch(/Live|ended/);
    await screenshot(page, "bake-off-comparison-run-1280.png");
    await page.setViewportSize({ width: 390, height: 800 });
    await screenshot(page, "bake-off-comparison-run-390.png");
    expect(await layoutProblems(page, "bake-off-comparison-run")).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    for (const id of ["c1", "c2"])
      await expect.poll(() => card(id).getByTestId("fig-outcome").innerText(), { timeout: 60_000 }).not.toMatch(/^running/);
    expect(page.url()).toMatch(/\/bake-off$/);

    // The judge (the demo's simulated reviewer, its canned strict JSON): its advice shows on the page.
    await expect.poll(() => page.getByTestId("judge-button").isDisabled(), { timeout: 15_000 }).toBe(false);
    await page.getByTestId("judge-button").click();
    await page.getByTestId("judge-recommendation").waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("judge-recommendation").innerText()).toMatch(
      /The judge recommends c1[\s\S]*Ranking c1 > c2 · by reviewer-sim/i,
    );
    expect(await card("c1").getByTestId("recommended-mark").count()).toBe(1);

    // Pick one that may win, with a reason: it is delivered, the other ends not_chosen.
    const pickable = page.locator('[data-testid="pick-button"]:not([disabled])').first();
    await pickable.waitFor({ timeout: 15_000 });
    const winner = (await pickable.innerText()).replace("Pick ", "");
    const loser = winner === "c1" ? "c2" : "c1";
    await pickable.click();
    await page.getByTestId("pick-button-reason").fill("smallest diff");
    await page.getByTestId("pick-button-send").click();
    await page.getByTestId("chosen-summary").waitFor({ timeout: 15_000 });
    expect(await page.getByTestId("chosen-summary").innerText()).toMatch(new RegExp(`^${winner} was chosen by .+: smallest diff\\.$`));
    await expect.poll(() => card(loser).getByTestId("fig-outcome").innerText(), { timeout: 15_000 }).toMatch(/^not_chosen/);
    const picked = await query<{
      state: string;
      choice: { contenderId: string } | null;
      contenders: Array<{ id: string; sessionId: string }>;
    }>(page, "bakeOffs.get", { sessionId });
    expect(picked.choice?.contenderId).toBe(winner);
    const winnerSession = picked.contenders.find((c) => c.id === winner)!.sessionId;
    // The delivery, by the demo's settings: a merge into its target branch, carried out by the runner.
    type Delivery = { requested: { method: string }; outcome: unknown };
    await expect
      .poll(
        async () =>
          (await query<Delivery[]>(page, "sessions.deliveries", { sessionId: winnerSession })).map((d) => [
            d.requested.method,
            d.outcome !== null,
          ]),
        {
          timeout: 30_000,
        },
      )
      .toEqual([["merge", true]]);
    await screenshot(page, "bake-off-comparison-picked-1280.png");
    await page.setViewportSize({ width: 390, height: 800 });
    await screenshot(page, "bake-off-comparison-picked-390.png");
    expect(await layoutProblems(page, "bake-off-comparison-picked")).toEqual([]);
    await context.close();
  }, 300_000);
});
