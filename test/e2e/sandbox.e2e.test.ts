// Agents and test commands are untrusted code: run through the allowlist runner or as a
// command agent they are sandboxed (bubblewrap, installed by .ci/run). The attacks a
// malicious repository's test file or a malicious agent would try — a secrets file beside
// the worktree, a file in the server's HOME, /etc/shadow, another process's
// /proc/<pid>/environ, the network, the repository's git config (a credential in a remote
// URL) and its hooks — all fail; the worktree and the run's own HOME are writable, git
// status works, and the uid inside is nobody. A `.git` file redirected to a git directory
// of the agent's making is refused before the runner's git reads its config. With the
// sandbox turned off (or bubblewrap missing) the same code reaches everything: the fallback
// the runner warns about.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandAgent } from "../../server/agents/command";
import { AgentError } from "../../server/agents/types";
import type { Allowlist } from "../../server/commands/allowlist";
import { runCommand, type CommandRun } from "../../server/commands/run";
import { AppError } from "../../server/errors";
import { sandboxStatus } from "../../server/process/sandbox";
import { runGit } from "../../server/workspaces/git";

const ALLOW: Allowlist = [["node", "-e", "*"]];
const CREDENTIAL = "tok-remote-credential-4242";
let root = "";
let repo = "";
let workspace = "";
let secrets = "";
let homeFile = "";
let probeFile = "";
let server: net.Server;
let port = 0;
let connections = 0;

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-sandbox-")));
  fs.chmodSync(root, 0o755); // the agent's script, named on its command line, is shown only where anyone could read it
  repo = path.join(root, "repo");
  fs.mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.email", "t@example.com");
  git(repo, "config", "user.name", "t");
  git(repo, "config", "remote.origin.url", `https://user:${CREDENTIAL}@example.com/project.git`);
  fs.writeFileSync(path.join(repo, "README.md"), "hello\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "init");
  workspace = path.join(root, "workspace");
  git(repo, "worktree", "add", "-q", "--detach", workspace);

  secrets = path.join(root, "data", "secrets.json");
  fs.mkdirSync(path.dirname(secrets), { mode: 0o700 }); // as .data/ is
  fs.writeFileSync(secrets, JSON.stringify({ nextauthSecret: "the-server-secret" }));
  homeFile = path.join(os.homedir(), `.catcafe-sandbox-probe-${process.pid}`);
  fs.writeFileSync(homeFile, "a file of the server's user");
  process.env.CATCAFE_TEST_SECRET_MARK = "environ-secret-value";
  server = net.createServer((s) => {
    connections++;
    s.on("error", () => {});
    s.end("hello");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as net.AddressInfo).port;
  probeFile = path.join(root, "probe.js");
  fs.writeFileSync(probeFile, probe(), { mode: 0o644 });
});
afterAll(async () => {
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(homeFile, { force: true });
  await new Promise((r) => server.close(r));
});

/** What a malicious test file or agent would try; prints what it saw as JSON. */
function probe(): string {
  return `
const fs = require("fs"), net = require("net"), cp = require("child_process");
const tryRead = (p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return "ERR " + e.code; } };
const tryWrite = (p) => { try { fs.writeFileSync(p, "x"); return "written"; } catch (e) { return "ERR " + e.code; } };
const gitDir = cp.execFileSync("git", ["rev-parse", "--git-common-dir"], { encoding: "utf8" }).trim();
const out = {
  uid: process.getuid(),
  secrets: tryRead(${JSON.stringify(secrets)}),
  homeFile: tryRead(${JSON.stringify(homeFile)}),
  shadow: tryRead("/etc/shadow"),
  environ: tryRead("/proc/${process.pid}/environ").includes("environ-secret-value") ? "read" : "not read",
  processes: fs.readdirSync("/proc").filter((x) => /^\\d+$/.test(x)).length,
  gitHead: cp.execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim(),
  gitConfig: tryRead(gitDir + "/config"),
  hook: tryWrite(gitDir + "/hooks/post-commit"),
  worktree: tryWrite("written.txt"),
  home: tryWrite(process.env.HOME + "/home.txt"),
};
const s = net.connect(${port}, "127.0.0.1");
s.on("connect", () => { out.network = "connected"; console.log(JSON.stringify(out)); s.destroy(); });
s.on("error", (e) => { out.network = "ERR " + e.code; console.log(JSON.stringify(out)); });
`;
}

