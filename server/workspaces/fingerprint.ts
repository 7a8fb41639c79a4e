// A project's files fingerprinted against a commit (req F5, modify): each file's git blob id
// (sha-1 of its content, as `git hash-object` computes it), for the files git would see —
// tracked ones and untracked ones not ignored (.gitignore respected) — compared with the
// commit's tree. What changed since that commit is what a change request must not overlook.
import crypto from "node:crypto";
import { requireRepository, resolveCommit } from "./repo";
import { runGit } from "./git";

export interface Fingerprint {
  files: number;
  /** sha-256 over the sorted "path blob-id" lines: equal digests, equal files. */
  digest: string;
  changedSinceBase: string[];
  addedSinceBase: string[];
  removedSinceBase: string[];
}

/** The listed paths changed at most this many each (the counts stay exact in `files`). */
const LISTED = 200;

function nulSeparated(text: string): string[] {
  return text.split("\0").filter(Boolean);
}

/** The project's checkout (tracked and unignored untracked files) against `commit`'s tree. */
export async function fingerprintProject(repoPath: string, commit: string): Promise<Fingerprint> {
  const repo = await requireRepository(repoPath);
  const base = await resolveCommit(repo.top, commit);
  const listed = nulSeparated((await runGit(repo.top, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])).stdout);
  // A tracked file deleted in the checkout is listed by --cached but is no file any more.
  const deleted = new Set(nulSeparated((await runGit(repo.top, ["ls-files", "-z", "--deleted"])).stdout));
  const paths = [...new Set(listed)].filter((p) => !deleted.has(p)).sort();
  const ids = paths.length
    ? (await runGit(repo.top, ["hash-object", "--no-filters", "--stdin-paths"], { input: `${paths.join("\n")}\n` })).stdout
        .trim()
        .split("\n")
    : [];
  const now = new Map(paths.map((p, i) => [p, ids[i] ?? ""]));
  const then = new Map<string, string>();
  for (const entry of nulSeparated((await runGit(repo.top, ["ls-tree", "-r", "-z", base])).stdout)) {
    const tab = entry.indexOf("\t");
    const [, type, id] = entry.slice(0, tab).split(" ");
    if (type === "blob" && id) then.set(entry.slice(tab + 1), id);
  }
  const changed: string[] = [];
  const added: string[] = [];
  for (const [p, id] of now) {
    const was = then.get(p);
    if (was === undefined) added.push(p);
    else if (was !== id) changed.push(p);
  }
  const removed = [...then.keys()].filter((p) => !now.has(p)).sort();
  const digest = crypto
    .createHash("sha256")
    .update([...now].map(([p, id]) => `${p} ${id}`).join("\n"))
    .digest("hex");
  return {
    files: now.size,
    digest,
    changedSinceBase: changed.slice(0, LISTED),
    addedSinceBase: added.slice(0, LISTED),
    removedSinceBase: removed.slice(0, LISTED),
  };
}
