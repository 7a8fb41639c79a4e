// The runner's part of a modify session's report step (server/runner/forge-steps.ts), on a
// real git repository and a real database: the patch is git's diff and is appended to the
// agent's report; a report an untrusted process linked to /proc/self/environ is never followed
// (the runner reads with its own environment), and nothing of that environment is stored.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ForgeStepInput } from "../../server/events/step-contract";
import { ARTIFACT_PATHS as A, type Patch } from "../../server/forge/artifacts";
import { finishForgeStep } from "../../server/runner/forge-steps";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { gitIn, tempDir } from "../helpers/tasks";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

/** A repository whose HEAD changed bin/wc.js since `base`; the report step about to finish in it. */
function repoWithChange(): { dir: string; base: string; head: string } {
  const dir = path.join(tempDir("catcafe-patch-"), "repo");
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  fs.writeFileSync(path.join(dir, "bin/wc.js"), "one\ntwo\n");
  gitIn(dir, "init", "-q", "-b", "main");
  gitIn(dir, "add", "-A");
  gitIn(dir, "commit", "-q", "-m", "base");
  const base = gitIn(dir, "rev-parse", "HEAD");
  fs.writeFileSync(path.join(dir, "bin/wc.js"), "one\n2\nthree\n");
  gitIn(dir, "commit", "-q", "-am", "change");
  return { dir, base, head: gitIn(dir, "rev-parse", "HEAD") };
}

const reportStep = (base: string): ForgeStepInput => ({
  stage: "report",
  iteration: 1,
  writes: [A.changeReport],
  collect: [A.changeReport, A.patch],
  materialize: [],
  protect: [],
  attach: [],
  feedbackHistory: "[]\n",
  modifying: true,
  patch: { baseCommit: base, tasks: { kept: 5, changed: 0, added: 1, removed: 0 } },
});

describe("a modify session's report step", () => {
  it("writes patch.json from git's diff and appends it to the agent's report as its Patch section", async () => {
    const { dir, base, head } = repoWithChange();
    fs.mkdirSync(path.join(dir, ".forge"));
    fs.writeFileSync(path.join(dir, A.changeReport), "# Change\n\n## Summary\nA change.\n");
    const out = await finishForgeStep(db.pool, dir, reportStep(base));
    expect(out.warnings).toEqual([]);
    expect(out.artifacts.map((a) => a.path)).toEqual([A.changeReport, A.patch]);
    const patch = JSON.parse(fs.readFileSync(path.join(dir, A.patch), "utf8")) as Patch;
    expect(patch).toEqual({
      baseCommit: base,
      headCommit: head,
      files: [{ path: "bin/wc.js", status: "modified", added: 2, removed: 1 }],
      added: 2,
      removed: 1,
      tasks: { kept: 5, changed: 0, added: 1, removed: 0 },
    });
    const report = fs.readFileSync(path.join(dir, A.changeReport), "utf8");
    expect(report).toMatch(/^# Change\n\n## Summary\nA change\.\n\n## Patch\n/);
    expect(report).toContain("| `bin/wc.js` | modified | 2 | 1 |");
    expect(report).toContain("Plan tasks: 5 kept, 0 changed, 1 added, 0 removed.");
  });

  it("a report linked to /proc/self/environ by an untrusted process is refused: nothing of the runner's environment is stored or written anywhere", async () => {
    const secret = "patch-report-secret-do-not-leak-4417";
    const saved = process.env.NEXTAUTH_SECRET;
    process.env.NEXTAUTH_SECRET = secret;
    try {
      const { dir, base } = repoWithChange();
      // Another process plants the link, as an agent would in its sandbox.
      execFileSync(
        process.execPath,
        ["-e", `const fs = require("node:fs"); fs.mkdirSync(".forge"); fs.symlinkSync("/proc/self/environ", ".forge/change_report.md");`],
        { cwd: dir },
      );
      expect(fs.lstatSync(path.join(dir, A.changeReport)).isSymbolicLink()).toBe(true);
      const before = (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM blobs")).rows[0]!.n;
      await expect(finishForgeStep(db.pool, dir, reportStep(base))).rejects.toThrow(
        'refused path ".forge/change_report.md": it leaves the workspace',
      );
      // The link is still a link (nothing was written through it), and no blob was stored.
      expect(fs.lstatSync(path.join(dir, A.changeReport)).isSymbolicLink()).toBe(true);
      expect((await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM blobs")).rows[0]!.n).toBe(before);
      const leaks = await db.pool.query("SELECT count(*)::int AS n FROM blobs WHERE position(convert_to($1, 'UTF8') in content) > 0", [
        secret,
      ]);
      expect(leaks.rows[0].n).toBe(0);
      const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], { cwd: dir, encoding: "utf8" })
        .split("\n")
        .filter(Boolean);
      for (const file of files) {
        if (fs.lstatSync(path.join(dir, file)).isFile()) expect(fs.readFileSync(path.join(dir, file), "utf8"), file).not.toContain(secret);
      }
      expect(files).toContain(A.patch);
    } finally {
      if (saved === undefined) delete process.env.NEXTAUTH_SECRET;
      else process.env.NEXTAUTH_SECRET = saved;
    }
  });
});
