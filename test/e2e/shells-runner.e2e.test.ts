// The CLI runner shared by the three adapters, with small fake CLIs standing in for the
// real ones (the real ones cannot be made to crash, print garbage or fork off a session on
// demand): garbage output, crashes, a missing binary, a missing key, an onChunk that
// throws, and helpers that left the process group, ended on cancel and after a normal exit.
// The fake CLIs report their processes by host pid, which the sandbox's own PID namespace
// hides, so these run with the sandbox off; the real CLIs run sandboxed in shells-*.e2e.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agentHomesDir } from "../../server/agents/shells/cli-agent";
import { ClaudeAgent, type ClaudeAgentConfigInput } from "../../server/agents/shells/claude";
import type { AgentRequest } from "../../server/agents/types";
import { isAlive, waitUntil } from "../helpers/processes";
import { agentError, RUNNER_SECRETS } from "../helpers/shell-suite";

const KEY_ENV = "CATCAFE_TEST_FAKE_KEY";
const saved: Record<string, string | undefined> = {};
let workspace: string;
let bin: string;

beforeAll(() => {
  for (const [name, value] of Object.entries({ ...RUNNER_SECRETS, [KEY_ENV]: "fake-key-value", CATCAFE_SANDBOX: "off" })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});
beforeEach(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-ws-fake-"));
  bin = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-fake-cli-"));
});
afterEach(() => {
  fs.rmSync(workspace, { recursive: true, force: true });
  fs.rmSync(bin, { recursive: true, force: true });
});

/** A fake `claude`: a Node script, run the way the adapter runs the real one. */
function fakeCli(script: string): string {
  const file = path.join(bin, "claude");
  fs.writeFileSync(file, `#!/usr/bin/env node\n${script}\n`, { mode: 0o755 });
  return file;
}

function agent(command: string, extra: Partial<ClaudeAgentConfigInput> = {}): ClaudeAgent {
  return new ClaudeAgent({ kind: "claude", id: "fake", command, apiKeyEnv: KEY_ENV, ...extra });
}

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: "coder",
    prompt: "hello",
    context: [],
    workspace,
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 30_000,
    ...overrides,
  };
}

const RESULT = (text: string) =>
  JSON.stringify({ type: "result", subtype: "success", is_error: false, result: text, usage: { input_tokens: 1, output_tokens: 1 } });

/** A script line starting a grandchild in a session of its own (like Codex's sandbox), writing its pid to pids.txt. */
const ESCAPED_GRANDCHILD = `const { spawn } = require("node:child_process"); const g = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" }); g.unref(); require("node:fs").appendFileSync("pids.txt", process.pid + " " + g.pid + "\\n");`;

function pidsWritten(): number[] {
  const file = path.join(workspace, "pids.txt");
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split(/\s+/).map(Number) : [];
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return !isAlive(pid);
}

