// Workspace state that travels with the session, for runners on several machines
// (docs/scaling.md#bundles): each build's commit is also packed as a git bundle of only the
// commits that build added (since the commit it started from: the previous bundle's commit,
// or the base commit for the first), stored as a blob in PostgreSQL. A runner whose own
// clone lacks the commit a step starts from walks the chain of bundles back to a commit it
// has (any clone of the project has the base commit) and fetches them oldest first.
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
 * The commits from `since` (exclusive) to `commit` as a git bundle, or null when there are
 * none (`commit` is `since`: nothing was built). `since` is the commit the build started
 * from, so the bundle holds only what it added. `commit` must be pinned (commitWorkspace
 * pins it; a commit left as it was is the pinned head of an earlier step).
 */
export async function bundleSession(cwd: string, since: string, commit: string): Promise<Buffer | null> {
  assertFullCommitId(since, "since");
  assertFullCommitId(commit, "commit");
  if (commit === since) return null;
  return withTempFile(async (file) => {
    await runGit(cwd, ["bundle", "create", "--quiet", file, pinRef(commit), `^${since}`]);
    return fs.readFileSync(file);
  });
}

/** The bundle recorded for a commit: what it was made since, and its bytes (loaded only when fetched). */
export interface BundleLink {
  /** The bundle's prerequisite; null for a bundle of every commit since the base (recorded before bundles were incremental). */
  since: string | null;
  /** The bundle's bytes; NOT_FOUND naming the commit and the session when they are gone. */
  load(): Promise<Buffer>;
}

/**
 * Where a session's bundles are found (server/events/bundle-chain.ts reads them from the
 * session's events, its fork ancestors' included).
 */
export interface BundleChain {
  /** The session, named in errors. */
  sessionId: string;
  /** The bundle that holds `commit`, or null when the session recorded none for it. */
  bundleOf(commit: string): Promise<BundleLink | null>;
}

/** Whether the repository at `cwd` has `commit` (one git process). */
export async function hasCommit(cwd: string, commit: string): Promise<boolean> {
  const r = await runGit(cwd, ["cat-file", "-e", `${commit}^{commit}`], { allowFailure: true });
  return r.exitCode === 0;
}

/**
 * The commits a bundle needs the receiving clone to have: its header's `-<id>` lines (git's
 * bundle format, v2 and v3), read before the blank line that ends the header.
 */
export function bundlePrerequisites(bundle: Buffer): string[] {
  const end = bundle.indexOf("\n\n");
  const header = bundle.subarray(0, end < 0 ? Math.min(bundle.length, 64 * 1024) : end).toString("utf8");
  return header
    .split("\n")
    .filter((line) => line.startsWith("-"))
    .map((line) => line.slice(1).split(" ")[0]!)
    .filter((id) => /^[0-9a-f]{40}$/.test(id));
}

/**
 * The bundles `repoPath` needs to have `commit`, oldest first: from the bundle of `commit`
 * back through each bundle's prerequisite until a commit the clone has (or a bundle of every
 * commit since the base). NOT_FOUND when a link of the chain was never recorded.
 */
async function missingLinks(repoPath: string, commit: string, chain: BundleChain): Promise<{ commit: string; link: BundleLink }[]> {
  const links: { commit: string; link: BundleLink }[] = [];
  let need = commit;
  for (;;) {
    const link = await chain.bundleOf(need);
    if (!link) {
      const why = links.length
        ? `the bundle of ${links.at(-1)!.commit} needs commit ${need}, which ${repoPath} lacks and no earlier bundle of the session holds`
        : `commit ${need} is not in ${repoPath}, and the session recorded no bundle that holds it`;
      throw new AppError("NOT_FOUND", `cannot restore commit ${commit} of session ${chain.sessionId}: ${why}`, {
        commit,
        missingCommit: need,
        sessionId: chain.sessionId,
        repoPath,
      });
    }
    links.unshift({ commit: need, link });
    if (link.since === null || (await hasCommit(repoPath, link.since))) return links;
    if (links.some((l) => l.commit === link.since)) {
      throw new AppError("NOT_FOUND", `the bundles of session ${chain.sessionId} form a cycle at commit ${link.since}`, {
        commit,
        missingCommit: link.since,
        sessionId: chain.sessionId,
      });
    }
    need = link.since;
  }
}

/**
 * Makes sure the project clone at `repoPath` has `commit`: nothing to do when it has;
 * otherwise the chain of the session's bundles that leads to it is loaded (every link before
 * any is fetched), checked for prerequisites the clone lacks, and fetched oldest first, and
 * the commit pinned. NOT_FOUND naming the missing commit and the session when a link is
 * missing, its blob is gone, or a prerequisite is in neither the clone nor the chain.
 */
export async function ensureCommit(repoPath: string, commit: string, chain: BundleChain): Promise<"present" | "fetched"> {
  assertFullCommitId(commit, "commit");
  // The common case (this clone has it) costs one git process.
  if (fs.existsSync(repoPath) && (await hasCommit(repoPath, commit))) return "present";
  const repo = await requireRepository(repoPath);
  const links = await missingLinks(repo.top, commit, chain);
  const bundles = await Promise.all(links.map(async (l) => ({ commit: l.commit, bytes: await l.link.load() })));
  await withTempFile(async (file) => {
    for (const bundle of bundles) {
      for (const prerequisite of bundlePrerequisites(bundle.bytes)) {
        if (await hasCommit(repo.top, prerequisite)) continue;
        throw new AppError(
          "NOT_FOUND",
          `cannot restore commit ${commit} of session ${chain.sessionId}: the bundle of ${bundle.commit} needs commit ${prerequisite}, which ${repo.top} lacks and no earlier bundle of the session holds`,
          { commit, missingCommit: prerequisite, sessionId: chain.sessionId, repoPath: repo.top },
        );
      }
      fs.writeFileSync(file, bundle.bytes);
      await runGit(repo.top, ["fetch", "--quiet", "--no-tags", file, `+refs/catcafe/pins/*:refs/catcafe/pins/*`]);
    }
  });
  if (!(await hasCommit(repo.top, commit))) {
    throw new AppError("NOT_FOUND", `the bundles of session ${chain.sessionId} do not hold commit ${commit}`, {
      commit,
      sessionId: chain.sessionId,
      repoPath: repo.top,
    });
  }
  await pinCommit(repo.top, commit);
  return "fetched";
}
