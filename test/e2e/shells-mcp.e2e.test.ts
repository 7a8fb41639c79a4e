// MCP servers handed to the agent CLIs (docs/delivery.md), with fake CLIs that report what they
// were given, each in the form the real CLI reads it: Claude Code's --mcp-config file (with
// --strict-mcp-config and the servers' tools allowed), Codex's `mcp_servers.*` overrides
// with the secrets in its environment and only their names on its command line, Gemini
// CLI's settings.json. Without servers nothing MCP-related is passed. A variable a server
// names that the runner lacks fails the run before the CLI starts; the runner's own
// secrets never reach a CLI. The fakes run in the sandbox, as the real CLIs do.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { McpServerInput } from "../../server/agents/mcp";
import { ZMcpServers } from "../../server/agents/mcp";
import { ClaudeAgent } from "../../server/agents/shells/claude";
import { CodexAgent } from "../../server/agents/shells/codex";
import { GeminiAgent } from "../../server/agents/shells/gemini";
import type { AgentRequest } from "../../server/agents/types";
import { agentError, RUNNER_SECRETS } from "../helpers/shell-suite";

const KEY_ENV = "CATCAFE_TEST_CLI_KEY";
const GITHUB_VALUE = "gh-value-0a1b2c3d4e5f";
const DOCS_VALUE = "docs-token-9f8e7d6c5b4a";
const RUNNER_ENV = { ...RUNNER_SECRETS, [KEY_ENV]: "fake-key-value", CATCAFE_TEST_GITHUB: GITHUB_VALUE, CATCAFE_TEST_DOCS: DOCS_VALUE };

const SERVERS: McpServerInput[] = [
  {
    name: "github",
    command: "npx",
    args: ["-y", "@example/github-mcp"],
    env: { LOG_LEVEL: "debug" },
    envFrom: { TOKEN: "CATCAFE_TEST_GITHUB" },
  },
  { name: "docs", url: "https://mcp.example.com/mcp", bearerTokenEnv: "CATCAFE_TEST_DOCS" },
];
const servers = () => ZMcpServers.parse(SERVERS);

const saved: Record<string, string | undefined> = {};
let workspace: string;
let bin: string;

