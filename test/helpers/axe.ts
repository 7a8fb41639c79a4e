// What a person would find wrong with a page as it is, for the browser tests: axe-core's
// serious and critical violations, a sideways scroll at a phone's and a laptop's width, a
// person named by id instead of by name (req X2). Each width gets a screenshot
// (test/e2e/screenshots/, look at them).
import path from "node:path";
import type { Page } from "playwright-core";
import { screenshot } from "./browser";
import { ROOT } from "./live-server";

const AXE_SOURCE = path.join(ROOT, "node_modules/axe-core/axe.min.js");

/** axe-core's serious and critical violations on the page now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE_SOURCE });
  return page.evaluate(async () => {
    type Violation = { id: string; impact: string | null; nodes: Array<{ target: string[] }> };
    const axe = (window as unknown as { axe: { run: (d: Document, o: object) => Promise<{ violations: Violation[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ["violations"] });
    return violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

/**
 * The page at 390 × 844 and 1280 × 800: its serious violations, a sideways scroll, a
 * `user:<id>` in its text; a screenshot of each as `<name>-<width>.png`. The viewport is
 * put back as it was.
 */
export async function layoutProblems(page: Page, name: string): Promise<string[]> {
  const problems: string[] = [];
  const original = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await page.waitForTimeout(150);
    problems.push(...(await seriousViolations(page)).map((v) => `${name} at ${width}: ${v}`));
    const { scrollWidth, clientWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    }));
    if (scrollWidth > clientWidth) problems.push(`${name} at ${width}: ${scrollWidth} px wide in a ${clientWidth} px window`);
    const ids = (await page.locator("body").innerText()).match(/user:[0-9a-f-]{8,}/g);
    if (ids) problems.push(`${name} at ${width}: names people by id (${ids.join(", ")})`);
    await screenshot(page, `${name}-${width}.png`);
  }
  await page.setViewportSize(original);
  return problems;
}
