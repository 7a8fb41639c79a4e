// A session's worktree as untrusted code sees it, and as the server may trust it.
//
// An agent or a test command can write anything in the worktree, the `.git` file included:
// pointed at a git directory of its own making, whose config names a filter, an fsmonitor or
// a diff driver, it would make the next git command of the runner (unsandboxed) run its code.
// So the pointer is only followed when it leads outside every place untrusted code can write,
// to a worktree admin directory whose own `gitdir` file points back at this worktree.
//
// Inside the sandbox the repository's git directory is read-only (git status, diff and log
// work; commits are the runner's), and its config is replaced by one that keeps only the
// format settings: a remote's URL or an http.extraheader may hold a credential.
import fs from "node:fs";
import path from "node:path";
import { runProcess } from "./run";
import { agentHomesPath, type SandboxSpec } from "./sandbox";

export interface WorktreeGitDirs {
  /** The worktree's admin directory (<common>/worktrees/<name>): HEAD, index. */
  gitDir: string;
  /** The repository's git directory: objects, refs, config. */
  commonDir: string;
}

export class TamperedWorktreeError extends Error {}

/** Where sandboxed code may write besides its worktree: the runs' private HOMEs (its /tmp is its own). */
function untrustedRoots(): string[] {
  const homes = agentHomesPath();
  return [fs.existsSync(homes) ? fs.realpathSync(homes) : path.resolve(homes)];
}

function inside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The git directories of the linked worktree `dir`, or null when `dir` has no `.git` file (a
 * main checkout, or no repository). Throws TamperedWorktreeError when the `.git` file points
 * anywhere untrusted code could have written, or to an admin directory that is not this
 * worktree's.
 */
export function worktreeGitDirs(dir: string): WorktreeGitDirs | null {
  const top = fs.realpathSync(dir);
  const pointerFile = path.join(top, ".git");
  let pointer: string;
  try {
    if (!fs.lstatSync(pointerFile).isFile()) return null;
    pointer = fs.readFileSync(pointerFile, "utf8");
  } catch {
    return null;
  }
  const match = /^gitdir: (.+)$/m.exec(pointer);
  const fail = (why: string) => new TamperedWorktreeError(`the worktree's .git file was changed (${why}); git will not follow it: ${top}`);
  if (!match?.[1]) throw fail("no gitdir line");
  let gitDir: string;
  try {
    gitDir = fs.realpathSync(path.resolve(top, match[1].trim()));
  } catch {
    throw fail("it points to a directory that does not exist");
  }
  if ([top, ...untrustedRoots()].some((root) => inside(root, gitDir))) throw fail("it points inside a directory agents can write");
  const back = readTrimmed(path.join(gitDir, "gitdir"));
  if (back === null || resolveReal(back) !== pointerFile) throw fail("its admin directory belongs to another worktree");
  const common = readTrimmed(path.join(gitDir, "commondir"));
  const commonDir = resolveReal(common === null ? gitDir : path.resolve(gitDir, common));
  if (commonDir === null || [top, ...untrustedRoots()].some((root) => inside(root, commonDir)))
    throw fail("its common directory is not trusted");
  return { gitDir, commonDir };
}

function readTrimmed(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}

function resolveReal(file: string): string | null {
  try {
    return fs.realpathSync(file);
  } catch {
    // The back pointer names `.git` in the worktree, which exists; anything else is a mismatch.
    return null;
  }
}

/**
 * What a sandbox adds for a run in `workspace`: the repository's git directory read-only,
 * with a config of only its format settings (written into `scratchDir`). Nothing when the
 * workspace is not a linked worktree (or its `.git` file was redirected).
 */
export async function repositoryView(workspace: string, scratchDir: string): Promise<Pick<SandboxSpec, "readOnly" | "overlays">> {
  let dirs: WorktreeGitDirs | null;
  try {
    dirs = worktreeGitDirs(workspace);
  } catch (error) {
    // A redirected `.git`: nothing of the repository is shown; the runner's next git call refuses it.
    if (error instanceof TamperedWorktreeError) return {};
    throw error;
  }
  if (!dirs) return {};
  const config = path.join(dirs.commonDir, "config");
  const sanitized = path.join(scratchDir, "git-config");
  fs.writeFileSync(sanitized, await formatSettings(config), { mode: 0o600 });
  return { readOnly: [dirs.commonDir], overlays: [{ source: sanitized, target: config }] };
}

/**
 * The last config read per file, with the file's identity when it was read. Git rewrites a
 * config through a lock file and a rename (a new inode), and an edit in place changes its
 * modification and change times, so an unchanged identity is an unchanged file: one `git
 * config` per change of the file instead of one per agent run (docs/scaling.md, "First output
 * and live paint").
 */
const formatSettingsRead = new Map<string, { identity: string; text: string }>();

/** A file changed this recently may change again within the same timestamp tick: not cached (git's "racy" rule). */
const RACY_MS = 2_000;

function fileIdentity(file: string): string | null {
  const stat = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!stat || Date.now() - Number(stat.ctimeNs / 1_000_000n) < RACY_MS) return null;
  return [stat.dev, stat.ino, stat.size, stat.mtimeNs, stat.ctimeNs].join(":");
}

/** `[core]` format settings and `[extensions]` of the config file, nothing else. */
async function formatSettings(configFile: string): Promise<string> {
  const identity = fileIdentity(configFile);
  const known = formatSettingsRead.get(configFile);
  if (identity !== null && known?.identity === identity) return known.text;
  const text = await readFormatSettings(configFile);
  if (identity !== null && fileIdentity(configFile) === identity) formatSettingsRead.set(configFile, { identity, text });
  else formatSettingsRead.delete(configFile);
  return text;
}

async function readFormatSettings(configFile: string): Promise<string> {
  const read = await runProcess({
    file: "git",
    args: ["config", "--file", configFile, "--get-regexp", "^(core\\.repositoryformatversion|extensions\\..*)$"],
    cwd: path.dirname(configFile),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_CONFIG_NOSYSTEM: "1", HOME: "/nonexistent" },
    timeoutMs: 10_000,
  });
  const core: string[] = [];
  const extensions: string[] = [];
  for (const line of read.exitCode === 0 ? read.stdout.split("\n") : []) {
    const [key = "", ...value] = line.split(" ");
    const setting = `\t${key.slice(key.indexOf(".") + 1)} = ${value.join(" ")}`;
    if (key === "core.repositoryformatversion") core.push(setting);
    else if (key.startsWith("extensions.")) extensions.push(setting);
  }
  return ["[core]", ...core, "\tbare = false", ...(extensions.length ? ["[extensions]", ...extensions] : []), ""].join("\n");
}
