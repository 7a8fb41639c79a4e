// A sandbox for untrusted code (every agent process and every allowlisted test command):
// bubblewrap with the toolchain read-only (/usr, /etc without the files only root may read,
// the running Node's prefix), only the directories the caller names writable (the session's
// worktree, the run's own HOME), what else it names read-only (an agent CLI's installation,
// the repository's git directory), a private /tmp, its own user namespace as an unprivileged
// uid (nobody), its own PID namespace (no other process visible, so no /proc/<pid>/environ
// of the web server or the runner) and its own network namespace: no network but its own
// loopback, and for agents that call out, a bridge to the runner's egress proxy. The data directory,
// the server's files and every other home directory are simply not there.
//
// Where bubblewrap is missing (or cannot create namespaces) the process runs as before and
// the runner says so once at start (see `sandboxStatus`); CATCAFE_SANDBOX=off turns it off on
// purpose. docs/security.md describes the fallback: a dedicated unprivileged OS user.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface SandboxSpec {
  /** Directories the code may write (bound read-write at the same path). */
  writable: string[];
  /** Directories it may read (bound read-only at the same path; after `writable`, so they win inside it). */
  readOnly?: string[];
  /** Files shown in place of others, read-only (a sanitized git config over the real one). */
  overlays?: Array<{ source: string; target: string }>;
  /**
   * Network access: false (test commands, agents that call no provider) leaves only the
   * sandbox's own loopback; `egress` (agents that call out) the same, plus the bridge to the
   * runner's egress proxy, which runs first and starts the program (server/agents/egress.ts).
   */
  network: false | { egress: { script: string; config: string } };
}

/** The uid and gid inside the sandbox: nobody, the classic unprivileged user. */
const SANDBOX_ID = "65534";

export interface SandboxStatus {
  available: boolean;
  /** Why not, when not. */
  reason: string | null;
}

let status: SandboxStatus | undefined;

/** Its own user (as nobody), PID, IPC and host-name namespaces. */
const NAMESPACES = ["--unshare-user", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID, "--unshare-pid", "--unshare-ipc", "--unshare-uts"];

/** Whether bubblewrap works here (tried once: a trivial sandboxed `true`). */
export function sandboxStatus(env: NodeJS.ProcessEnv = process.env): SandboxStatus {
  if (env.CATCAFE_SANDBOX === "off") return { available: false, reason: "turned off (CATCAFE_SANDBOX=off)" };
  if (status) return status;
  const probe = spawnSync("bwrap", [...NAMESPACES, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"], {
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
  const prefix = nodePrefix();
  if (!SYSTEM_DIRS.some((d) => prefix === d || prefix.startsWith(`${d}/`))) args.push("--ro-bind", prefix, prefix);
  for (const hidden of privateEntries("/etc"))
    args.push(...(hidden.dir ? ["--tmpfs", hidden.path] : ["--ro-bind", "/dev/null", hidden.path]));
  return args;
}

function nodePrefix(): string {
  return path.dirname(path.dirname(fs.realpathSync(process.execPath)));
}

let etcPrivate: Array<{ path: string; dir: boolean }> | undefined;

/**
 * What under `root` another user of this host could not read (/etc/shadow, /etc/ssl/private):
 * hidden inside, since a server started as root maps the sandbox's uid to root for files.
 * Looked up once per process.
 */
function privateEntries(root: string): Array<{ path: string; dir: boolean }> {
  if (etcPrivate) return etcPrivate;
  const found: Array<{ path: string; dir: boolean }> = [];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isSymbolicLink() || !(entry.isFile() || entry.isDirectory())) continue;
      const full = path.join(dir, entry.name);
      let mode: number;
      try {
        mode = fs.statSync(full).mode;
      } catch {
        continue;
      }
      const othersRead = entry.isDirectory() ? (mode & 0o005) === 0o005 : (mode & 0o004) !== 0;
      if (!othersRead) found.push({ path: full, dir: entry.isDirectory() });
      else if (entry.isDirectory() && depth < 4) walk(full, depth + 1);
    }
  };
  walk(root, 0);
  etcPrivate = found;
  return found;
}

/**
 * Where agent runs make their private directories (HOME and scratch): CATCAFE_AGENT_HOMES,
 * or ~/.cache/catcafe/agent-homes. Not under the temporary directory: Codex refuses to place
 * its sandbox helper under a temporary directory, and then every command it runs fails.
 */
export function agentHomesPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CATCAFE_AGENT_HOMES || path.join(os.homedir(), ".cache", "catcafe", "agent-homes");
}

/**
 * The program itself, when it lives outside the toolchain (an agent CLI in node_modules):
 * the whole node_modules it is in (its platform binary is a sibling package), else the file.
 */
function programMounts(program: string, visible: readonly string[]): string[] {
  const real = fs.realpathSync(program);
  if (visible.some((dir) => real === dir || real.startsWith(`${dir}/`))) return [];
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = real.indexOf(marker);
  const source = at >= 0 ? real.slice(0, at + marker.length - 1) : real;
  const args = ["--ro-bind", source, source];
  // Called through a link (node_modules/.bin/claude): the link's own path must resolve inside too.
  const linkDir = path.dirname(path.resolve(program));
  if (program !== real && !`${linkDir}/`.startsWith(`${source}/`)) args.push("--ro-bind", linkDir, linkDir);
  return args;
}

/**
 * How a sandboxed process ended, as it would have been seen without the sandbox: bubblewrap
 * exits with 128+N when its child was killed by signal N (so a program that itself exits
 * with 130 reads as SIGINT: the shells' own convention, accepted).
 */
export function unwrapExit<T extends { exitCode: number | null; signal: NodeJS.Signals | null }>(end: T, sandboxed: boolean): T {
  if (!sandboxed || end.signal || end.exitCode === null || end.exitCode <= 128) return end;
  const name = Object.entries(os.constants.signals).find(([, n]) => n === end.exitCode! - 128)?.[0];
  return name ? { ...end, exitCode: null, signal: name as NodeJS.Signals } : end;
}

/**
 * CATCAFE_SANDBOX_READ: directories (separated by ":") the admin lets every sandboxed process
 * read, e.g. where the team's own agent scripts live. Ones that do not exist are skipped.
 */
function adminReadOnly(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.CATCAFE_SANDBOX_READ ?? "").split(":").filter((d) => path.isAbsolute(d) && fs.existsSync(d));
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
  const real = (dirs: readonly string[] | undefined) => [...new Set((dirs ?? []).map((d) => fs.realpathSync(d)))];
  return {
    file: "bwrap",
    args: [
      "--die-with-parent",
      ...NAMESPACES,
      "--unshare-net",
      ...systemMounts(),
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--tmpfs",
      "/tmp",
      ...real(spec.writable).flatMap((d) => ["--bind", d, d]),
      ...real([...(spec.readOnly ?? []), ...adminReadOnly()]).flatMap((d) => ["--ro-bind", d, d]),
      ...(spec.overlays ?? []).flatMap((o) => ["--ro-bind", o.source, o.target]),
      ...programMounts(program, [...SYSTEM_DIRS, nodePrefix(), ...real(spec.writable), ...real(spec.readOnly)]),
      "--chdir",
      fs.realpathSync(cwd),
      "--",
      ...(spec.network ? [process.execPath, spec.network.egress.script, spec.network.egress.config, "--"] : []),
      program,
      ...args,
    ],
    sandboxed: true,
  };
}
