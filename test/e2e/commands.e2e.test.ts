// The allowlist runner with real processes: node --test passing and failing, timeouts and
// aborts that kill the whole process tree, a scrubbed environment, a bounded output tail,
// a missing executable, and refusals that never start anything.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Allowlist } from "../../server/commands/allowlist";
import { classifyCommandOutcome } from "../../server/commands/classify";
import { runCommand, type CommandOutcome, type CommandRun } from "../../server/commands/run";
import { isAppError } from "../../server/errors";

// These tests pin the spawning mechanics (process-group kill by pid, signals, the scrubbed
// environment) of a command run as a plain child; inside the sandbox pids are those of its
// own PID namespace. Sandboxed commands have their own tests (sandbox.e2e.test.ts).
process.env.CATCAFE_SANDBOX = "off";

const NODE_ALLOWLIST: Allowlist = [
  ["node", "--test", "**"],
  ["node", "-e", "*"],
];

let workspace: string;

beforeAll(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-commands-"));
});

afterAll(() => {
  fs.rmSync(workspace, { recursive: true, force: true });
});

function ran(outcome: CommandOutcome): CommandRun {
  if (outcome.status !== "ran") throw new Error(`expected the command to run, it was refused: ${outcome.reason}`);
  return outcome;
}

/** Gone: no such process, or a zombie (it holds nothing and only waits to be reaped). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

async function waitUntilGone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter((pid) => !isGone(pid));
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(50);
    alive = alive.filter((pid) => !isGone(pid));
  }
  return alive;
}

/** Node code that starts a `sleep 60` grandchild, records both pids in `file`, then waits. */
function parentOfSleeper(file: string, extra = ""): string {
  return [
    "const child = require('child_process').spawn('sleep', ['60'], { stdio: 'ignore' });",
    // Written aside and renamed, so that a reader waiting for the file never sees it half written.
    `require('fs').writeFileSync(${JSON.stringify(`${file}.tmp`)}, JSON.stringify([process.pid, child.pid]));`,
    `require('fs').renameSync(${JSON.stringify(`${file}.tmp`)}, ${JSON.stringify(file)});`,
    extra,
    "setTimeout(() => {}, 60000);",
  ].join("\n");
}

function readPids(file: string): number[] {
  return JSON.parse(fs.readFileSync(path.join(workspace, file), "utf8")) as number[];
}

