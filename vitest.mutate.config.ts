// The tiers mutation testing runs (npm run mutate, stryker.config.json): unit and integration,
// which prove the core promises; e2e (real CLIs, a browser) would make each mutant minutes.
// CATCAFE_MUTATE_TIERS=unit narrows a run to the unit tier: a quick first pass whose score is
// a lower bound (the integration tier can only kill more). The rest is vitest.config.ts's.
import { defineConfig } from "vitest/config";
import base from "./vitest.config";

const tiers = new Set((process.env.CATCAFE_MUTATE_TIERS ?? "unit,int").split(",").map((tier) => tier.trim()));

// Tests that pin the text of a source file, not its behaviour: Stryker instruments every file
// it mutates, so their hash never matches there and the dry run would fail before any mutant.
const SOURCE_PINS = ["test/unit/task-fold.unit.test.ts"];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    projects: (base.test?.projects ?? [])
      .filter((p) => typeof p === "object" && "test" in p && tiers.has(String(p.test?.name)))
      .map((p) =>
        typeof p === "object" && "test" in p ? { ...p, test: { ...p.test, exclude: [...(p.test?.exclude ?? []), ...SOURCE_PINS] } } : p,
      ),
  },
});
