// Workspace state that travels with the session, for runners on several machines: each
// build's commit is also packed as a git bundle (every commit of the session since its base
// commit), stored as a blob in PostgreSQL, and a runner whose own clone of the project lacks
// the commit a step starts from fetches it from that bundle first. The receiving clone needs
// only the base commit (any clone of the same project has it).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppError } from "../errors";
import { runGit } from "./git";
import { assertFullCommitId, pinCommit, requireRepository } from "./repo";

const pinRef = (commit: string) => `refs/catcafe/pins/${commit}`;

async function withTempFile<T>(fn: (file: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bundle-"));
  try {
    return await fn(path.join(dir, "session.bundle"));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The commits from `baseCommit` (exclusive) to `commit` as a git bundle, or null when there
 * are none (`commit` is the base). `commit` must be pinned (commitWorkspace pins it; a
 * commit left as it was is the pinned head of an earlier step).
 */
export async function bundleSession(cwd: string, baseCommit: string, commit: string): Promise<Buffer | null> {
  assertFullCommitId(baseCommit, "baseCommit");
  assertFullCommitId(commit, "commit");
  if (commit === baseCommit) return null;
  return withTempFile(async (file) => {
    await runGit(cwd, ["bundle", "create", "--quiet", file, pinRef(commit), `^${baseCommit}`]);
    return fs.readFileSync(file);
  });
}

async function hasCommit(cwd: string, commit: string): Promise<boolean> {
  const r = await runGit(cwd, ["cat-file", "-e", `${commit}^{commit}`], { allowFailure: true });
  return r.exitCode === 0;
}

/**
 * Makes sure the project clone at `repoPath` has `commit`: nothing to do when it has;
 * otherwise the session's bundle (loaded only then) is fetched into it and the commit
 * pinned. NOT_FOUND when the commit is neither here nor in a bundle.
 */
export async function ensureCommit(
  repoPath: string,
  commit: string,
  loadBundle: () => Promise<Buffer | null>,
): Promise<"present" | "fetched"> {
  assertFullCommitId(commit, "commit");
  // The common case (this clone has it) costs one git process.
  if (fs.existsSync(repoPath) && (await hasCommit(repoPath, commit))) return "present";
  const repo = await requireRepository(repoPath);
  const bundle = await loadBundle();
  if (!bundle) {
    throw new AppError("NOT_FOUND", `commit ${commit} is not in ${repo.top}, and the session recorded no bundle that holds it`, {
      commit,
      repoPath: repo.top,
    });
  }
  await withTempFile(async (file) => {
    fs.writeFileSync(file, bundle);
    await runGit(repo.top, ["fetch", "--quiet", "--no-tags", file, `+refs/catcafe/pins/*:refs/catcafe/pins/*`]);
  });
  if (!(await hasCommit(repo.top, commit))) {
    throw new AppError("NOT_FOUND", `the session's bundle does not hold commit ${commit}`, { commit, repoPath: repo.top });
  }
  await pinCommit(repo.top, commit);
  return "fetched";
}
