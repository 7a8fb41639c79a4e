// Every agent process (a command agent, an agent CLI) runs in the sandbox of
// server/process/sandbox.ts: the session's worktree and the run's own directory writable,
// the repository's git directory read-only (with a config of its format settings only), the
// files its command line names read-only when any user of the host could read them, and the
// network only when the agent calls its provider.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { repositoryView } from "../process/git-dir";
import { agentHomesPath, inSandbox, sandboxStatus } from "../process/sandbox";
import { startEgress, type EgressRules } from "./egress";

/** The run's temporary directory (TMPDIR): inside its run directory, gone with it. */
export function runTmpDir(runDir: string): string {
  return path.join(runDir, "tmp");
}

/**
 * A private directory for one agent run under the agent homes directory (private to this
 * user), with its temporary directory made; `fn` runs with it, and it is removed afterwards
 * whatever happens, whatever the process left in it (Gemini CLI's error reports with the
 * conversation, for one).
 */
export async function withRunDir<T>(prefix: string, fn: (runDir: string) => Promise<T>): Promise<T> {
  await fsp.mkdir(agentHomesPath(), { recursive: true, mode: 0o700 });
  const runDir = await fsp.mkdtemp(path.join(agentHomesPath(), `${prefix}-`));
  try {
    await fsp.mkdir(runTmpDir(runDir));
    return await fn(runDir);
  } finally {
    await fsp.rm(runDir, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 }).catch(() => {});
  }
}

export interface AgentSandboxInput {
  file: string;
  args: readonly string[];
  workspace: string;
  env: Record<string, string>;
  /** The run's own directory (HOME, scratch): writable, removed after the run. */
  runDir: string;
  /** More writable places (an agent CLI's own login, when it does not run with a HOME of its own). */
  writable?: string[];
  /** Where it may connect (server/agents/egress.ts); absent: nowhere but its own loopback. */
  egress?: EgressRules;
}

export interface SandboxedAgent {
  file: string;
  args: string[];
  /** The environment with the proxy variables added when the agent has egress. */
  env: Record<string, string>;
  sandboxed: boolean;
  /** Connections the egress proxy refused so far (`host:port`, each once, the first 20). */
  refused: readonly string[];
  /** Stops the egress proxy: call when the process has ended. */
  close(): Promise<void>;
}

/**
 * `input` ready to spawn in the sandbox: with egress, the run's proxy started and the agent
 * pointed at it. Without bubblewrap nothing is contained, the network included (the runner
 * and the dashboard say so: docs/security.md).
 */
export async function sandboxAgent(input: AgentSandboxInput): Promise<SandboxedAgent> {
  const view = await repositoryView(input.workspace, input.runDir);
  const named = namedFiles(input.args).map((file) => ({ source: file, target: file }));
  const spec = {
    writable: [input.workspace, input.runDir, ...(input.writable ?? [])],
    ...(view.readOnly ? { readOnly: view.readOnly } : {}),
    overlays: [...(view.overlays ?? []), ...named],
  };
  if (!input.egress || !sandboxStatus().available) {
    const boxed = inSandbox(input.file, input.args, input.workspace, input.env, { ...spec, network: false });
    return { ...boxed, env: input.env, refused: [], close: async () => {} };
  }
  const egress = await startEgress(input.runDir, input.egress);
  const env = { ...input.env, ...egress.env };
  const boxed = inSandbox(input.file, input.args, input.workspace, env, { ...spec, network: { egress: egress.bridge } });
  if (!boxed.sandboxed) await egress.close();
  return { ...boxed, env, refused: egress.refused, close: egress.close };
}

/**
 * Absolute paths among `args` that are files every user of the host may read (a script to
 * run): readable by others, in directories others may enter, so nothing private to the
 * server's user (the data directory is 0700) is ever shown because a configuration named it.
 */
function namedFiles(args: readonly string[]): string[] {
  return args.filter((arg) => {
    if (!path.isAbsolute(arg)) return false;
    try {
      const real = fs.realpathSync(arg);
      const stat = fs.statSync(real);
      if (!stat.isFile() || (stat.mode & 0o004) === 0) return false;
      for (let dir = path.dirname(real); ; dir = path.dirname(dir)) {
        if ((fs.statSync(dir).mode & 0o001) === 0) return false;
        if (dir === path.dirname(dir)) return true;
      }
    } catch {
      return false;
    }
  });
}
