// The claude / codex / gemini agent configs and what the adapters build from them: the
// argv of a non-interactive run, the whole environment of the CLI, Gemini's settings
// file, and the one prompt on stdin. Nothing is run here.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ZAgentConfig } from "../../server/agents/config";
import { createAgent } from "../../server/agents/index";
import { ClaudeAgent } from "../../server/agents/shells/claude";
import type { ShellRunContext } from "../../server/agents/shells/cli-agent";
import { CodexAgent } from "../../server/agents/shells/codex";
import { GeminiAgent } from "../../server/agents/shells/gemini";
import { cliPrompt } from "../../server/agents/shells/prompt";

const CTX: ShellRunContext = {
  workspace: "/work/ws",
  runDir: "/tmp/catcafe-run-1",
  apiKey: "key-123",
  baseUrl: "http://127.0.0.1:9999",
  mcpServers: [],
};
const RUN_ID = "run-1";
const SOURCE = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/runner",
  DATABASE_URL: "postgresql://secret",
  NEXTAUTH_SECRET: "shh",
  ANTHROPIC_API_KEY: "runner-anthropic-key",
  OPENAI_API_KEY: "runner-openai-key",
  SOME_TOKEN: "t",
  EXTRA_VAR: "extra",
};

describe("configuration", () => {
  it("defaults: edit permissions, an isolated HOME, no extra arguments, one retry of its own, the brains' rate limit", () => {
    for (const kind of ["claude", "codex", "gemini"] as const) {
      expect(ZAgentConfig.parse({ kind, id: "cat" })).toEqual({
        kind,
        id: "cat",
        extraArgs: [],
        permissions: "edit",
        isolateHome: true,
        providerRetries: 1,
        rateLimit: { minIntervalMs: 2_000 },
      });
    }
  });

  it("creates the adapter for each kind; none is simulated", () => {
    expect(createAgent({ kind: "claude", id: "a" })).toBeInstanceOf(ClaudeAgent);
    expect(createAgent({ kind: "codex", id: "b" })).toBeInstanceOf(CodexAgent);
    expect(createAgent({ kind: "gemini", id: "c" })).toMatchObject({ kind: "gemini", id: "c", simulated: false });
  });

  it("refuses configs that would hand over the runner's secrets, or are ambiguous", () => {
    const refused = [
      { passEnv: ["DATABASE_URL"] },
      { apiKeyEnv: "NEXTAUTH_SECRET" },
      { env: { DATABASE_URL: "postgres://x" } },
      { baseUrlEnv: "DATABASE_URL" },
      { baseUrl: "http://user:pass@proxy.local" },
      { baseUrl: "ftp://proxy.local" },
      { baseUrl: "http://a.local", baseUrlEnv: "GATEWAY_URL" },
      { permissions: "root" },
      { providerRetries: 11 },
      { extraArgs: ["a\0b"] },
      { argv: ["claude"] },
    ];
    for (const extra of refused)
      expect(ZAgentConfig.safeParse({ kind: "claude", id: "c", ...extra }).success, JSON.stringify(extra)).toBe(false);
    expect(ZAgentConfig.safeParse({ kind: "codex", id: "c", baseUrl: "http://a.local", baseUrlEnv: "X" }).error?.issues[0]).toMatchObject({
      path: ["baseUrlEnv"],
      message: "give baseUrl or baseUrlEnv, not both",
    });
  });
});