type Seen = Record<string, unknown>;

async function asTestCommand(): Promise<Seen> {
  const outcome = (await runCommand({ argv: ["node", "-e", probe()], cwd: workspace, allowlist: ALLOW, timeoutMs: 20_000 })) as CommandRun;
  expect(outcome.exitCode, outcome.stderrTail).toBe(0);
  return JSON.parse(outcome.stdoutTail) as Seen;
}

async function asAgent(network = false, hosts: string[] = []): Promise<Seen> {
  const agent = new CommandAgent({ kind: "command", id: "malicious", argv: [process.execPath, probeFile], network });
  const response = await agent.invoke({ ...request(), egress: { hosts } });
  expect(response.sandboxed).toBe(true);
  return JSON.parse(response.text) as Seen;
}

function request(signal = new AbortController().signal) {
  return { role: "coder" as const, prompt: "do it", context: [], workspace, invocation: 1, signal, deadline: Date.now() + 20_000 };
}

/** Code that starts a grandchild in a session of its own, appending a tick to `marker` every 50 ms, and hangs. */
function hangsWithTicker(marker: string): string {
  const ticker = `setInterval(() => require("fs").appendFileSync(${JSON.stringify(marker)}, "."), 50)`;
  return `const { spawn } = require("child_process");
spawn(process.execPath, ["-e", ${JSON.stringify(ticker)}], { stdio: "ignore", detached: true }).unref();
setTimeout(() => {}, 60000);`;
}

/** Nothing is still writing `marker`: it does not grow for half a second. */
async function expectStillness(marker: string): Promise<void> {
  await new Promise((r) => setTimeout(r, 300));
  const size = fs.statSync(marker).size;
  await new Promise((r) => setTimeout(r, 500));
  expect(fs.statSync(marker).size).toBe(size);
}

function expectContained(seen: Seen): void {
  expect(seen).toMatchObject({
    uid: 65534,
    secrets: "ERR ENOENT",
    homeFile: "ERR ENOENT",
    environ: "not read",
    worktree: "written",
    home: "written",
  });
  expect(String(seen.shadow)).toMatch(/^(ERR |$)/); // hidden: an empty file in its place
  expect(seen.processes).toBeLessThanOrEqual(3); // its own PID namespace: bwrap's init, node
  expect(seen.gitHead).toBe(git(workspace, "rev-parse", "HEAD").trim());
  expect(String(seen.gitConfig)).not.toContain(CREDENTIAL);
  expect(String(seen.gitConfig)).toContain("repositoryformatversion");
  expect(String(seen.hook)).toMatch(/^ERR (EROFS|EACCES)/);
}

