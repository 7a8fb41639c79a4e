// The command agent with real processes: prompt on stdin and in argv, streaming, a scrubbed
// environment, failure classification, deadline and cancel ending the whole process tree.
// These tests watch the agent's processes by their host pids, which the sandbox's own PID
// namespace hides, so they run with the sandbox off; the sandboxed agent (the same cases
// that matter: attacks, a signal, cancel) is proven in sandbox.e2e.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CommandAgent } from "../../server/agents/command";
import { ZAgentConfig, type CommandAgentConfigInput } from "../../server/agents/config";
import { createAgent } from "../../server/agents/index";
import { AgentError, MAX_AGENT_OUTPUT_BYTES, type AgentRequest } from "../../server/agents/types";
import { isAlive, waitUntil } from "../helpers/processes";

const NODE = process.execPath;
const SECRETS = {
  DATABASE_URL: "postgresql://catcafe:hunter2@localhost/catcafe",
  NEXTAUTH_SECRET: "next-auth-secret-value",
  FAKE_API_KEY: "sk-fake-123",
};
const savedEnv: Record<string, string | undefined> = {};

let workspace: string;
const started: number[] = [];

beforeAll(() => {
  savedEnv.CATCAFE_SANDBOX = process.env.CATCAFE_SANDBOX;
  process.env.CATCAFE_SANDBOX = "off";
  for (const [name, value] of Object.entries(SECRETS)) {
    savedEnv[name] = process.env[name];
    process.env[name] = value;
  }
});

afterAll(() => {
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

beforeEach(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-command-"));
});

afterEach(() => {
  // Whatever a failed test left running.
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  fs.rmSync(workspace, { recursive: true, force: true });
});

function agent(argv: string[], extra: Partial<CommandAgentConfigInput> = {}): CommandAgent {
  return new CommandAgent({ kind: "command", id: "cmd", argv, ...extra });
}

/** `node -e <script> ...args` as an argv. */
function nodeScript(script: string, ...args: string[]): string[] {
  return [NODE, "-e", script, ...args];
}

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: "coder",
    prompt: "build it",
    context: [],
    workspace,
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 30_000,
    ...overrides,
  };
}

