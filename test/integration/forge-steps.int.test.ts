// What the runner does around a Forge agent step (server/runner/forge-steps.ts), called
// directly on a real git worktree and a real database: the earlier artifacts attached to the
// prompt within their budget, every write outside the stage undone, a person's edits kept
// through the redraft (merged, or the person winning a conflict), the stage's artifacts read
// with their refusals, and a modify session's patch written from git.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { putBlob, getBlob, type BlobRef } from "../../server/events/blobs";
import { ARTIFACT_PATHS as A, type Patch } from "../../server/forge/artifacts";
import { finishForgeStep, prepareForgeStep } from "../../server/runner/forge-steps";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { forgeStepInput as step } from "../helpers/forge";
import { commitFiles, gitIn, tempDir } from "../helpers/tasks";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});

const blob = (content: string | Buffer): Promise<BlobRef> => putBlob(db.pool, content);

/** A git repository with `files` committed. */
function repo(files: Record<string, string>): string {
  const dir = path.join(tempDir("catcafe-forge-steps-"), "repo");
  fs.mkdirSync(dir);
  commitFiles(dir, files);
  return dir;
}

describe("the artifacts attached to the prompt", () => {
  it("an artifact exactly as long as the budget (60,000 characters) is attached whole", async () => {
    const dir = repo({});
    const text = "a".repeat(60_000);
    const out = await prepareForgeStep(db.pool, dir, step({ attach: [{ path: A.idea, blob: await blob(text) }] }));
    expect(out.attached).toBe(`\n\nThe pipeline's artifacts so far (also in the workspace):\n--- ${A.idea} ---\n${text}`);
  });

  it("past the budget an artifact is cut and marked [truncated], and each one after it is cut to nothing", async () => {
    const dir = repo({});
    const first = "a".repeat(59_990);
    const out = await prepareForgeStep(
      db.pool,
      dir,
      step({
        attach: [
          { path: A.idea, blob: await blob(first) },
          { path: A.prd, blob: await blob("0123456789abcdefghij") },
          { path: A.design, blob: await blob("the design, too long to show") },
        ],
      }),
    );
    expect(out.attached).toBe(
      "\n\nThe pipeline's artifacts so far (also in the workspace):\n" +
        `--- ${A.idea} ---\n${first}\n\n` +
        `--- ${A.prd} ---\n0123456789\n[truncated]\n\n` +
        `--- ${A.design} ---\n\n[truncated]`,
    );
    // The artifacts are in the workspace too, with the feedback history.
    expect(fs.readFileSync(path.join(dir, A.feedbackHistory), "utf8")).toBe("[]\n");
  });

  it("with nothing to attach the prompt gains nothing", async () => {
    const dir = repo({});
    expect(await prepareForgeStep(db.pool, dir, step())).toEqual({ attached: "", afterMessage: new Map() });
  });

  it("an artifact with its writer's message in the thread goes after that message; the others before the thread; one budget for all", async () => {
    const dir = repo({});
    const out = await prepareForgeStep(
      db.pool,
      dir,
      step({
        attach: [
          { path: A.idea, blob: await blob("the idea") },
          { path: A.prd, blob: await blob("the PRD"), afterMessage: 1 },
          { path: A.requirements, blob: await blob("R1"), afterMessage: 1 },
          { path: A.design, blob: await blob("a".repeat(60_000)), afterMessage: 4 },
        ],
      }),
    );
    expect(out.attached).toBe(`\n\nThe pipeline's artifacts so far (also in the workspace):\n--- ${A.idea} ---\nthe idea`);
    expect(out.afterMessage).toEqual(
      new Map([
        [1, `--- ${A.prd} ---\nthe PRD\n\n--- ${A.requirements} ---\nR1`],
        [4, `--- ${A.design} ---\n${"a".repeat(60_000 - "the idea".length - "the PRD".length - "R1".length)}\n[truncated]`],
      ]),
    );
  });
});