describe("claude argv and environment", () => {
  it("runs headless with stream-json and partial messages, edits accepted; full also allows Bash", () => {
    const edit = new ClaudeAgent({ kind: "claude", id: "c", model: "claude-sonnet-4-5", extraArgs: ["--max-budget-usd", "2"] });
    expect(edit.args(CTX)).toEqual([
      "--print",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--no-session-persistence",
      "--permission-mode",
      "acceptEdits",
      "--model",
      "claude-sonnet-4-5",
      "--max-budget-usd",
      "2",
    ]);
    const full = new ClaudeAgent({ kind: "claude", id: "c", permissions: "full" }).args(CTX);
    expect(full.slice(full.indexOf("--allowedTools"), full.indexOf("--allowedTools") + 2)).toEqual(["--allowedTools", "Bash"]);
  });

  it("gets a minimal environment: the key under the CLI's name, the endpoint, an isolated HOME, never the runner's secrets", () => {
    const agent = new ClaudeAgent({
      kind: "claude",
      id: "c",
      apiKeyEnv: "CAT_KEY",
      passEnv: ["EXTRA_VAR"],
      env: { CLAUDE_CODE_EFFORT: "low" },
      providerRetries: 2,
    });
    const env = agent.environment(CTX, RUN_ID, SOURCE);
    expect(env).toEqual({
      PATH: expect.stringMatching(/^\/usr\/bin:\/bin/),
      HOME: CTX.runDir,
      LANG: "C.UTF-8",
      TERM: "dumb",
      NO_COLOR: "1",
      // A temporary directory of the run's own, beside (not above) its HOME.
      TMPDIR: `${CTX.runDir}/tmp`,
      TMP: `${CTX.runDir}/tmp`,
      TEMP: `${CTX.runDir}/tmp`,
      EXTRA_VAR: "extra",
      CLAUDE_CODE_EFFORT: "low",
      ANTHROPIC_API_KEY: "key-123",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9999",
      CLAUDE_CODE_MAX_RETRIES: "2",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      CATCAFE_AGENT_RUN: "run-1",
    });
  });

  it("with isolateHome false the runner's HOME is used, and no key is passed when the runner has none", () => {
    const env = new ClaudeAgent({ kind: "claude", id: "c", isolateHome: false }).environment(
      { ...CTX, apiKey: undefined, baseUrl: undefined },
      RUN_ID,
      SOURCE,
    );
    expect(env.HOME).toBe("/home/runner");
    expect(env).not.toHaveProperty("ANTHROPIC_API_KEY");
    expect(env).not.toHaveProperty("ANTHROPIC_BASE_URL");
  });

  it("the runner's Node is on the CLI's PATH (the node-based CLIs start with /usr/bin/env node)", () => {
    const env = new ClaudeAgent({ kind: "claude", id: "c" }).environment(CTX, RUN_ID, { PATH: "/nowhere" });
    expect(env.PATH!.split(path.delimiter)).toEqual(["/nowhere", path.dirname(process.execPath)]);
  });

  it("the endpoint may come from a variable of the runner; unset, it is an error rather than the public API", () => {
    const agent = new ClaudeAgent({ kind: "claude", id: "c", baseUrlEnv: "GATEWAY_URL" });
    expect(agent.baseUrl({ GATEWAY_URL: "https://gw.local/" })).toBe("https://gw.local");
    expect(() => agent.baseUrl({})).toThrow(
      expect.objectContaining({ errorClass: "tool_error", message: expect.stringContaining("GATEWAY_URL") }),
    );
  });

  it("runs the pinned binary from node_modules/.bin unless a command is configured", () => {
    expect(new ClaudeAgent({ kind: "claude", id: "c" }).executable()).toBe(
      path.resolve(import.meta.dirname, "../../node_modules/.bin/claude"),
    );
    expect(new ClaudeAgent({ kind: "claude", id: "c", command: "no-such-claude-xyz" }).executable()).toBe("no-such-claude-xyz");
  });
});

describe("codex argv and environment", () => {
  it("exec --json in the workspace sandbox, our own provider with the endpoint, key variable and retries, the prompt from stdin", () => {
    const agent = new CodexAgent({
      kind: "codex",
      id: "x",
      model: "gpt-5-codex",
      apiKeyEnv: "CAT_OPENAI",
      providerRetries: 1,
      extraArgs: ["--enable", "foo"],
    });
    expect(agent.args(CTX)).toEqual([
      "exec",
      "--json",
      "--cd",
      "/work/ws",
      "--skip-git-repo-check",
      "--ephemeral",
      "--sandbox",
      "workspace-write",
      "--model",
      "gpt-5-codex",
      "-c",
      'model_provider="catcafe"',
      "-c",
      'model_providers.catcafe.name="catcafe"',
      "-c",
      'model_providers.catcafe.base_url="http://127.0.0.1:9999"',
      "-c",
      'model_providers.catcafe.wire_api="responses"',
      "-c",
      'model_providers.catcafe.env_key="CAT_OPENAI"',
      "-c",
      "model_providers.catcafe.request_max_retries=1",
      "-c",
      "model_providers.catcafe.stream_max_retries=1",
      "--enable",
      "foo",
      "-",
    ]);
    expect(agent.environment(CTX, RUN_ID, SOURCE)).toMatchObject({ CAT_OPENAI: "key-123" });
    expect(agent.environment(CTX, RUN_ID, SOURCE)).not.toHaveProperty("OPENAI_API_KEY");
  });

  it("without an endpoint the provider is OpenAI's; full permissions drop the sandbox", () => {
    const args = new CodexAgent({ kind: "codex", id: "x", permissions: "full" }).args({ ...CTX, baseUrl: undefined });
    expect(args).toContain('model_providers.catcafe.base_url="https://api.openai.com/v1"');
    expect(args).toContain("--dangerously-bypass-approvals-and-sandbox");
    expect(args).not.toContain("--sandbox");
  });

  it("with isolateHome false and nothing configured, Codex keeps its own provider and login", () => {
    const args = new CodexAgent({ kind: "codex", id: "x", isolateHome: false }).args({ ...CTX, apiKey: undefined, baseUrl: undefined });
    expect(args.some((a) => a.includes("model_provider"))).toBe(false);
  });
});