async function agentError(promise: Promise<unknown>): Promise<AgentError> {
  const err = await promise.then(
    (value) => {
      throw new Error(`expected an AgentError, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  return err as AgentError;
}

/** Gone means no such process, or a zombie waiting for init to reap it (it holds nothing). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return !isAlive(pid);
}

/** Waits for `file` in the workspace to hold JSON, and returns it. */
async function readJsonWhenWritten<T>(file: string): Promise<T> {
  const full = path.join(workspace, file);
  await waitUntil(() => fs.existsSync(full) && fs.readFileSync(full, "utf8").endsWith("}"), 10_000, `${file} is written`);
  return JSON.parse(fs.readFileSync(full, "utf8")) as T;
}

describe("command agent", () => {
  it("is created from config, not simulated", () => {
    const created = createAgent({ kind: "command", id: "my-cli", argv: ["node", "agent.js"] });
    expect(created).toBeInstanceOf(CommandAgent);
    expect(created).toMatchObject({ id: "my-cli", kind: "command", simulated: false });
  });

  it("writes the prompt to stdin and runs in the workspace", async () => {
    const prompt = 'Implement the parser.\nKeep it small — 🐱 says so. $HOME `id` "quoted"';
    const script = `let s = ""; process.stdin.setEncoding("utf8").on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.stringify({ prompt: s, cwd: process.cwd() })));`;
    const response = await agent(nodeScript(script)).invoke(request({ prompt }));
    expect(JSON.parse(response.text)).toEqual({ prompt, cwd: fs.realpathSync(workspace) });
  });

  it("substitutes {prompt} in arguments, without a shell", async () => {
    const prompt = "fix it; rm -rf / $HOME $& `whoami` {prompt}";
    const script = "process.stdout.write(JSON.stringify(process.argv.slice(1)))";
    const response = await agent(nodeScript(script, "--", "--prompt={prompt}", "{prompt}", "literal"), { prompt: "arg" }).invoke(
      request({ prompt }),
    );
    expect(JSON.parse(response.text)).toEqual([`--prompt=${prompt}`, prompt, "literal"]);
  });

  it("streams stdout as it arrives; the text is the whole stdout", async () => {
    const script = `process.stdout.write("one\\n"); setTimeout(() => process.stdout.write("two\\n"), 200); setTimeout(() => process.stdout.write("three\\n"), 400);`;
    const chunks: { text: string; at: number }[] = [];
    const response = await agent(nodeScript(script)).invoke(request({ onChunk: (text) => chunks.push({ text, at: Date.now() }) }));
    const finishedAt = Date.now();
    expect(response.text).toBe("one\ntwo\nthree\n");
    expect(chunks.map((c) => c.text).join("")).toBe(response.text);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(finishedAt - chunks[0]!.at).toBeGreaterThanOrEqual(300);
  });

  describe("environment", () => {
    const printEnv = nodeScript("process.stdout.write(JSON.stringify(process.env))");

    it("gets only the minimal base, literal env and the variables named in passEnv", async () => {
      const response = await agent(printEnv, { passEnv: ["FAKE_API_KEY", "NOT_SET_ANYWHERE"], env: { AGENT_MODE: "ci" } }).invoke(
        request(),
      );
      const env = JSON.parse(response.text) as Record<string, string>;
      expect(Object.keys(env).sort()).toEqual([
        "AGENT_MODE",
        "FAKE_API_KEY",
        "HOME",
        "LANG",
        "NO_COLOR",
        "PATH",
        "TEMP",
        "TERM",
        "TMP",
        "TMPDIR",
      ]);
      expect(env).toMatchObject({
        FAKE_API_KEY: SECRETS.FAKE_API_KEY,
        AGENT_MODE: "ci",
        LANG: "C.UTF-8",
        TERM: "dumb",
        NO_COLOR: "1",
        PATH: process.env.PATH,
      });
      expect(response.text).not.toContain(SECRETS.DATABASE_URL);
      expect(response.text).not.toContain(SECRETS.NEXTAUTH_SECRET);
    });

    it("passes no provider key unless it is named", async () => {
      const response = await agent(printEnv).invoke(request());
      const env = JSON.parse(response.text) as Record<string, string>;
      expect(Object.keys(env).sort()).toEqual(["HOME", "LANG", "NO_COLOR", "PATH", "TEMP", "TERM", "TMP", "TMPDIR"]);
      for (const secret of Object.values(SECRETS)) expect(response.text).not.toContain(secret);
    });

    it("refuses configs that would hand over the runner's secrets", () => {
      for (const extra of [
        { passEnv: ["DATABASE_URL"] },
        { passEnv: ["NEXTAUTH_SECRET"] },
        { env: { DATABASE_URL: "postgres://x" } },
        { passEnv: ["not a name"] },
      ]) {
        const parsed = ZAgentConfig.safeParse({ kind: "command", id: "c", argv: ["x"], ...extra });
        expect(parsed.success, JSON.stringify(extra)).toBe(false);
      }
      expect(ZAgentConfig.safeParse({ kind: "command", id: "c", argv: ["x", "y"], prompt: "arg" }).error?.issues[0]?.message).toMatch(
        /\{prompt\}/,
      );
      expect(ZAgentConfig.safeParse({ kind: "command", id: "c", argv: [] }).success).toBe(false);
    });
  });

  describe("failures", () => {
    it("a non-zero exit is command_failed with the exit code and the end of stderr", async () => {
      const script = `process.stdout.write("partial answer"); for (let i = 1; i <= 500; i++) process.stderr.write("noise line " + i + "\\n"); process.stderr.write("fatal: the real reason\\n", () => process.exit(3));`;
      const err = await agentError(agent(nodeScript(script)).invoke(request()));
      expect(err).toMatchObject({ errorClass: "command_failed", retryable: false, partialOutput: "partial answer" });
      expect(err.message).toMatch(/exited with code 3/);
      expect(err.message).toContain("fatal: the real reason");
      expect(err.message).not.toContain("noise line 1\n");
      expect(err.message.length).toBeLessThan(4_096);
    });

    it("a process killed by a signal is command_failed naming the signal", async () => {
      const err = await agentError(agent(nodeScript(`process.kill(process.pid, "SIGKILL")`)).invoke(request()));
      expect(err).toMatchObject({ errorClass: "command_failed", retryable: false });
      expect(err.message).toMatch(/killed by SIGKILL/);
    });

    it("a missing executable is command_failed: executable not found", async () => {
      const err = await agentError(agent(["catcafe-no-such-executable-xyz", "--version"]).invoke(request()));
      expect(err).toMatchObject({
        errorClass: "command_failed",
        retryable: false,
        message: "executable not found: catcafe-no-such-executable-xyz",
      });
    });

    it("output over the cap is a tool_error; the process is killed and nothing past the cap is kept", async () => {
      const script = `const block = "x".repeat(65536); let n = 0; (function write() { while (n++ < 64) if (!process.stdout.write(block)) return process.stdout.once("drain", write); setInterval(() => {}, 1000); })();`;
      let streamed = 0;
      const err = await agentError(
        agent(nodeScript(`require("node:fs").writeFileSync("pids.json", JSON.stringify({ pid: process.pid })); ${script}`)).invoke(
          request({ onChunk: (t) => (streamed += Buffer.byteLength(t)) }),
        ),
      );
      expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
      expect(err.message).toContain(`output exceeded ${MAX_AGENT_OUTPUT_BYTES} bytes`);
      expect(Buffer.byteLength(err.partialOutput)).toBe(MAX_AGENT_OUTPUT_BYTES);
      expect(streamed).toBe(MAX_AGENT_OUTPUT_BYTES);
      const { pid } = await readJsonWhenWritten<{ pid: number }>("pids.json");
      expect(gone(pid)).toBe(true);
    });
  });

  describe("deadline and cancel", () => {
    const printPidAndHang = `process.stdout.write(String(process.pid) + "\\n"); setInterval(() => {}, 1000);`;

    it("the request deadline kills the process: timeout, retryable", async () => {
      let output = "";
      const begun = Date.now();
      const err = await agentError(
        agent(nodeScript(printPidAndHang)).invoke(request({ deadline: begun + 700, onChunk: (t) => (output += t) })),
      );
      const elapsed = Date.now() - begun;
      expect(err).toMatchObject({ errorClass: "timeout", retryable: true });
      expect(elapsed).toBeGreaterThanOrEqual(650);
      expect(elapsed).toBeLessThan(2_000);
      const pid = Number(output.trim());
      expect(pid).toBeGreaterThan(0);
      expect(err.partialOutput).toBe(output);
      expect(gone(pid)).toBe(true);
    });

    it("the config's timeoutMs applies when it comes before the deadline", async () => {
      const begun = Date.now();
      const err = await agentError(agent(nodeScript(printPidAndHang), { timeoutMs: 400 }).invoke(request({ deadline: begun + 60_000 })));
      expect(err).toMatchObject({ errorClass: "timeout", retryable: true });
      expect(Date.now() - begun).toBeLessThan(1_500);
    });

    it("cancel kills the whole tree, grandchild included, within a second", async () => {
      const script = [
        `const { spawn } = require("node:child_process");`,
        `const grandchild = spawn("sleep", ["30"], { stdio: "inherit" });`,
        `require("node:fs").writeFileSync("pids.json", JSON.stringify({ child: process.pid, grandchild: grandchild.pid }));`,
        `setInterval(() => {}, 1000);`,
      ].join("\n");
      const abort = new AbortController();
      const invocation = agentError(agent(nodeScript(script)).invoke(request({ signal: abort.signal })));
      const pids = await readJsonWhenWritten<{ child: number; grandchild: number }>("pids.json");
      started.push(pids.child, pids.grandchild);
      expect(isAlive(pids.child) && isAlive(pids.grandchild)).toBe(true);

      const abortedAt = Date.now();
      abort.abort();
      const err = await invocation;
      expect(err).toMatchObject({ errorClass: "cancelled", retryable: false });
      expect(Date.now() - abortedAt).toBeLessThan(1_000);
      await waitUntil(() => gone(pids.child) && gone(pids.grandchild), Math.max(0, 1_000 - (Date.now() - abortedAt)), "both pids are gone");
    });

    it("cancel ends a tree that ignores SIGTERM (SIGKILL after the grace period), within a second", async () => {
      const stubborn = `process.on("SIGTERM", () => {}); setInterval(() => {}, 1000);`;
      const script = [
        `const { spawn } = require("node:child_process");`,
        `process.on("SIGTERM", () => {});`,
        `const grandchild = spawn(process.execPath, ["-e", ${JSON.stringify(stubborn)}], { stdio: "ignore" });`,
        `setTimeout(() => require("node:fs").writeFileSync("pids.json", JSON.stringify({ child: process.pid, grandchild: grandchild.pid })), 300);`,
        `setInterval(() => {}, 1000);`,
      ].join("\n");
      const abort = new AbortController();
      const invocation = agentError(agent(nodeScript(script)).invoke(request({ signal: abort.signal })));
      const pids = await readJsonWhenWritten<{ child: number; grandchild: number }>("pids.json");
      started.push(pids.child, pids.grandchild);

      const abortedAt = Date.now();
      abort.abort();
      const err = await invocation;
      expect(err.errorClass).toBe("cancelled");
      await waitUntil(() => gone(pids.child) && gone(pids.grandchild), Math.max(0, 1_000 - (Date.now() - abortedAt)), "both pids are gone");
      expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(400); // it took the SIGKILL
    });

    it("processes left running after a normal exit are ended too", async () => {
      const script = [
        `const { spawn } = require("node:child_process");`,
        `const left = spawn("sleep", ["30"], { stdio: "ignore" });`,
        `require("node:fs").writeFileSync("pids.json", JSON.stringify({ left: left.pid }));`,
        `process.stdout.write("done");`,
        `left.unref();`,
      ].join("\n");
      const response = await agent(nodeScript(script)).invoke(request());
      expect(response.text).toBe("done");
      const { left } = await readJsonWhenWritten<{ left: number }>("pids.json");
      started.push(left);
      await waitUntil(() => gone(left), 1_000, "the leftover sleep is gone");
    });

    it("a descendant that left the process group and holds stdout open does not hang the invocation", async () => {
      const script = [
        `const { spawn } = require("node:child_process");`,
        // setsid: its own session and group, out of our reach; stdio inherited: our stdout pipe.
        `const escaped = spawn("setsid", ["sleep", "30"], { stdio: "inherit" });`,
        `require("node:fs").writeFileSync("pids.json", JSON.stringify({ escaped: escaped.pid }));`,
        `process.stdout.write("done", () => setTimeout(() => process.exit(0), 100));`,
      ].join("\n");
      const begun = Date.now();
      const invocation = agent(nodeScript(script)).invoke(request());
      const { escaped } = await readJsonWhenWritten<{ escaped: number }>("pids.json");
      started.push(escaped);
      const response = await invocation;
      expect(response.text).toBe("done");
      expect(Date.now() - begun).toBeLessThan(3_000);
    });

    it("an already aborted request starts nothing", async () => {
      const abort = new AbortController();
      abort.abort();
      const err = await agentError(
        agent(nodeScript(`require("node:fs").writeFileSync("ran", "")`)).invoke(request({ signal: abort.signal })),
      );
      expect(err.errorClass).toBe("cancelled");
      expect(fs.existsSync(path.join(workspace, "ran"))).toBe(false);
    });
  });
});