describe("untrusted code in the sandbox", () => {
  it("bubblewrap works on this machine (CI installs it)", () => {
    expect(sandboxStatus()).toEqual({ available: true, reason: null });
  });

  it("a test command cannot read secrets, the server's HOME, other processes, the git config's credential, or call out", async () => {
    const before = connections;
    const seen = await asTestCommand();
    expectContained(seen);
    expect(String(seen.network)).toMatch(/^ERR /);
    expect(connections).toBe(before);
    expect(fs.readFileSync(path.join(workspace, "written.txt"), "utf8")).toBe("x");
  });

  it("a command agent is contained the same way; with network it reaches a host's service only when an admin allows it", async () => {
    const before = connections;
    const offline = await asAgent(false, [`127.0.0.1:${port}`]);
    expectContained(offline);
    expect(String(offline.network)).toMatch(/^ERR /);
    expect(connections).toBe(before);
    // Network on, the service not on the admin's list (settings access.agentHosts): nothing reaches it.
    const notAllowed = await asAgent(true);
    expectContained(notAllowed);
    expect(String(notAllowed.network)).toMatch(/^ERR /);
    expect(connections).toBe(before);
    const allowed = await asAgent(true, [`127.0.0.1:${port}`]);
    expectContained(allowed);
    expect(allowed.network).toBe("connected");
    expect(connections).toBe(before + 1);
  });

  it("a file its command line names is shown only when any user of the host could read it", async () => {
    const privateDir = path.join(root, "private");
    fs.mkdirSync(privateDir, { mode: 0o700 });
    const hidden = path.join(privateDir, "secrets.json");
    fs.writeFileSync(hidden, "private to the server's user", { mode: 0o644 });
    const shown = path.join(root, "shown.txt");
    fs.writeFileSync(shown, "anyone may read this", { mode: 0o644 });
    const read = `const fs = require("fs"); console.log(JSON.stringify(process.argv.slice(1).map((p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return "ERR " + e.code; } })))`;
    const agent = new CommandAgent({ kind: "command", id: "reader", argv: [process.execPath, "-e", read, hidden, shown, secrets] });
    const response = await agent.invoke(request());
    expect(JSON.parse(response.text)).toEqual(["ERR ENOENT", "anyone may read this", "ERR ENOENT"]);
  });

  it("a sandboxed agent killed by a signal is reported as killed, not as an exit code", async () => {
    const agent = new CommandAgent({
      kind: "command",
      id: "killed",
      argv: [process.execPath, "-e", `process.kill(process.pid, "SIGKILL")`],
    });
    const err = await agent.invoke(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).message).toMatch(/killed by SIGKILL/);
  });

  it("cancelling a sandboxed agent ends everything it started", async () => {
    const marker = path.join(workspace, "agent-ticks.txt");
    const code = hangsWithTicker(marker);
    const controller = new AbortController();
    const agent = new CommandAgent({ kind: "command", id: "hangs", argv: [process.execPath, "-e", code] });
    const invoked = agent.invoke(request(controller.signal)).catch((e: unknown) => e);
    while (!fs.existsSync(marker)) await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    expect(await invoked).toMatchObject({ errorClass: "cancelled" });
    await expectStillness(marker);
  });

  it("a timeout ends everything the command started inside the sandbox", async () => {
    const marker = path.join(workspace, "ticks.txt");
    const code = hangsWithTicker(marker);
    const outcome = (await runCommand({ argv: ["node", "-e", code], cwd: workspace, allowlist: ALLOW, timeoutMs: 700 })) as CommandRun;
    expect(outcome.timedOut, outcome.stderrTail).toBe(true);
    expect(outcome.sandboxed).toBe(true);
    expect(fs.existsSync(marker)).toBe(true);
    await expectStillness(marker);
  });

  it("a .git file redirected to a git directory of the agent's making is refused before git reads its config", async () => {
    const tampered = path.join(root, "tampered");
    git(repo, "worktree", "add", "-q", "--detach", tampered);
    const pwned = path.join(root, "pwned");
    // What code in the sandbox can do: its own git directory in the worktree, with a config
    // that runs a command on the next `git status`, and the worktree's .git pointing at it.
    const evil = path.join(tampered, ".evil");
    execFileSync("git", ["init", "-q", "--bare", evil]);
    fs.appendFileSync(path.join(evil, "config"), `[core]\n\tbare = false\n\tfsmonitor = "touch ${pwned}; false"\n`);
    fs.writeFileSync(path.join(tampered, ".git"), `gitdir: ${evil}\n`);
    const err = await runGit(tampered, ["status", "--porcelain"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "PRECONDITION_FAILED" });
    expect((err as Error).message).toMatch(/\.git file was changed/);
    expect(fs.existsSync(pwned)).toBe(false);
    // The untouched worktree still works.
    expect((await runGit(workspace, ["rev-parse", "HEAD"])).stdout.trim()).toBe(git(repo, "rev-parse", "HEAD").trim());
  });

  it("with the sandbox off (the fallback the runner warns about) the same code reaches all of it", async () => {
    process.env.CATCAFE_SANDBOX = "off";
    try {
      expect(sandboxStatus().available).toBe(false);
      const seen = await asTestCommand();
      expect(String(seen.secrets)).toContain("the-server-secret");
      expect(String(seen.gitConfig)).toContain(CREDENTIAL);
      expect(seen.network).toBe("connected");
    } finally {
      delete process.env.CATCAFE_SANDBOX;
    }
  });
});