describe("gemini argv, environment and settings", () => {
  it("headless with an empty -p (the prompt is stdin), stream-json, trusted, edits approved; full is yolo", () => {
    expect(new GeminiAgent({ kind: "gemini", id: "g", model: "gemini-2.5-pro" }).args()).toEqual([
      "--prompt",
      "",
      "--output-format",
      "stream-json",
      "--skip-trust",
      "--approval-mode",
      "auto_edit",
      "--model",
      "gemini-2.5-pro",
    ]);
    expect(new GeminiAgent({ kind: "gemini", id: "g", permissions: "full" }).args()).toContain("yolo");
  });

  it("the key and endpoint under Gemini's names; settings select API-key auth and the retry count", () => {
    const agent = new GeminiAgent({ kind: "gemini", id: "g", apiKeyEnv: "CAT_GEMINI", providerRetries: 0 });
    expect(agent.environment(CTX, RUN_ID, SOURCE)).toMatchObject({
      GEMINI_API_KEY: "key-123",
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9999",
    });
    expect(agent.settings(CTX)).toEqual({
      security: { auth: { selectedType: "gemini-api-key" } },
      general: { maxAttempts: 1 },
      privacy: { usageStatisticsEnabled: false },
    });
  });
});

describe("the prompt on stdin", () => {
  it("is the prompt alone without a thread", () => {
    expect(cliPrompt({ role: "coder", context: [], prompt: "Build it." })).toBe("Build it.");
  });

  it("writes the thread out, marking the role's own earlier turns", () => {
    const text = cliPrompt({
      role: "coder",
      prompt: "Address the review.",
      context: [
        { from: "operator", text: "Add a parser." },
        { from: "coder", text: "Added src/parser.ts." },
        { from: "reviewer", text: "  " },
        { from: "reviewer", text: "Missing tests." },
      ],
    });
    expect(text).toBe(
      "The conversation so far:\n\n[operator]\nAdd a parser.\n\n[coder]\nAdded src/parser.ts.\n\n[reviewer]\nMissing tests.\n\n---\n\nYour task now, as the coder; what [coder] said above is yours:\n\nAddress the review.",
    );
  });

  it("puts the prompt's stable part before the thread, the same bytes for every role, and the rest after it", () => {
    const context = [
      { from: "coder" as const, text: "Proposal." },
      { from: "reviewer" as const, text: "Critique." },
    ];
    const prompt = "Task:\nA word counter.\n\nCritique the proposal.";
    const stableChars = "Task:\nA word counter.\n".length;
    const asReviewer = cliPrompt({ role: "reviewer", context, prompt, promptStableChars: stableChars });
    const asTester = cliPrompt({
      role: "tester",
      context,
      prompt: "Task:\nA word counter.\n\nPlan the tests.",
      promptStableChars: stableChars,
    });
    const shared =
      "Task:\nA word counter.\n\n\nThe conversation so far:\n\n[coder]\nProposal.\n\n[reviewer]\nCritique.\n\n---\n\nYour task now, as the ";
    expect(asReviewer).toBe(`${shared}reviewer; what [reviewer] said above is yours:\n\n\nCritique the proposal.`);
    expect(asTester).toBe(`${shared}tester:\n\n\nPlan the tests.`);
    // Without a thread the prompt is sent as it is, and it begins with the same stable part.
    expect(cliPrompt({ role: "coder", context: [], prompt, promptStableChars: stableChars })).toBe(prompt);
  });
});
