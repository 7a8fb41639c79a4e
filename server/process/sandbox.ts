// A sandbox for untrusted code (the allowlisted test commands a repository's tests run):
// bubblewrap with the toolchain read-only (/usr, /etc, the running Node's prefix), only the
// directories the caller names writable (the session's worktree, the command's own HOME), a
// private /tmp, its own PID namespace (no other process visible, so no /proc/<pid>/environ
// of the web server or the runner) and, unless asked for, no network. The data directory,
// the server's files and every other home directory are simply not there.
//
// Where bubblewrap is missing (or cannot create namespaces) the command runs as before and
// the runner says so once at start (see `sandboxStatus`); CATCAFE_SANDBOX=off turns it off on
// purpose. docs/operations.md describes the fallback: a dedicated unprivileged OS user.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export interface SandboxSpec {
  /** Directories the code may write (bound read-write at the same path). */
  writable: string[];
  /** Network access (off for test commands). */
  network: boolean;
}

export interface SandboxStatus {
  available: boolean;
  /** Why not, when not. */
  reason: string | null;
}

let status: SandboxStatus | undefined;

/** Whether bubblewrap works here (tried once: a trivial sandboxed `true`). */
export function sandboxStatus(env: NodeJS.ProcessEnv = process.env): SandboxStatus {
  if (env.CATCAFE_SANDBOX === "off") return { available: false, reason: "turned off (CATCAFE_SANDBOX=off)" };
  if (status) return status;
  const probe = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--dev", "/dev", "true"], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 5_000,
    encoding: "utf8",
  });
  status =
    probe.error !== undefined
      ? { available: false, reason: "bubblewrap (bwrap) is not installed: apt-get install bubblewrap" }
      : probe.status === 0
        ? { available: true, reason: null }
        : {
            available: false,
            reason: `bubblewrap cannot create its namespaces here: ${(probe.stderr ?? "").trim() || `exit ${probe.status}`}`,
          };
  return status;
}

/** The top-level directories a command needs to run (read-only); symlinks (merged /usr) kept as links. */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

function systemMounts(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push("--symlink", fs.readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  // The running Node, wherever it is installed (nvm, /usr/local): commands like `node --test` need it.
  const nodePrefix = path.dirname(path.dirname(fs.realpathSync(process.execPath)));
  if (!SYSTEM_DIRS.some((d) => nodePrefix === d || nodePrefix.startsWith(`${d}/`))) args.push("--ro-bind", nodePrefix, nodePrefix);
  return args;
}

/** Finds `program` on `PATH` (as the sandboxed exec will), so a missing one stays a clear "not found". */
function resolveProgram(program: string, env: Record<string, string>): string | null {
  if (program.includes("/")) return fs.existsSync(program) ? program : null;
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * `file args` wrapped in bubblewrap per `spec`, or unchanged when no sandbox is available
 * or the program does not exist (spawning it then fails as "not found", as without one).
 */
export function inSandbox(
  file: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
  spec: SandboxSpec,
): { file: string; args: string[]; sandboxed: boolean } {
  const program = resolveProgram(file, env);
  if (!sandboxStatus().available || program === null) return { file, args: [...args], sandboxed: false };
  const writable = [...new Set(spec.writable.map((d) => fs.realpathSync(d)))];
  return {
    file: "bwrap",
    args: [
      "--die-with-parent",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      ...(spec.network ? [] : ["--unshare-net"]),
      ...systemMounts(),
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--tmpfs",
      "/tmp",
      ...writable.flatMap((d) => ["--bind", d, d]),
      "--chdir",
      fs.realpathSync(cwd),
      "--unsetenv",
      "PWD",
      "--",
      program,
      ...args,
    ],
    sandboxed: true,
  };
}