describe("CLI runner with fake CLIs", () => {
  it("reads stdin as the prompt, runs in the workspace, and answers from the result event", async () => {
    const cli = fakeCli(
      `let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { console.log(${JSON.stringify(JSON.stringify({ type: "system", subtype: "init" }))}); console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: JSON.stringify({ prompt: s, cwd: process.cwd(), args: process.argv.slice(2) }) })); });`,
    );
    const response = await agent(cli).invoke(request({ prompt: "Build it. $HOME `id`" }));
    const seen = JSON.parse(response.text) as { prompt: string; cwd: string; args: string[] };
    expect(seen).toMatchObject({ prompt: "Build it. $HOME `id`", cwd: fs.realpathSync(workspace) });
    expect(seen.args.slice(0, 3)).toEqual(["--print", "--output-format", "stream-json"]);
  });

  it("output that is not the JSON event stream is a tool_error", async () => {
    const err = await agentError(agent(fakeCli(`console.log("Welcome! Log in at https://example.invalid");`)).invoke(request()));
    expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
    expect(err.message).toContain("Welcome! Log in");
  });

  it("a crash without a result is command_failed with the end of stderr", async () => {
    const err = await agentError(
      agent(
        fakeCli(`for (let i = 0; i < 300; i++) console.error("noise " + i); console.error("fatal: config broken"); process.exitCode = 7;`),
      ).invoke(request()),
    );
    expect(err).toMatchObject({ errorClass: "command_failed", retryable: false });
    expect(err.message).toMatch(/exited with code 7 without a result/);
    expect(err.message).toContain("fatal: config broken");
    expect(err.message).not.toContain("noise 1\n");
  });

  it("a missing executable is command_failed: executable not found", async () => {
    const err = await agentError(agent(path.join(bin, "no-such-claude")).invoke(request()));
    expect(err).toMatchObject({ errorClass: "command_failed", message: `executable not found: ${path.join(bin, "no-such-claude")}` });
  });

  it("without the provider key (and an isolated HOME) it fails as provider_auth_error before starting anything", async () => {
    const cli = fakeCli(`require("node:fs").writeFileSync("started", "")`);
    const err = await agentError(agent(cli, { apiKeyEnv: "CATCAFE_TEST_UNSET_API_KEY" }).invoke(request()));
    expect(err).toMatchObject({ errorClass: "provider_auth_error", retryable: false });
    expect(err.message).toContain("CATCAFE_TEST_UNSET_API_KEY");
    expect(fs.existsSync(path.join(workspace, "started"))).toBe(false);
  });

  it("an onChunk that throws ends the run and its error comes back as it is", async () => {
    const delta = JSON.stringify({
      type: "stream_event",
      event: { type: "content_block_delta", delta: { type: "text_delta", text: "hi" } },
      parent_tool_use_id: null,
    });
    const cli = fakeCli(`${ESCAPED_GRANDCHILD} console.log(${JSON.stringify(delta)}); setInterval(() => {}, 1000);`);
    const boom = new Error("live view broke");
    await expect(
      agent(cli).invoke(
        request({
          onChunk: () => {
            throw boom;
          },
        }),
      ),
    ).rejects.toBe(boom);
    const pids = pidsWritten();
    expect(pids).toHaveLength(2);
    await waitUntil(() => pids.every(gone), 1_500, "the fake CLI and its escaped grandchild have ended");
  });

  it("cancel ends the CLI and a helper that left its process group (setsid), within a second", async () => {
    const cli = fakeCli(
      `${ESCAPED_GRANDCHILD} console.log(${JSON.stringify(JSON.stringify({ type: "system", subtype: "init" }))}); setInterval(() => {}, 1000);`,
    );
    const controller = new AbortController();
    const running = agent(cli).invoke(request({ signal: controller.signal }));
    running.catch(() => {});
    await waitUntil(() => pidsWritten().length === 2, 10_000, "the fake CLI started its grandchild");
    const pids = pidsWritten();
    const abortedAt = Date.now();
    controller.abort();
    expect(await agentError(running)).toMatchObject({ errorClass: "cancelled" });
    await waitUntil(() => pids.every(gone), 1_000, "every process has ended");
    expect(Date.now() - abortedAt).toBeLessThanOrEqual(1_000);
  });

  it("a helper left running after the CLI exited on its own is ended too", async () => {
    const cli = fakeCli(`${ESCAPED_GRANDCHILD} console.log(${JSON.stringify(RESULT("done"))});`);
    const response = await agent(cli).invoke(request());
    expect(response.text).toBe("done");
    const [, grandchild] = pidsWritten();
    expect(grandchild).toBeGreaterThan(0);
    await waitUntil(() => gone(grandchild!), 1_500, "the escaped grandchild has ended");
  });

  it("a timeout while the CLI retries a provider error says what it was retrying", async () => {
    const retry = JSON.stringify({
      type: "system",
      subtype: "api_retry",
      attempt: 3,
      max_retries: 10,
      error_status: 529,
      error: "overloaded",
    });
    const cli = fakeCli(`console.log(${JSON.stringify(retry)}); setInterval(() => {}, 1000);`);
    const err = await agentError(agent(cli, { timeoutMs: 1_500 }).invoke(request()));
    expect(err).toMatchObject({ errorClass: "timeout", retryable: true });
    expect(err.message).toContain("still retrying after a provider error: overloaded (HTTP 529), attempt 3 of 10");
  });

  it("the CLI's environment holds the key and nothing of the runner's secrets", async () => {
    const cli = fakeCli(
      `console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: JSON.stringify(process.env) }));`,
    );
    const env = JSON.parse((await agent(cli).invoke(request())).text) as Record<string, string>;
    expect(env.ANTHROPIC_API_KEY).toBe("fake-key-value");
    expect(env).not.toHaveProperty(KEY_ENV);
    for (const name of Object.keys(RUNNER_SECRETS)) expect(env).not.toHaveProperty(name);
    expect(Object.values(env).join("\n")).not.toContain(RUNNER_SECRETS.DATABASE_URL);
  });

  it("the run's own HOME is gone afterwards", async () => {
    const cli = fakeCli(
      `require("node:fs").writeFileSync(process.env.HOME + "/.claude.json", "{}"); console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: process.env.HOME }));`,
    );
    const home = (await agent(cli).invoke(request())).text;
    expect(path.dirname(home)).toBe(await agentHomesDir());
    expect(fs.existsSync(home)).toBe(false);
  });
});
