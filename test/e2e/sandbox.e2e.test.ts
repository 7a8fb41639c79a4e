// Test commands are repository code: run through the allowlist runner they are sandboxed
// (bubblewrap, installed by .ci/run): a secrets file beside the worktree, another process's
// /proc/<pid>/environ, the network and the rest of the filesystem are out of reach; the
// worktree and the command's own HOME are writable; a timeout ends everything inside.
// With the sandbox turned off (or bubblewrap missing) the same command reaches them: the
// fallback the runner warns about.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Allowlist } from "../../server/commands/allowlist";
import { runCommand, type CommandRun } from "../../server/commands/run";
import { sandboxStatus } from "../../server/process/sandbox";

const ALLOW: Allowlist = [["node", "-e", "*"]];
let root = "";
let workspace = "";
let secrets = "";
let server: net.Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-sandbox-")));
  workspace = path.join(root, "workspace");
  fs.mkdirSync(workspace);
  secrets = path.join(root, "data", "secrets.json");
  fs.mkdirSync(path.dirname(secrets));
  fs.writeFileSync(secrets, JSON.stringify({ nextauthSecret: "the-server-secret" }));
  process.env.CATCAFE_TEST_SECRET_MARK = "environ-secret-value";
  server = net.createServer((s) => {
    connections++;
    s.on("error", () => {});
    s.end("hello");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  fs.rmSync(root, { recursive: true, force: true });
  await new Promise((r) => server.close(r));
});

/** What a test file would try: read the secrets, read this process's environ, call out, write. */
const probe = () => `
const fs = require("fs"), net = require("net");
const tryRead = (p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return "ERR " + e.code; } };
const out = {
  secrets: tryRead(${JSON.stringify(secrets)}),
  environ: tryRead("/proc/${process.pid}/environ").includes("environ-secret-value") ? "read" : "not read",
  processes: fs.readdirSync("/proc").filter((x) => /^\\d+$/.test(x)).length,
  rootHome: fs.existsSync("/root") && fs.readdirSync("/root").length > 0,
};
fs.writeFileSync("written.txt", "ok");
fs.writeFileSync(process.env.HOME + "/home.txt", "ok");
const s = net.connect(${port}, "127.0.0.1");
s.on("connect", () => { out.network = "connected"; console.log(JSON.stringify(out)); s.destroy(); });
s.on("error", (e) => { out.network = "ERR " + e.code; console.log(JSON.stringify(out)); });
`;

async function run(): Promise<Record<string, unknown>> {
  const outcome = (await runCommand({ argv: ["node", "-e", probe()], cwd: workspace, allowlist: ALLOW, timeoutMs: 20_000 })) as CommandRun;
  expect(outcome.exitCode, outcome.stderrTail).toBe(0);
  return JSON.parse(outcome.stdoutTail) as Record<string, unknown>;
}

describe("test commands in the sandbox", () => {
  it("bubblewrap works on this machine (CI installs it)", () => {
    expect(sandboxStatus()).toEqual({ available: true, reason: null });
  });

  it("cannot read the data directory, other processes' environment, or call out; can write its worktree and HOME", async () => {
    const before = connections;
    const seen = await run();
    expect(seen).toMatchObject({ secrets: "ERR ENOENT", environ: "not read", rootHome: false });
    expect(seen.processes).toBeLessThanOrEqual(3); // its own PID namespace: bwrap's init, node
    expect(String(seen.network)).toMatch(/^ERR /);
    expect(connections).toBe(before);
    expect(fs.readFileSync(path.join(workspace, "written.txt"), "utf8")).toBe("ok");
  });

  it("a timeout ends everything the command started inside the sandbox", async () => {
    const marker = path.join(workspace, "ticks.txt");
    const ticker = `setInterval(() => require("fs").appendFileSync(${JSON.stringify(marker)}, "."), 50)`;
    const code = `const { spawn } = require("child_process");
spawn(process.execPath, ["-e", ${JSON.stringify(ticker)}], { stdio: "ignore", detached: true }).unref();
setTimeout(() => {}, 60000);`;
    const outcome = (await runCommand({ argv: ["node", "-e", code], cwd: workspace, allowlist: ALLOW, timeoutMs: 700 })) as CommandRun;
    expect(outcome.timedOut, outcome.stderrTail).toBe(true);
    expect(fs.existsSync(marker)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const size = fs.statSync(marker).size;
    await new Promise((r) => setTimeout(r, 500));
    expect(fs.statSync(marker).size).toBe(size); // nothing is still writing
  });

  it("with the sandbox off (the fallback the runner warns about) the same command reaches all of it", async () => {
    process.env.CATCAFE_SANDBOX = "off";
    try {
      expect(sandboxStatus().available).toBe(false);
      const seen = await run();
      expect(String(seen.secrets)).toContain("the-server-secret");
      expect(seen.network).toBe("connected");
    } finally {
      delete process.env.CATCAFE_SANDBOX;
    }
  });
});