beforeAll(() => {
  for (const [name, value] of Object.entries(RUNNER_ENV)) {
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
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-ws-tools-"));
  // The fake is the executable the sandbox runs: where any user could read it.
  bin = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-fake-tools-"));
  fs.chmodSync(bin, 0o755);
});
afterEach(() => {
  fs.rmSync(workspace, { recursive: true, force: true });
  fs.rmSync(bin, { recursive: true, force: true });
});

/** What a fake CLI saw: its arguments, its environment, and the MCP files the real CLI would read. */
interface Seen {
  args: string[];
  env: Record<string, string>;
  mcpConfig: unknown;
  settings: unknown;
}

/** The report, as an answer in each CLI's stream format. */
const ANSWER: Record<"claude" | "codex" | "gemini", string> = {
  claude: `console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: report }));`,
  codex: `console.log(JSON.stringify({ type: "item.completed", item: { id: "1", type: "agent_message", text: report } })); console.log(JSON.stringify({ type: "turn.completed", usage: {} }));`,
  gemini: `console.log(JSON.stringify({ type: "message", role: "assistant", content: report })); console.log(JSON.stringify({ type: "result", status: "success" }));`,
};

function fakeCli(kind: "claude" | "codex" | "gemini"): string {
  const file = path.join(bin, kind);
  const script = `
const fs = require("node:fs");
const args = process.argv.slice(2);
const read = (f) => (f && fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, "utf8")) : null);
const at = args.indexOf("--mcp-config");
const report = JSON.stringify({
  args,
  env: process.env,
  mcpConfig: at >= 0 ? read(args[at + 1]) : null,
  settings: read(process.env.HOME + "/.gemini/settings.json"),
});
${ANSWER[kind]}`;
  fs.writeFileSync(file, `#!/usr/bin/env node\n${script}\n`, { mode: 0o755 });
  return file;
}

function request(mcpServers = servers()): AgentRequest {
  return {
    role: "coder",
    prompt: "hello",
    context: [],
    workspace,
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 30_000,
    ...(mcpServers.length ? { mcpServers } : {}),
  };
}

const config = <K extends "claude" | "codex" | "gemini">(kind: K) => ({
  kind,
  id: `fake-${kind}`,
  command: fakeCli(kind),
  apiKeyEnv: KEY_ENV,
});

async function seen(agent: { invoke(r: AgentRequest): Promise<{ text: string }> }, mcpServers = servers()): Promise<Seen> {
  return JSON.parse((await agent.invoke(request(mcpServers))).text) as Seen;
}

/** Nothing of the runner's own secrets, whatever the CLI was given. */
function expectNoRunnerSecrets(s: Seen): void {
  for (const name of Object.keys(RUNNER_SECRETS)) expect(s.env).not.toHaveProperty(name);
  expect(JSON.stringify(s)).not.toContain(RUNNER_SECRETS.DATABASE_URL);
}

describe("MCP servers handed to the agent CLIs", () => {
  it("claude: a --mcp-config file with the servers (secrets read from the runner), --strict-mcp-config, their tools allowed", async () => {
    const s = await seen(new ClaudeAgent(config("claude")));
    const at = s.args.indexOf("--mcp-config");
    expect(at).toBeGreaterThan(0);
    expect(s.args[at + 2]).toBe("--strict-mcp-config");
    expect(s.args[s.args.indexOf("--allowedTools") + 1]).toBe("mcp__github,mcp__docs");
    expect(s.mcpConfig).toEqual({
      mcpServers: {
        github: { type: "stdio", command: "npx", args: ["-y", "@example/github-mcp"], env: { LOG_LEVEL: "debug", TOKEN: GITHUB_VALUE } },
        docs: { type: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: `Bearer ${DOCS_VALUE}` } },
      },
    });
    // The values live in the run's own file, never on the command line or in the CLI's environment.
    expect(s.args.join(" ")).not.toContain(GITHUB_VALUE);
    expect(Object.values(s.env)).not.toContain(GITHUB_VALUE);
    expect(s.env).not.toHaveProperty("CATCAFE_TEST_GITHUB");
    expectNoRunnerSecrets(s);
  });

  it("claude with full permissions keeps Bash beside the servers' tools", async () => {
    const s = await seen(new ClaudeAgent({ ...config("claude"), permissions: "full" }));
    expect(s.args[s.args.indexOf("--allowedTools") + 1]).toBe("Bash,mcp__github,mcp__docs");
  });

  it("codex: mcp_servers overrides with variable names only; the values in its environment for it to hand on", async () => {
    const s = await seen(new CodexAgent(config("codex")));
    const overrides = s.args.flatMap((a, i) => (s.args[i - 1] === "-c" && a.startsWith("mcp_servers.") ? [a] : []));
    expect(overrides).toEqual([
      'mcp_servers.github.command="npx"',
      'mcp_servers.github.args=["-y","@example/github-mcp"]',
      'mcp_servers.github.env={LOG_LEVEL="debug"}',
      'mcp_servers.github.env_vars=["TOKEN"]',
      'mcp_servers.docs.url="https://mcp.example.com/mcp"',
      'mcp_servers.docs.bearer_token_env_var="CATCAFE_TEST_DOCS"',
    ]);
    expect(s.env.TOKEN).toBe(GITHUB_VALUE);
    expect(s.env.CATCAFE_TEST_DOCS).toBe(DOCS_VALUE);
    expect(s.env).not.toHaveProperty("CATCAFE_TEST_GITHUB");
    expect(s.args.join(" ")).not.toContain(GITHUB_VALUE);
    expect(s.args.join(" ")).not.toContain(DOCS_VALUE);
    // The prompt is still read from stdin, after every override.
    expect(s.args.at(-1)).toBe("-");
    expectNoRunnerSecrets(s);
  });

  it("gemini: mcpServers in the run's own settings.json, trusted (nobody is there to confirm a tool call)", async () => {
    const s = await seen(new GeminiAgent(config("gemini")));
    expect(s.settings).toMatchObject({
      privacy: { usageStatisticsEnabled: false },
      mcpServers: {
        github: { command: "npx", args: ["-y", "@example/github-mcp"], env: { LOG_LEVEL: "debug", TOKEN: GITHUB_VALUE }, trust: true },
        docs: { httpUrl: "https://mcp.example.com/mcp", headers: { Authorization: `Bearer ${DOCS_VALUE}` }, trust: true },
      },
    });
    expect(s.env).not.toHaveProperty("TOKEN");
    expectNoRunnerSecrets(s);
  });

  it("gemini with the user's own HOME cannot be handed servers: the run fails before the CLI starts", async () => {
    const err = await agentError(new GeminiAgent({ ...config("gemini"), isolateHome: false }).invoke(request()));
    expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
    expect(err.message).toContain("isolateHome: true");
  });

  it("without servers nothing MCP-related reaches any CLI", async () => {
    for (const agent of [new ClaudeAgent(config("claude")), new CodexAgent(config("codex")), new GeminiAgent(config("gemini"))]) {
      const s = await seen(agent, []);
      expect(s.args.join(" "), agent.kind).not.toMatch(/mcp/i);
      expect(s.mcpConfig).toBeNull();
      expect(JSON.stringify(s.settings ?? {})).not.toContain("mcpServers");
      expect(s.env).not.toHaveProperty("TOKEN");
      expect(s.env).not.toHaveProperty("CATCAFE_TEST_GITHUB");
      expect(s.env).not.toHaveProperty("CATCAFE_TEST_DOCS");
    }
  });

  it("a variable a server names that the runner lacks fails the run before the CLI starts, naming it", async () => {
    const missing = ZMcpServers.parse([{ name: "github", command: "npx", envFrom: { TOKEN: "CATCAFE_TEST_UNSET_TOKEN" } }]);
    const agent = new ClaudeAgent(config("claude"));
    fs.writeFileSync(agent.executable(), `#!/usr/bin/env node\nrequire("node:fs").writeFileSync("started", "");\n`);
    const err = await agentError(agent.invoke(request(missing)));
    expect(err).toMatchObject({ errorClass: "tool_error", retryable: false });
    expect(err.message).toBe(
      'claude agent fake-claude: environment variable CATCAFE_TEST_UNSET_TOKEN (named by MCP server "github") is not set on this runner',
    );
    expect(fs.existsSync(path.join(workspace, "started"))).toBe(false);
  });
});
