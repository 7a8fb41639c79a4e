// Detection of the known agent CLIs (req M2): where each one is (node_modules/.bin, then
// PATH: the file the adapter would run), which version (`--version`), whether that version
// is in the supported range, and whether its `--help` still offers every flag the adapter
// passes: running headless with a JSON event stream, editing files without asking, and
// working in a given directory. Then a harmless edit is actually made the way the CLI makes
// one, in a scratch directory and inside Cat Cafe's sandbox: through the CLI's own sandbox
// where it has one (Codex: `codex sandbox`), else as the sandbox itself allows. A failure
// there is the one that would otherwise show only as every tool call of a build failing.
// The result is plain JSON, to be stored or shown as it is.
import fs from "node:fs/promises";
import path from "node:path";
import semver from "semver";
import { CLI_DEFAULT_KEY_ENV } from "../access";
import { agentHomesDir, type ShellName } from "./cli-agent";
import { locateExecutable, type EnvSource } from "./locate";
import { minimalEnv } from "../../process/env";
import { runProcess } from "../../process/run";
import { inSandbox } from "../../process/sandbox";

export const SHELL_NAMES = ["claude", "codex", "gemini"] as const satisfies readonly ShellName[];

/**
 * Versions the adapters are known to work with: the event formats they parse and the flags
 * they pass. Tested with claude 2.1.330, codex 0.169.0, gemini 0.61.0 (package.json pins them).
 */
export const SUPPORTED_VERSION_RANGES: Readonly<Record<ShellName, string>> = {
  claude: ">=2.0.0 <3.0.0",
  codex: ">=0.160.0 <1.0.0",
  gemini: ">=0.50.0 <1.0.0",
};

export interface ShellCapabilities {
  /** Runs a prompt without a terminal and reports as a JSON event stream. */
  nonInteractive: boolean;
  /** Edits files in its working directory without asking. */
  editFiles: boolean;
  /** Works in (and confines itself to) the directory it is given. */
  workingDirectory: boolean;
}

export interface DetectedShell {
  shell: ShellName;
  /** The executable, or null when none was found. */
  path: string | null;
  version: string | null;
  requiredRange: string;
  /** Found, in range, and every capability present: the adapter can run it. */
  supported: boolean;
  capabilities: ShellCapabilities;
  /** Why it is not supported, or what is odd about it; empty when all is well. */
  problems: string[];
  /**
   * The variable the CLI reads its key from by default, and whether it is set here. Runs have a
   * HOME of their own (isolateHome), so a CLI's own sign-in does not carry over: without the
   * variable (or the configured apiKeyEnv) it cannot authenticate. Never the value.
   */
  keyEnv: { name: string; set: boolean };
}

export interface DetectOptions {
  /** Which CLIs to look for (default all three). */
  shells?: readonly ShellName[];
  /** A configured command (path or name) per CLI, instead of its own name. */
  commands?: Partial<Record<ShellName, string>>;
  /** Required version ranges (npm syntax) instead of SUPPORTED_VERSION_RANGES. */
  ranges?: Partial<Record<ShellName, string>>;
  /** PATH and the like are read from here (default process.env). */
  env?: EnvSource;
  cwd?: string;
  /** Per command (`--version`, `--help`). */
  timeoutMs?: number;
}

/** Which flags in `--help` show each capability, and which other flags the adapter passes. */
const PROBES: Readonly<
  Record<ShellName, { helpArgs: string[]; capabilities: Record<keyof ShellCapabilities, string[]>; adapterFlags: string[] }>
> = {
  claude: {
    helpArgs: ["--help"],
    capabilities: {
      nonInteractive: ["--print", "--output-format", "stream-json", "--verbose"],
      editFiles: ["--permission-mode", "acceptEdits"],
      workingDirectory: ["--add-dir"],
    },
    adapterFlags: [
      "--include-partial-messages",
      "--no-session-persistence",
      "--allowedTools",
      "--mcp-config",
      "--strict-mcp-config",
      "--model",
    ],
  },
  codex: {
    helpArgs: ["exec", "--help"],
    capabilities: {
      nonInteractive: ["--json", "--skip-git-repo-check"],
      editFiles: ["--sandbox", "workspace-write"],
      workingDirectory: ["--cd"],
    },
    adapterFlags: ["--ephemeral", "--dangerously-bypass-approvals-and-sandbox", "--config", "--model"],
  },
  gemini: {
    helpArgs: ["--help"],
    capabilities: {
      nonInteractive: ["--prompt", "--output-format", "stream-json"],
      editFiles: ["--approval-mode", "auto_edit"],
      workingDirectory: ["--include-directories"],
    },
    adapterFlags: ["--skip-trust", "yolo", "--model"],
  },
};

const DEFAULT_TIMEOUT_MS = 30_000;
const VERSION = /\bv?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/;

/** The first semantic version in a `--version` output. */
export function parseVersion(output: string): string | null {
  return VERSION.exec(output)?.[1] ?? null;
}

/** Null when `version` satisfies `range`, else why not. */
export function versionProblem(version: string, range: string): string | null {
  if (semver.validRange(range) === null) return `the required range "${range}" is not a valid version range`;
  return semver.satisfies(version, range) ? null : `version ${version} is outside the supported range ${range}`;
}