describe("writes outside the stage", () => {
  it("are undone: a tracked file checked out again, an untracked file and an untracked repository removed, the runner's own files put back even when deleted or replaced by a directory", async () => {
    const dir = repo({ "src/a.js": "original\n", [A.idea]: "# Idea\n", [A.requirements]: "{}\n" });
    const forge = step({
      materialize: [
        { path: A.idea, blob: await blob("# Idea\n") },
        { path: A.requirements, blob: await blob("{}\n") },
      ],
    });
    await prepareForgeStep(db.pool, dir, forge);
    // The agent:
    fs.writeFileSync(path.join(dir, "src/a.js"), "changed\n");
    fs.writeFileSync(path.join(dir, "notes.txt"), "mine\n");
    fs.mkdirSync(path.join(dir, "vendor/lib"), { recursive: true });
    gitIn(path.join(dir, "vendor/lib"), "init", "-q");
    fs.writeFileSync(path.join(dir, "vendor/lib/index.js"), "x\n");
    fs.rmSync(path.join(dir, A.idea));
    fs.rmSync(path.join(dir, A.requirements));
    fs.mkdirSync(path.join(dir, A.requirements));
    fs.writeFileSync(path.join(dir, A.prd), "# PRD\n");

    const out = await finishForgeStep(db.pool, dir, forge);
    expect([...out.refusedWrites].sort()).toEqual([A.idea, A.requirements, "notes.txt", "src/a.js", "vendor/lib/"].sort());
    expect(fs.readFileSync(path.join(dir, "src/a.js"), "utf8")).toBe("original\n");
    expect(fs.existsSync(path.join(dir, "notes.txt"))).toBe(false);
    expect(fs.existsSync(path.join(dir, "vendor/lib"))).toBe(false);
    expect(fs.readFileSync(path.join(dir, A.idea), "utf8")).toBe("# Idea\n");
    expect(fs.readFileSync(path.join(dir, A.requirements), "utf8")).toBe("{}\n");
    expect(fs.readFileSync(path.join(dir, A.prd), "utf8")).toBe("# PRD\n");
    expect(gitIn(dir, "status", "--porcelain", "--untracked-files=all")).toBe(`?? ${A.feedbackHistory}\n?? ${A.prd}`);
  });
});

describe("writes outside the stage, by an agent that replaces the runner's file with a directory of files", () => {
  it("are undone too: the file is put back and the files under it are refused, not a failed step", async () => {
    const dir = repo({ [A.idea]: "# Idea\n" });
    const forge = step({ materialize: [{ path: A.idea, blob: await blob("# Idea\n") }] });
    await prepareForgeStep(db.pool, dir, forge);
    // The agent:
    fs.rmSync(path.join(dir, A.idea));
    fs.mkdirSync(path.join(dir, A.idea));
    fs.writeFileSync(path.join(dir, A.idea, "inside.md"), "mine\n");
    fs.writeFileSync(path.join(dir, A.prd), "# PRD\n");

    const out = await finishForgeStep(db.pool, dir, forge);
    expect([...out.refusedWrites].sort()).toEqual([A.idea, `${A.idea}/inside.md`].sort());
    expect(fs.readFileSync(path.join(dir, A.idea), "utf8")).toBe("# Idea\n");
    expect(gitIn(dir, "status", "--porcelain", "--untracked-files=all")).toBe(`?? ${A.feedbackHistory}\n?? ${A.prd}`);
  });

  it("a refused file that cannot be removed for any other reason fails the step with the system's error, not left in place (EBUSY faked: tests run as root)", async () => {
    const dir = repo({});
    const forge = step();
    await prepareForgeStep(db.pool, dir, forge);
    fs.writeFileSync(path.join(dir, "notes.txt"), "mine\n");
    const rm = fsp.rm.bind(fsp);
    const busy = vi.spyOn(fsp, "rm").mockImplementation(async (target, options) => {
      if (String(target).endsWith("notes.txt")) throw Object.assign(new Error("EBUSY: resource busy or locked"), { code: "EBUSY" });
      return rm(target, options);
    });
    try {
      await expect(finishForgeStep(db.pool, dir, forge)).rejects.toThrow(/^EBUSY: resource busy or locked$/);
    } finally {
      busy.mockRestore();
    }
  });
});

