// The repository as a sandboxed run sees it (server/process/git-dir.ts, repositoryView): its
// git directory read-only, its config replaced by the format settings alone. The config is read
// by `git config` once per change of the file, not once per run (docs/scaling.md, "First output
// and live paint"): a change to it, by git or by hand, is in the next run's view, and a
// credential never is.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryView } from "../../server/process/git-dir";
import { observeProcesses } from "../../server/process/spawn";

let root = "";
let repo = "";
let workspace = "";

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();
}

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-view-")));
  repo = path.join(root, "project");
  fs.mkdirSync(repo);
  fs.writeFileSync(path.join(repo, "a.txt"), "one\n");
  git(repo, "init", "-q", "-b", "main");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "initial");
  workspace = path.join(root, "ws");
  git(repo, "worktree", "add", "-q", "--detach", workspace);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** The config a run in the workspace is shown, and how many processes making its view started. */
async function view(): Promise<{ config: string; processes: number }> {
  const scratch = fs.mkdtempSync(path.join(root, "scratch-"));
  let processes = 0;
  const observer = { spawned: () => void processes++, exited: () => {} };
  const made = await observeProcesses(observer, () => repositoryView(workspace, scratch));
  expect(made.readOnly).toStrictEqual([path.join(repo, ".git")]);
  expect(made.overlays).toStrictEqual([{ source: path.join(scratch, "git-config"), target: path.join(repo, ".git", "config") }]);
  return { config: fs.readFileSync(path.join(scratch, "git-config"), "utf8"), processes };
}

const settled = () => new Promise((r) => setTimeout(r, 2_100));

describe("the sandbox's view of the repository's config", () => {
  it("is read by git once per change of the file: a setting git writes, and one edited in place, are in the next view; a credential never", async () => {
    const config = path.join(repo, ".git", "config");
    git(repo, "config", "remote.origin.url", "https://user:tok-view-credential@example.com/p.git");
    // Just written: not trusted to stay as it is within its timestamp's tick, read every time.
    expect((await view()).processes).toBe(1);
    expect((await view()).processes).toBe(1);
    await settled();
    const first = await view();
    expect(first.config).toBe("[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
    const again = await view();
    expect(again).toStrictEqual({ config: first.config, processes: 0 });

    // git writes through a lock file and a rename: a new file.
    git(repo, "config", "extensions.worktreeConfig", "true");
    await settled();
    const byGit = await view();
    expect(byGit).toStrictEqual({ config: `${first.config}[extensions]\n\tworktreeconfig = true\n`, processes: 1 });
    expect((await view()).processes).toBe(0);

    // Edited in place (the same inode, the same size): its change time tells.
    const inode = fs.statSync(config).ino;
    const text = fs.readFileSync(config, "utf8");
    fs.writeFileSync(config, text.replace("repositoryformatversion = 0", "repositoryformatversion = 1"));
    expect(fs.statSync(config).ino).toBe(inode);
    await settled();
    const byHand = await view();
    expect(byHand).toStrictEqual({
      config: byGit.config.replace("repositoryformatversion = 0", "repositoryformatversion = 1"),
      processes: 1,
    });
    for (const seen of [first, again, byGit, byHand]) expect(seen.config).not.toContain("tok-view-credential");
  }, 30_000);
});
