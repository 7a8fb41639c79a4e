// The tiers mutation testing runs (npm run mutate, stryker.config.json): unit and integration,
// which prove the core promises, and from e2e only the two files that prove
// `server/commands/run.ts` (the allowlisted command runner, whose every promise is about a real
// process: as a plain child, and in the sandbox) without a database; the rest of e2e (real CLIs,
// a browser) would make each mutant minutes.
// CATCAFE_MUTATE_TIERS=unit narrows a run to the unit tier: a quick first pass whose score is
// a lower bound (the other tiers can only kill more). The rest is vitest.config.ts's.
import { defineConfig, type TestProjectConfiguration } from "vitest/config";
import { sandboxStatus } from "./server/process/sandbox";
import base from "./vitest.config";

const tiers = new Set((process.env.CATCAFE_MUTATE_TIERS ?? "unit,int,commands").split(",").map((tier) => tier.trim()));

// Tests that pin the text of a source file, not its behaviour: Stryker instruments every file
// it mutates, so their hash never matches there and the dry run would fail before any mutant.
const SOURCE_PINS = ["test/unit/task-fold.unit.test.ts"];

type InlineProject = Extract<TestProjectConfiguration, { test?: unknown }>;
const projects = (base.test?.projects ?? []).filter((p): p is InlineProject => typeof p === "object" && "test" in p);
const e2e = projects.find((p) => p.test?.name === "e2e");
/**
 * The "commands" tier: the e2e files that run real commands through runCommand; they need no
 * PostgreSQL. sandbox.e2e only where bubblewrap works (CI installs it): without it that file
 * fails by design, and the dry run with it.
 */
const commands: InlineProject[] = e2e
  ? [
      {
        ...e2e,
        test: {
          ...e2e.test,
          name: "commands",
          include: ["test/e2e/commands.e2e.test.ts", ...(sandboxStatus().available ? ["test/e2e/sandbox.e2e.test.ts"] : [])],
          globalSetup: [],
        },
      },
    ]
  : [];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    projects: [...projects, ...commands]
      .filter((p) => tiers.has(String(p.test?.name)))
      .map((p) => ({ ...p, test: { ...p.test, exclude: [...(p.test?.exclude ?? []), ...SOURCE_PINS] } })),
  },
});