const leftovers: number[] = [];
afterEach(() => {
  // Whatever a failed assertion left running must not outlive the test.
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

describe("runCommand with real processes", () => {
  it("runs a passing node --test suite in the workspace: exit 0, classified as success", async () => {
    fs.writeFileSync(
      path.join(workspace, "sum.test.mjs"),
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('adds two numbers', () => assert.equal(1 + 1, 2));\n",
    );
    const outcome = ran(await runCommand({ argv: ["node", "--test", "sum.test.mjs"], cwd: workspace, allowlist: NODE_ALLOWLIST }));
    expect(outcome).toMatchObject({
      exitCode: 0,
      signal: null,
      timedOut: false,
      cancelled: false,
      spawnError: null,
      truncated: false,
      rule: ["node", "--test", "**"],
    });
    expect(outcome.stdoutTail).toMatch(/ok 1 - adds two numbers/);
    expect(classifyCommandOutcome(outcome)).toBeNull();
  });

  it("runs a failing node --test suite: exit 1 with the failing test's name in the output", async () => {
    fs.writeFileSync(
      path.join(workspace, "total.test.mjs"),
      "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('rejects negative totals', () => assert.equal(-1, 1));\n",
    );
    const outcome = ran(await runCommand({ argv: ["node", "--test", "total.test.mjs"], cwd: workspace, allowlist: NODE_ALLOWLIST }));
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stdoutTail).toMatch(/not ok 1 - rejects negative totals/);
    expect(classifyCommandOutcome(outcome)).toEqual({ errorClass: "command_failed", reason: "exited with code 1" });
  });

  it("runs in the workspace with stdin closed", async () => {
    const code = "let n = 0; process.stdin.on('data', (c) => (n += c.length)).on('end', () => console.log(process.cwd(), n));";
    const outcome = ran(await runCommand({ argv: ["node", "-e", code], cwd: workspace, allowlist: NODE_ALLOWLIST, timeoutMs: 5_000 }));
    expect(outcome).toMatchObject({ exitCode: 0, timedOut: false });
    expect(outcome.stdoutTail.trim()).toBe(`${fs.realpathSync(workspace)} 0`);
  });

  it("kills the whole process tree on timeout", async () => {
    const outcome = ran(
      await runCommand({
        argv: ["node", "-e", parentOfSleeper("timeout.pids")],
        cwd: workspace,
        allowlist: NODE_ALLOWLIST,
        timeoutMs: 500,
      }),
    );
    const pids = readPids("timeout.pids");
    leftovers.push(...pids);
    expect(outcome).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: "SIGTERM" });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(500);
    expect(outcome.durationMs).toBeLessThan(5_000);
    expect(classifyCommandOutcome(outcome)).toEqual({ errorClass: "timeout", reason: "timed out after 500 ms" });
    expect(pids).toHaveLength(2);
    expect(await waitUntilGone(pids, 1_000)).toEqual([]);
  });

  it("escalates to SIGKILL when the command ignores SIGTERM", async () => {
    const code = parentOfSleeper("stubborn.pids", "process.on('SIGTERM', () => {});");
    const outcome = ran(
      await runCommand({ argv: ["node", "-e", code], cwd: workspace, allowlist: NODE_ALLOWLIST, timeoutMs: 500, killGraceMs: 300 }),
    );
    const pids = readPids("stubborn.pids");
    leftovers.push(...pids);
    expect(outcome).toMatchObject({ timedOut: true, signal: "SIGKILL" });
    expect(outcome.durationMs).toBeLessThan(5_000);
    expect(await waitUntilGone(pids, 1_000)).toEqual([]);
  });

  // The sleeper would run for a minute, twice this test's timeout: the outcome comes back only
  // because the abort ended the tree (no clock is read; the machine may be loaded).
  it("kills the whole process tree on an abort, without waiting for it to end", async () => {
    const controller = new AbortController();
    const pending = runCommand({
      argv: ["node", "-e", parentOfSleeper("abort.pids")],
      cwd: workspace,
      allowlist: NODE_ALLOWLIST,
      signal: controller.signal,
    });
    const pidFile = path.join(workspace, "abort.pids");
    for (let i = 0; i < 100 && !fs.existsSync(pidFile); i++) await sleep(50);
    const pids = readPids("abort.pids");
    leftovers.push(...pids);
    controller.abort();
    const outcome = ran(await pending);
    expect(outcome).toMatchObject({ cancelled: true, timedOut: false, exitCode: null });
    expect(classifyCommandOutcome(outcome)?.errorClass).toBe("cancelled");
    expect(await waitUntilGone(pids, 1_000)).toEqual([]);
  }, 30_000);

  it("does not start a command whose signal is already aborted", async () => {
    const outcome = ran(
      await runCommand({
        argv: ["node", "-e", "require('fs').writeFileSync('pre-aborted.txt', 'x')"],
        cwd: workspace,
        allowlist: NODE_ALLOWLIST,
        signal: AbortSignal.abort(),
      }),
    );
    expect(outcome).toMatchObject({
      cancelled: true,
      timedOut: false,
      exitCode: null,
      signal: null,
      spawnError: null,
      durationMs: 0,
      sandboxed: false,
      stdoutTail: "",
      stdoutBytes: 0,
    });
    expect(fs.existsSync(path.join(workspace, "pre-aborted.txt"))).toBe(false);
  });

  it("kills background processes the command leaves behind when it exits", async () => {
    const code = [
      "const child = require('child_process').spawn('sleep', ['60'], { stdio: 'ignore' });",
      "child.unref();",
      "require('fs').writeFileSync('orphan.pids', JSON.stringify([child.pid]));",
    ].join("\n");
    const outcome = ran(await runCommand({ argv: ["node", "-e", code], cwd: workspace, allowlist: NODE_ALLOWLIST, timeoutMs: 5_000 }));
    const pids = readPids("orphan.pids");
    leftovers.push(...pids);
    expect(outcome).toMatchObject({ exitCode: 0, timedOut: false });
    expect(await waitUntilGone(pids, 1_000)).toEqual([]);
  });

  it("does not wait forever for a process that left the group and holds the output pipes", async () => {
    const code = [
      "const child = require('child_process').spawn('sleep', ['30'], { stdio: 'inherit', detached: true });",
      "child.unref();",
      "require('fs').writeFileSync('escaped.pids', JSON.stringify([child.pid]));",
      "console.log('parent done');",
    ].join("\n");
    const startedAt = Date.now();
    const outcome = ran(await runCommand({ argv: ["node", "-e", code], cwd: workspace, allowlist: NODE_ALLOWLIST, timeoutMs: 10_000 }));
    leftovers.push(...readPids("escaped.pids"));
    expect(outcome).toMatchObject({ exitCode: 0, timedOut: false, stdoutTail: "parent done\n" });
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });

  describe("environment", () => {
    const saved = {
      DATABASE_URL: process.env.DATABASE_URL,
      FOO_API_KEY: process.env.FOO_API_KEY,
      NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET,
    };
    afterEach(() => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    it("never passes the server's secrets, only the scrubbed base and the extra variables", async () => {
      process.env.DATABASE_URL = "postgresql://catcafe:leaked-password@localhost/catcafe";
      process.env.FOO_API_KEY = "sk-fake-0123456789";
      process.env.NEXTAUTH_SECRET = "nextauth-fake-secret";
      const outcome = ran(
        await runCommand({
          argv: ["node", "-e", "console.log(JSON.stringify(process.env))"],
          cwd: workspace,
          allowlist: NODE_ALLOWLIST,
          env: { NODE_ENV: "test" },
        }),
      );
      expect(outcome.exitCode).toBe(0);
      const env = JSON.parse(outcome.stdoutTail) as Record<string, string>;
      expect(env).not.toHaveProperty("DATABASE_URL");
      expect(env).not.toHaveProperty("FOO_API_KEY");
      expect(env).not.toHaveProperty("NEXTAUTH_SECRET");
      expect(outcome.stdoutTail).not.toMatch(/leaked-password|sk-fake|nextauth-fake/);
      expect(Object.keys(env).sort()).toEqual([
        "CI",
        "HOME",
        "LANG",
        "LC_ALL",
        "NODE_ENV",
        "NO_COLOR",
        "PATH",
        "TEMP",
        "TERM",
        "TMP",
        "TMPDIR",
      ]);
      expect(env).toMatchObject({ CI: "1", NO_COLOR: "1", TERM: "dumb", LANG: "C.UTF-8", NODE_ENV: "test" });
      expect(env.HOME).not.toBe(os.homedir());
      // The temporary HOME and the run's own temporary directory are removed after the run.
      expect(fs.existsSync(env.HOME ?? "")).toBe(false);
      expect(env.TMPDIR).not.toBe(os.tmpdir());
      expect(fs.existsSync(env.TMPDIR ?? "")).toBe(false);
    });

    it("refuses to pass a secret even when asked to", async () => {
      const attempt = runCommand({
        argv: ["node", "-e", "1"],
        cwd: workspace,
        allowlist: NODE_ALLOWLIST,
        env: { DATABASE_URL: "postgres://x" },
      });
      await expect(attempt).rejects.toSatisfy(
        (err) => isAppError(err, "INVALID_INPUT") && /DATABASE_URL looks like a secret/.test(err.message),
      );
    });
  });

  it("keeps only a bounded tail of a 5 MB output and reports the byte counts", async () => {
    const lines = 440_000; // 12 bytes each: "line 000000\n", about 5 MB in all
    const code = `for (let i = 0; i < ${lines}; i++) process.stdout.write('line ' + String(i).padStart(6, '0') + '\\n'); console.error('done');`;
    const outcome = ran(await runCommand({ argv: ["node", "-e", code], cwd: workspace, allowlist: NODE_ALLOWLIST }));
    expect(outcome.exitCode).toBe(0);
    expect(outcome).toMatchObject({ truncated: true, stdoutBytes: lines * 12, stderrBytes: 5, stderrTail: "done\n" });
    expect(Buffer.byteLength(outcome.stdoutTail)).toBe(64 * 1024);
    expect(outcome.stdoutTail.endsWith(`line ${String(lines - 1).padStart(6, "0")}\n`)).toBe(true);
    expect(outcome.stdoutTail).not.toMatch(/line 000000/);
  });

  it("honours a smaller output cap", async () => {
    const outcome = ran(
      await runCommand({
        argv: ["node", "-e", "process.stdout.write('a'.repeat(5000) + 'TAIL')"],
        cwd: workspace,
        allowlist: NODE_ALLOWLIST,
        maxOutputBytes: 1024,
      }),
    );
    expect(outcome).toMatchObject({ truncated: true, stdoutBytes: 5004 });
    expect(outcome.stdoutTail).toBe(`${"a".repeat(1020)}TAIL`);
  });

  it("classifies a missing executable as command_failed: executable not found", async () => {
    const outcome = ran(
      await runCommand({ argv: ["catcafe-no-such-binary", "version"], cwd: workspace, allowlist: [["catcafe-no-such-binary", "**"]] }),
    );
    expect(outcome).toMatchObject({ exitCode: null, spawnError: { code: "ENOENT" } });
    expect(classifyCommandOutcome(outcome)).toEqual({
      errorClass: "command_failed",
      reason: "executable not found: `catcafe-no-such-binary`",
    });
  });

  it.each<[string, string[], Allowlist, RegExp]>([
    [
      "off the allowlist",
      ["node", "-e", "require('fs').writeFileSync('refused-1.txt', 'x')"],
      [["npm", "test"]],
      /is not on the project's allowlist/,
    ],
    ["a server, though allowlisted", ["node", "server.js"], [["node", "**"]], /runs a server script/],
    ["a path escape", ["node", "--test", "../refused-3.test.mjs"], NODE_ALLOWLIST, /uses `\.\.` to leave the workspace/],
  ])("refuses a command %s and starts nothing", async (_name, argv, allowlist, reason) => {
    fs.writeFileSync(path.join(workspace, "server.js"), "require('fs').writeFileSync('refused-2.txt', 'x');\n");
    const outcome = await runCommand({ argv, cwd: workspace, allowlist });
    expect(outcome).toMatchObject({ status: "refused", reason: expect.stringMatching(reason) });
    expect(classifyCommandOutcome(outcome)?.errorClass).toBe("command_refused");
    expect(fs.readdirSync(workspace).filter((name) => name.startsWith("refused-"))).toEqual([]);
  });

  it("names each bad option, and the options themselves when they are not an object", async () => {
    const bad = await runCommand({
      argv: ["node", "-e", "1"],
      cwd: workspace,
      allowlist: NODE_ALLOWLIST,
      timeoutMs: -5,
      maxOutputBytes: 1.5,
    }).catch((err: unknown) => err);
    expect(isAppError(bad, "INVALID_INPUT")).toBe(true);
    const { message, details } = bad as { message: string; details: { issues: unknown[] } };
    expect(message).toMatch(/^invalid command options: timeoutMs: .+; maxOutputBytes: .+$/);
    expect(details.issues).toHaveLength(2);
    await expect(runCommand(null as never)).rejects.toThrow(/^invalid command options: options: /);
  });

  it("runs an absolute path inside the workspace (the check knows the workspace), and says why a file cannot be run", async () => {
    fs.writeFileSync(path.join(workspace, "inside.test.mjs"), "import test from 'node:test';\ntest('inside', () => {});\n");
    const inside = ran(
      await runCommand({ argv: ["node", "--test", path.join(workspace, "inside.test.mjs")], cwd: workspace, allowlist: NODE_ALLOWLIST }),
    );
    expect(inside.exitCode).toBe(0);
    fs.writeFileSync(path.join(workspace, "not-executable.sh"), "#!/bin/sh\necho hi\n", { mode: 0o644 });
    const denied = ran(await runCommand({ argv: ["./not-executable.sh"], cwd: workspace, allowlist: [["./not-executable.sh"]] }));
    expect(denied.spawnError).toEqual({ code: "EACCES", message: "permission denied running `./not-executable.sh`" });
  });

  it("reports any other reason a program cannot start as the system gave it, naming the program (a path through a regular file: ENOTDIR)", async () => {
    fs.writeFileSync(path.join(workspace, "plain.txt"), "not a directory\n");
    const outcome = ran(await runCommand({ argv: ["./plain.txt/run"], cwd: workspace, allowlist: [["./plain.txt/run"]] }));
    expect(outcome).toMatchObject({ exitCode: null, signal: null });
    expect(outcome.spawnError).toEqual({ code: "ENOTDIR", message: "could not start `./plain.txt/run`: spawn ENOTDIR" });
  });

  it("names a bad option nested in another by its dotted path", async () => {
    const attempt = runCommand({ argv: ["node", "-e", "1"], cwd: workspace, allowlist: NODE_ALLOWLIST, env: { LANG: "C" } });
    await expect(attempt).rejects.toThrow(/^invalid command options: env\.LANG: LANG is set by the runner and cannot be overridden$/);
  });

  it("gives the command a HOME it asked for even where its parent does not exist yet, and leaves no run directory behind", async () => {
    const homes = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-homes-"));
    const before = process.env.CATCAFE_AGENT_HOMES;
    process.env.CATCAFE_AGENT_HOMES = homes;
    try {
      const home = path.join(workspace, "homes", "nested", "home");
      const outcome = ran(
        await runCommand({
          argv: ["node", "-e", "require('fs').writeFileSync(require('path').join(process.env.HOME, 'was-here'), 'x')"],
          cwd: workspace,
          allowlist: NODE_ALLOWLIST,
          home,
        }),
      );
      expect(outcome.exitCode).toBe(0);
      expect(fs.readFileSync(path.join(home, "was-here"), "utf8")).toBe("x");
      // The run's own directory (its temporary files, the default HOME) is gone.
      ran(
        await runCommand({
          argv: ["node", "-e", "require('fs').writeFileSync(process.env.HOME + '/f', 'x')"],
          cwd: workspace,
          allowlist: NODE_ALLOWLIST,
        }),
      );
      expect(fs.readdirSync(homes)).toEqual([]);
    } finally {
      if (before === undefined) delete process.env.CATCAFE_AGENT_HOMES;
      else process.env.CATCAFE_AGENT_HOMES = before;
      fs.rmSync(homes, { recursive: true, force: true });
    }
  });

  it("fails fast on a workspace that is not a directory", async () => {
    const missing = path.join(workspace, "does-not-exist");
    const failed = await runCommand({ argv: ["node", "-e", "1"], cwd: missing, allowlist: NODE_ALLOWLIST }).catch((err: unknown) => err);
    expect(isAppError(failed, "PRECONDITION_FAILED")).toBe(true);
    expect(failed).toMatchObject({ message: `workspace ${missing} does not exist or is not a directory`, details: { cwd: missing } });
    await expect(runCommand({ argv: ["node", "-e", "1"], cwd: "relative/dir", allowlist: NODE_ALLOWLIST })).rejects.toSatisfy((err) =>
      isAppError(err, "INVALID_INPUT"),
    );
  });
});