/** Whether a help text offers `flag` as a whole word (so --cd is not found inside --cdx). */
function offers(help: string, flag: string): boolean {
  const escaped = flag.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[\\s,\\[("'|=])${escaped}(?=$|[\\s,\\])"'|=<.:])`, "m").test(help);
}

/** Capabilities and missing flags from a `--help` text. */
export function capabilitiesFromHelp(shell: ShellName, help: string): { capabilities: ShellCapabilities; missing: string[] } {
  const probe = PROBES[shell];
  const missing: string[] = [];
  const has = (flags: string[]) => {
    const absent = flags.filter((f) => !offers(help, f));
    missing.push(...absent);
    return absent.length === 0;
  };
  const capabilities: ShellCapabilities = {
    nonInteractive: has(probe.capabilities.nonInteractive),
    editFiles: has(probe.capabilities.editFiles),
    workingDirectory: has(probe.capabilities.workingDirectory),
  };
  has(probe.adapterFlags);
  return { capabilities, missing };
}

const NONE: ShellCapabilities = { nonInteractive: false, editFiles: false, workingDirectory: false };

async function run(
  file: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  timeoutMs: number,
): Promise<{ ok: boolean; output: string; why: string }> {
  const result = await runProcess({ file, args, env, cwd, timeoutMs });
  const output = result.stdout || result.stderr;
  const why = result.timedOut
    ? `timed out after ${timeoutMs} ms`
    : result.notStarted
      ? result.notStarted.code
      : result.exitCode !== 0
        ? result.exitCode === null
          ? `was killed by ${result.signal ?? "a signal"}`
          : `exited with code ${result.exitCode}`
        : "";
  return { ok: why === "", output, why };
}

export async function detectShell(shell: ShellName, options: DetectOptions = {}): Promise<DetectedShell> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const requiredRange = options.ranges?.[shell] ?? SUPPORTED_VERSION_RANGES[shell];
  const command = options.commands?.[shell] ?? shell;
  const file = locateExecutable(command, env, cwd);
  const keyName = CLI_DEFAULT_KEY_ENV[shell];
  const base = { shell, requiredRange, capabilities: NONE, keyEnv: { name: keyName, set: Boolean(env[keyName]) } };
  if (!file) {
    const where = command.includes("/") ? `${command} is not an executable file` : `"${command}" is not in node_modules/.bin or on PATH`;
    return { ...base, path: null, version: null, supported: false, problems: [`not found: ${where}`] };
  }

  // The probes run like the adapter runs the CLI: a minimal environment and a HOME of their own.
  const home = await fs.mkdtemp(path.join(await agentHomesDir(), `detect-${shell}-`));
  try {
    const probeEnv = minimalEnv({ home, source: env });
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const [versionRun, helpRun] = await Promise.all([
      run(file, ["--version"], probeEnv, home, timeoutMs),
      run(file, PROBES[shell].helpArgs, probeEnv, home, timeoutMs),
    ]);
    const problems: string[] = [];

    const version = parseVersion(versionRun.output);
    if (!versionRun.ok) problems.push(`${file} --version ${versionRun.why}`);
    else if (!version) problems.push(`${file} --version printed no version: ${JSON.stringify(versionRun.output.trim().slice(0, 200))}`);
    const rangeProblem = version ? versionProblem(version, requiredRange) : null;
    if (rangeProblem) problems.push(rangeProblem);

    let capabilities = NONE;
    if (!helpRun.ok) problems.push(`${file} ${PROBES[shell].helpArgs.join(" ")} ${helpRun.why}`);
    else {
      const found = capabilitiesFromHelp(shell, helpRun.output);
      capabilities = found.capabilities;
      if (found.missing.length)
        problems.push(`its ${PROBES[shell].helpArgs.join(" ")} does not offer ${found.missing.join(", ")}, which the adapter needs`);
    }
    if (capabilities.editFiles) {
      const edit = await editProbe(shell, file, probeEnv, home, timeoutMs);
      if (edit) {
        problems.push(edit);
        capabilities = { ...capabilities, editFiles: false };
      }
    }
    const supported = version !== null && rangeProblem === null && problems.length === 0 && Object.values(capabilities).every(Boolean);
    return { ...base, path: file, version, supported, capabilities, problems };
  } finally {
    await fs.rm(home, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 }).catch(() => {});
  }
}

/** The file the edit probe writes, and what it holds. */
const EDIT_PROBE = { file: "catcafe-edit-probe.txt", text: "probe" };

/**
 * Makes one harmless edit in a scratch directory under `home` as a run of `shell` would: in
 * Cat Cafe's sandbox, through the CLI's own sandbox where it has one. Why it failed, or null.
 */
async function editProbe(
  shell: ShellName,
  file: string,
  env: Record<string, string>,
  home: string,
  timeoutMs: number,
): Promise<string | null> {
  const workspace = path.join(home, "workspace");
  await fs.mkdir(workspace);
  const write = ["/bin/sh", "-c", `printf ${EDIT_PROBE.text} > ${EDIT_PROBE.file}`];
  // Codex runs every command of the coder in its own sandbox (bubblewrap and seccomp on Linux).
  const [program, ...args] = shell === "codex" ? [file, "sandbox", "-P", ":workspace", "--cd", workspace, "--", ...write] : write;
  const boxed = inSandbox(program as string, args, workspace, env, { writable: [workspace, home], network: false });
  const result = await run(boxed.file, boxed.args, env, workspace, timeoutMs);
  const written = await fs.readFile(path.join(workspace, EDIT_PROBE.file), "utf8").catch(() => null);
  if (result.ok && written === EDIT_PROBE.text) return null;
  const how = shell === "codex" ? "through its own sandbox (codex sandbox)" : "in the sandbox";
  const detail = result.output.trim().split("\n").slice(-3).join(" ").slice(0, 300);
  return `a harmless edit ${how} failed (${result.why || "the file was not written"})${detail ? `: ${detail}` : ""}`;
}

/** Every known CLI, found or not, in SHELL_NAMES order. */
export async function detectShells(options: DetectOptions = {}): Promise<DetectedShell[]> {
  return Promise.all((options.shells ?? SHELL_NAMES).map((shell) => detectShell(shell, options)));
}
