// sandbox_overhead_ms: what the agent/command sandbox (bubblewrap, server/process/sandbox.ts)
// adds to one command. `true` is run through runCommand, the path the runner's commands
// step takes for every allowlisted test command (allowlist check, the run's private HOME,
// the repository view of a linked git worktree, inSandbox, spawnProcess, clean-up), in a
// linked worktree like a session's; agents take the same inSandbox + spawnProcess path.
// With the sandbox on, then off (CATCAFE_SANDBOX=off, which the sandbox reads at each
// call), alternating sample by sample so a load change on the machine hits both alike. A sample
// is the whole runCommand call, as the runner waits for it; the overhead is the difference
// of the medians. The bare spawn (spawnProcess of `true` with and without the bwrap
// wrapper, no runCommand around it) is measured the same way and kept in the notes: it
// isolates bubblewrap's own cost (namespaces, mounts) from the work runCommand does
// either way. Where bubblewrap is missing or cannot make its namespaces the figure says
// so (`unavailable`) instead of reporting two unsandboxed runs as a difference of zero.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { runCommand } from "../../server/commands/run";
import { inSandbox, sandboxStatus } from "../../server/process/sandbox";
import { spawnProcess } from "../../server/process/spawn";
import type { Measurement } from "../lib/context";
import { percentiles, round, type LatencySummary } from "../lib/percentiles";
import { alternating } from "../lib/timing";

const PAIRS = 100;
const WARM_UP = 3;
const COMMAND = ["true"];

type Mode = "sandboxed" | "plain";

/** Runs `fn` with the sandbox on or off, as the server would with CATCAFE_SANDBOX set or not. */
async function withSandbox<T>(mode: Mode, fn: () => Promise<T>): Promise<T> {
  const before = process.env.CATCAFE_SANDBOX;
  if (mode === "plain") process.env.CATCAFE_SANDBOX = "off";
  else delete process.env.CATCAFE_SANDBOX;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.CATCAFE_SANDBOX;
    else process.env.CATCAFE_SANDBOX = before;
  }
}

/** A repository with a linked worktree, as a session's workspace is; removed by the caller. */
function makeWorkspace(): { root: string; worktree: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-sandbox-"));
  const repo = path.join(root, "repo");
  const worktree = path.join(root, "worktree");
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@cats.test", ...args], { cwd, stdio: "ignore" });
  fs.mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(repo, "README.md"), "bench\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "start");
  git(repo, "worktree", "add", "-q", "-b", "session", worktree);
  return { root, worktree };
}

/** One runCommand of `true`: its wall time; throws when it did not run as `mode` says. */
async function commandOnce(workspace: string, mode: Mode): Promise<number> {
  const t = performance.now();
  const outcome = await runCommand({ argv: COMMAND, cwd: workspace, allowlist: [COMMAND] });
  const ms = performance.now() - t;
  if (outcome.status !== "ran" || outcome.exitCode !== 0) throw new Error(`\`true\` did not run cleanly: ${JSON.stringify(outcome)}`);
  if (outcome.sandboxed !== (mode === "sandboxed")) throw new Error(`\`true\` ran with sandboxed=${outcome.sandboxed}, expected ${mode}`);
  return ms;
}

/** spawnProcess of `true`, wrapped by inSandbox or not: bubblewrap's own cost, nothing else. */
async function spawnOnce(workspace: string, home: string, mode: Mode): Promise<number> {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
  const boxed =
    mode === "sandboxed"
      ? inSandbox("true", [], workspace, env, { writable: [workspace, home], network: false })
      : { file: "true", args: [], sandboxed: false };
  const t = performance.now();
  const end = await spawnProcess({ file: boxed.file, args: boxed.args, cwd: workspace, env }).done;
  const ms = performance.now() - t;
  if (end.kind !== "exited" || end.exitCode !== 0)
    throw new Error(`spawned \`${boxed.file}\` did not exit cleanly: ${JSON.stringify(end)}`);
  return ms;
}

/** `PAIRS` pairs of `op`, sandboxed and plain alternating (bench/lib/timing.ts), each under its mode's setting. */
function alternate(op: (mode: Mode) => Promise<number>): Promise<Record<Mode, number[]>> {
  return alternating(["sandboxed", "plain"] as const, PAIRS, WARM_UP, (mode) => withSandbox(mode, () => op(mode)));
}

const brief = (s: LatencySummary) => ({ p50: s.p50, p95: s.p95, max: s.max, n: s.n });

export const sandboxOverhead: Measurement = {
  name: "sandbox_overhead",
  keys: ["sandbox_overhead_ms"],
  async run(ctx) {
    const status = sandboxStatus({ ...process.env, CATCAFE_SANDBOX: undefined });
    if (!status.available) {
      const reason = status.reason ?? "unavailable";
      ctx.log(`sandbox_overhead: NO SANDBOX HERE: ${reason}; nothing to compare`);
      ctx.note("sandbox_overhead", { available: false, reason });
      return { sandbox_overhead_ms: { unavailable: reason } };
    }
    const { root, worktree } = makeWorkspace();
    const home = path.join(root, "home");
    fs.mkdirSync(home);
    try {
      const command = await alternate((mode) => commandOnce(worktree, mode));
      const spawn = await alternate((mode) => spawnOnce(worktree, home, mode));
      const on = percentiles(command.sandboxed);
      const off = percentiles(command.plain);
      const spawnOn = percentiles(spawn.sandboxed);
      const spawnOff = percentiles(spawn.plain);
      ctx.note("sandbox_overhead", {
        available: true,
        command: COMMAND,
        measured:
          "runCommand(['true']) in a linked git worktree, whole call (allowlist check, private HOME, repository view, inSandbox, spawn, clean-up); sandbox on vs CATCAFE_SANDBOX=off, alternating sample by sample",
        pairs: PAIRS,
        run_command: { sandboxed: on, plain: off, overhead_p50: round(on.p50 - off.p50), overhead_p95: round(on.p95 - off.p95) },
        bare_spawn: {
          measured: "spawnProcess of `true`, wrapped in bwrap by inSandbox or not: bubblewrap's own cost",
          sandboxed: spawnOn,
          plain: spawnOff,
          overhead_p50: round(spawnOn.p50 - spawnOff.p50),
        },
      });
      return {
        sandbox_overhead_ms: {
          overhead_p50: round(on.p50 - off.p50),
          overhead_p95: round(on.p95 - off.p95),
          sandboxed: brief(on),
          plain: brief(off),
          bare_spawn_overhead_p50: round(spawnOn.p50 - spawnOff.p50),
        },
      };
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
