// The demo's git repository under the data directory: created once, atomically (built in
// a temporary directory, then renamed into place), and left alone afterwards. Sessions
// work in worktrees of it, so the checkout itself never changes.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { AppError } from "../errors";
import { runGit } from "../workspaces/git";
import { inspectCheckout, resolveCommit } from "../workspaces/repo";
import { DEMO_FILES, DEMO_REPO_DIR } from "./content";

/** A fixed author and date: the demo's first commit has the same id on every machine. */
const DEMO_GIT_CONFIG = [
  "-c",
  "user.name=Cat Cafe demo",
  "-c",
  "user.email=demo@catcafe.local",
  "-c",
  "commit.gpgsign=false",
  "-c",
  "core.autocrlf=false",
];
const DEMO_COMMIT_DATE = "2026-01-01T00:00:00Z";

export interface DemoRepo {
  path: string;
  /** HEAD of the demo repository. */
  commit: string;
  /** True when this call created it. */
  created: boolean;
}

export function demoRepoPath(dataDir: string): string {
  return path.join(path.resolve(dataDir), DEMO_REPO_DIR);
}

async function existingRepo(repoPath: string): Promise<DemoRepo> {
  const checkout = await inspectCheckout(repoPath);
  const commit = checkout && !checkout.linked ? await resolveCommit(checkout.top, "HEAD").catch(() => null) : null;
  if (!commit) {
    throw new AppError(
      "PRECONDITION_FAILED",
      `${repoPath} exists but is not the demo's git repository (no git checkout with a commit there); move it away to have it recreated, or set CATCAFE_DEMO=0`,
      { path: repoPath },
    );
  }
  // A demo repository from before deliveries gets its target branch.
  const target = await runGit(checkout!.top, ["rev-parse", "--verify", "--quiet", `refs/heads/${DEMO_DELIVERY_TARGET}`], {
    allowFailure: true,
  });
  if (target.exitCode !== 0) await runGit(checkout!.top, [...DEMO_GIT_CONFIG, "branch", DEMO_DELIVERY_TARGET, commit]);
  return { path: repoPath, commit, created: false };
}

async function buildRepo(dir: string): Promise<void> {
  for (const [file, content] of Object.entries(DEMO_FILES)) {
    fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  const env = { GIT_AUTHOR_DATE: DEMO_COMMIT_DATE, GIT_COMMITTER_DATE: DEMO_COMMIT_DATE };
  await runGit(dir, [...DEMO_GIT_CONFIG, "init", "-q", "-b", "main"]);
  await runGit(dir, [...DEMO_GIT_CONFIG, "add", "-A"]);
  await runGit(dir, [...DEMO_GIT_CONFIG, "commit", "-q", "-m", "slugify() and its tests (the tests fail: that is the demo)"], { env });
  // Where Deliver merges the demo's approved work (main is checked out here: a merge into it
  // would change the files under whoever looks at them).
  await runGit(dir, [...DEMO_GIT_CONFIG, "branch", DEMO_DELIVERY_TARGET]);
}

export const DEMO_DELIVERY_TARGET = "delivered";

/** The demo repository at `<dataDir>/demo-project`, created with its failing test if missing. */
export async function ensureDemoRepo(dataDir: string): Promise<DemoRepo> {
  const repoPath = demoRepoPath(dataDir);
  if (fs.existsSync(repoPath)) return existingRepo(repoPath);
  fs.mkdirSync(path.dirname(repoPath), { recursive: true });
  const staging = path.join(path.dirname(repoPath), `.${DEMO_REPO_DIR}-${crypto.randomBytes(4).toString("hex")}.tmp`);
  try {
    fs.mkdirSync(staging);
    await buildRepo(staging);
    try {
      fs.renameSync(staging, repoPath);
    } catch (err) {
      // Someone else put it in place meanwhile: theirs wins.
      if (!["EEXIST", "ENOTEMPTY"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
      return existingRepo(repoPath);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { path: repoPath, commit: await resolveCommit(repoPath, "HEAD"), created: true };
}