/** Lines `line1`..`lineN`, each followed by eight lines no side changes (so each change is its own hunk). */
function spaced(n: number, mark: (i: number) => string): string {
  let out = "";
  for (let i = 1; i <= n; i++) {
    out += `${mark(i)}\n`;
    for (let j = 1; j <= 8; j++) out += `same ${i}.${j}\n`;
  }
  return out;
}

describe("a person's edits through the redraft", () => {
  it("are merged with the draft where they do not overlap, and where they do the person's text wins and the draft is held back; the scratch files are removed", async () => {
    const base = spaced(3, (i) => `line ${i}`);
    const person = spaced(3, (i) => (i === 1 ? "person's line 1" : `line ${i}`));
    const draft = spaced(3, (i) => (i === 3 ? "agent's line 3" : `line ${i}`));
    const conflictBase = spaced(130, (i) => `line ${i}`);
    const conflictPerson = spaced(130, (i) => `person ${i}`);
    const conflictDraft = spaced(130, (i) => `agent ${i}`);
    const dir = repo({});
    fs.mkdirSync(path.join(dir, ".forge"));
    fs.writeFileSync(path.join(dir, A.prd), draft);
    fs.writeFileSync(path.join(dir, A.design), conflictDraft);
    fs.writeFileSync(path.join(dir, A.idea), "# Same\n");
    const scratchRoot = tempDir("catcafe-forge-tmp-");
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = scratchRoot;
    let out;
    try {
      out = await finishForgeStep(
        db.pool,
        dir,
        step({
          writes: [".forge/**"],
          protect: [
            { path: A.prd, base: await blob(base), edited: await blob(person) },
            { path: A.design, base: await blob(conflictBase), edited: await blob(conflictPerson) },
            { path: A.idea, base: null, edited: await blob("# Same\n") },
          ],
        }),
      );
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(fs.readdirSync(scratchRoot)).toEqual([]);
    expect(fs.readFileSync(path.join(dir, A.prd), "utf8")).toBe(
      spaced(3, (i) => (i === 1 ? "person's line 1" : i === 3 ? "agent's line 3" : `line ${i}`)),
    );
    expect(fs.readFileSync(path.join(dir, A.design), "utf8")).toBe(conflictPerson);
    expect(fs.readFileSync(path.join(dir, A.idea), "utf8")).toBe("# Same\n");
    // git merge-file counts at most 127 conflicts.
    expect(out.held).toEqual([
      {
        path: A.design,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        blob: { blob: expect.any(String), size: Buffer.byteLength(conflictDraft), mediaType: "text/plain; charset=utf-8" },
        conflicts: 127,
      },
    ]);
    expect((await getBlob(db.pool, out.held[0]!.blob.blob)).content.toString("utf8")).toBe(conflictDraft);
  });

  it("git merge-file failing (a binary file) fails the step with git's message", async () => {
    const dir = repo({});
    fs.mkdirSync(path.join(dir, ".forge"));
    fs.writeFileSync(path.join(dir, A.prd), "draft\0\n");
    await expect(
      finishForgeStep(db.pool, dir, step({ protect: [{ path: A.prd, base: await blob("base\0\n"), edited: await blob("person\0\n") }] })),
    ).rejects.toThrow(/^git merge-file failed for \.forge\/prd\.md: error: Cannot merge binary files: /);
  });
});

describe("the stage's artifacts as read after the agent", () => {
  it("are stored with their media type; one missing is skipped, one that is a directory, over 1 MiB or unreadable is a warning", async () => {
    const dir = repo({});
    const limit = 1024 * 1024;
    fs.mkdirSync(path.join(dir, ".forge/dir.md"), { recursive: true });
    fs.writeFileSync(path.join(dir, ".forge/big.md"), "b".repeat(limit));
    fs.writeFileSync(path.join(dir, ".forge/huge.md"), "h".repeat(limit + 1));
    fs.writeFileSync(path.join(dir, ".forge/data.json"), "{}\n");
    fs.writeFileSync(path.join(dir, ".forge/file"), "not a directory\n");
    const collect = [".forge/data.json", ".forge/big.md", ".forge/missing.md", ".forge/dir.md", ".forge/huge.md", ".forge/file/x.md"];
    const out = await finishForgeStep(db.pool, dir, step({ writes: [".forge/**"], collect }));
    expect(out.artifacts.map((a) => [a.path, a.blob.mediaType, a.size])).toEqual([
      [".forge/data.json", "application/json", 3],
      [".forge/big.md", "text/markdown; charset=utf-8", limit],
    ]);
    expect(out.warnings).toEqual([
      ".forge/dir.md is not a regular file",
      `.forge/huge.md is ${limit + 1} bytes, over the ${limit}-byte limit`,
      `ENOTDIR: not a directory, lstat '${dir}/.forge/file/x.md'`,
    ]);
  });
});

describe("a modify session's patch", () => {
  it("names each file's status from git (added, deleted, modified, a tab in a name) and, with no report from the agent, the report is the Patch section alone", async () => {
    const dir = repo({ "keep.txt": "one\n", "gone.txt": "bye\n" });
    const baseCommit = gitIn(dir, "rev-parse", "HEAD");
    fs.writeFileSync(path.join(dir, "keep.txt"), "one\ntwo\n");
    fs.rmSync(path.join(dir, "gone.txt"));
    fs.writeFileSync(path.join(dir, "new\tfile.txt"), "new\n");
    gitIn(dir, "add", "-A");
    gitIn(dir, "commit", "-q", "-m", "change");
    const out = await finishForgeStep(
      db.pool,
      dir,
      step({
        stage: "report",
        writes: [A.changeReport],
        collect: [A.changeReport],
        patch: { baseCommit, tasks: { kept: 1, changed: 0, added: 0, removed: 0 } },
      }),
    );
    expect(out.warnings).toEqual([]);
    const patch = JSON.parse(fs.readFileSync(path.join(dir, A.patch), "utf8")) as Patch;
    expect(patch.files).toEqual([
      { path: "gone.txt", status: "deleted", added: 0, removed: 1 },
      { path: "keep.txt", status: "modified", added: 1, removed: 0 },
      { path: "new\tfile.txt", status: "added", added: 1, removed: 0 },
    ]);
    expect(fs.readFileSync(path.join(dir, A.changeReport), "utf8")).toMatch(/^## Patch\n/);
  });

  it.each([
    [
      "its trailing blank lines trimmed, is followed by one blank line and the Patch section",
      "# Change\n\n\n\n",
      /^# Change\n\n## Patch\n/,
    ],
    ["of blank lines only counts as none: the report is the Patch section alone", "\n\n\n", /^## Patch\n/],
  ])("the agent's report, %s", async (_, report, expected) => {
    const dir = repo({ "keep.txt": "one\n" });
    const baseCommit = gitIn(dir, "rev-parse", "HEAD");
    fs.mkdirSync(path.join(dir, ".forge"));
    fs.writeFileSync(path.join(dir, A.changeReport), report);
    await finishForgeStep(
      db.pool,
      dir,
      step({ stage: "report", writes: [A.changeReport], patch: { baseCommit, tasks: { kept: 0, changed: 0, added: 0, removed: 0 } } }),
    );
    expect(fs.readFileSync(path.join(dir, A.changeReport), "utf8")).toMatch(expected);
  });
});

describe("an artifact the runner may not read", () => {
  it("is skipped with a warning naming it, for EACCES and EPERM alike (the system's error faked: tests run as root, who may read anything)", async () => {
    const dir = repo({});
    fs.mkdirSync(path.join(dir, ".forge"));
    fs.writeFileSync(path.join(dir, A.prd), "# PRD\n");
    fs.writeFileSync(path.join(dir, A.design), "# Design\n");
    const denied = (code: string) => Object.assign(new Error(`${code}: operation refused`), { code });
    const lstat = vi.spyOn(fsp, "lstat").mockRejectedValueOnce(denied("EACCES")).mockRejectedValueOnce(denied("EPERM"));
    try {
      const out = await finishForgeStep(db.pool, dir, step({ writes: [".forge/**"], collect: [A.prd, A.design] }));
      expect(out.artifacts).toEqual([]);
      expect(out.warnings).toEqual([
        `could not read ${A.prd}: permission denied (skipped)`,
        `could not read ${A.design}: permission denied (skipped)`,
      ]);
    } finally {
      lstat.mockRestore();
    }
  });
});
