// The families of server/metrics/registry.ts, the table of docs/operations.md ("Metrics") and
// the Grafana dashboard (docs/grafana/catcafe.json) name the same things: every family the
// registry declares is documented, and every family a panel queries exists.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { metricsText } from "../../server/metrics/registry";

const root = path.resolve(import.meta.dirname, "../..");

async function declared(): Promise<Set<string>> {
  const { body } = await metricsText();
  return new Set([...body.matchAll(/^# TYPE (catcafe_\w+) /gm)].map((m) => m[1]!));
}

describe("metrics families", () => {
  it("docs/operations.md documents every catcafe_ family", async () => {
    const section = fs.readFileSync(path.join(root, "docs/operations.md"), "utf8").split("## Metrics")[1]!.split("\n## ")[0]!;
    const families = await declared();
    expect(families.size).toBeGreaterThanOrEqual(15);
    // The table abbreviates the pool families as `_idle_clients`, `_waiting_clients`.
    for (const name of families) expect(section.includes(name) || section.includes(name.replace("catcafe_pg_pool", "")), name).toBe(true);
  });

  it("every family the Grafana dashboard queries is declared", async () => {
    const dashboard = fs.readFileSync(path.join(root, "docs/grafana/catcafe.json"), "utf8");
    const queried = new Set([...dashboard.matchAll(/catcafe_\w+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, "")));
    const families = await declared();
    expect(queried.size).toBeGreaterThanOrEqual(8);
    for (const name of queried) expect(families, name).toContain(name);
  });
});
