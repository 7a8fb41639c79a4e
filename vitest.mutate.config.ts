// The tiers mutation testing runs (npm run mutate, stryker.config.json): unit and integration,
// which prove the core promises, and from e2e only the two files that prove
// `server/commands/run.ts` (the allowlisted command runner, whose every promise is about a real
// process: as a plain child, and in the sandbox) without a database; the rest of e2e (real CLIs,
// a browser) would make each mutant minutes.
// CATCAFE_MUTATE_TIERS=unit narrows a run to the unit tier: a quick first pass whose score is
// a lower bound (the other tiers can only kill more). CATCAFE_MUTATE_FILES (comma-separated test
// files) narrows each tier it names files of to those files, and leaves the other tiers whole:
// a module's own integration tests, where every integration test reaches it (the event store)
// and running them all per mutant would take hours; again a lower bound. The rest is
// vitest.config.ts's.
import { defineConfig, type TestProjectConfiguration } from "vitest/config";
import { sandboxStatus } from "./server/process/sandbox";
import base from "./vitest.config";

const tiers = new Set((process.env.CATCAFE_MUTATE_TIERS ?? "unit,int,commands").split(",").map((tier) => tier.trim()));

// Tests that pin the text of a source file, not its behaviour: Stryker instruments every file
// it mutates, so their hash never matches there and the dry run would fail before any mutant.
const SOURCE_PINS = ["test/unit/task-fold.unit.test.ts"];

/** The test files a run is narrowed to (CATCAFE_MUTATE_FILES), or undefined for every tier whole. */
const only = process.env.CATCAFE_MUTATE_FILES?.split(",")
  .map((f) => f.trim())
  .filter(Boolean);

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

/** The listed files `include` covers (under a glob's directory, or named exactly); all of `include` when it covers none. */
function narrowed(include: string[], files: string[]): string[] {
  const covered = files.filter((file) =>
    include.some((glob) => (glob.includes("*") ? file.startsWith(glob.slice(0, glob.indexOf("*"))) : glob === file)),
  );
  return covered.length > 0 ? covered : include;
}

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    projects: [...projects, ...commands]
      .filter((p) => tiers.has(String(p.test?.name)))
      .map((p) => (only ? { ...p, test: { ...p.test, include: narrowed(p.test?.include ?? [], only) } } : p))
      .map((p) => ({ ...p, test: { ...p.test, exclude: [...(p.test?.exclude ?? []), ...SOURCE_PINS] } })),
  },
});
