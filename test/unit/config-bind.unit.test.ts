// Binding (req M5) and the runtime execution context (M6): each agent of the example is
// bound to its shell, brain and FSM and mapped to the runtime agent kind the runner
// executes; wrong combinations fail with the line that chose them; the repository may only
// narrow the admin's allowlist; the context snapshot is redacted and read back from events.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ZAgentConfig } from "../../server/agents/config";
import { ZMcpServers, type McpServer } from "../../server/agents/mcp";
import {
  agentStepsByRole,
  bindAgent,
  bindWorkflowRoles,
  effectiveProjectSettings,
  formatConfigErrors,
  loadProjectConfig,
  parseProjectConfig,
  ruleCovers,
  runtimeAgentKinds,
  runtimeContextData,
  runtimeContextFromEvents,
  type ProjectConfig,
} from "../../server/config";
import type { AppEvent } from "../../server/events/catalog";
import { BUILTIN_WORKFLOWS } from "../../server/task-engine";
import { expectValidEvents, recorded } from "../helpers/decider";

const FULL = path.resolve(import.meta.dirname, "../fixtures/config/valid/full");
const full = async (): Promise<ProjectConfig> => (await loadProjectConfig(FULL)).config!;
const json = (value: unknown) => JSON.stringify(value);
const COMMIT = "0123456789abcdef0123456789abcdef01234567";

function configOf(texts: Record<string, unknown>, settingsFile?: string): ProjectConfig {
  const result = parseProjectConfig(Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, json(v)])), { settingsFile });
  expect(formatConfigErrors(result.errors)).toEqual([]);
  return result.config!;
}

describe("bindAgent maps shell + brain to the runtime agent kind", () => {
  it("a scripted brain → scripted (its responses, the manifest's globs)", async () => {
    const { binding, errors } = bindAgent(await full(), "coder-sim", { role: "coder" });
    expect(errors).toEqual([]);
    expect(binding!.runtime).toEqual({
      kind: "scripted",
      id: "coder-sim",
      name: "Simulated coder",
      manifest: { capabilities: ["code-generation", "edit-files"], allowedFiles: ["src/**/*.js", "test/**"] },
      responses: [{ reply: "Done.", chunkDelayMs: 0 }],
    });
    expect(binding!.fsm.id).toBe("execution_fsm_v1");
  });

  it("a brain without a shell → the HTTP brain agent (openai / anthropic), key by variable name", async () => {
    const { binding } = bindAgent(await full(), "reviewer-gpt");
    expect(binding!.runtime).toMatchObject({
      kind: "openai",
      model: "gpt-5",
      baseUrl: "https://api.openai.com/v1",
      apiKeyEnv: "OPENAI_API_KEY",
      rateLimit: { minIntervalMs: 5000 },
    });
    expect(binding!.shell).toBeNull();
  });

  it("a coding CLI shell → that kind, driven by the brain's model and key variable", async () => {
    const { binding } = bindAgent(await full(), "tester-claude");
    expect(binding!.runtime).toMatchObject({
      kind: "claude",
      extraArgs: ["--verbose"],
      permissions: "edit",
      model: "claude-sonnet-4-5",
      apiKeyEnv: "ANTHROPIC_API_KEY",
    });
    expect(binding!.runtime).not.toHaveProperty("command"); // the CLI's own name: the adapter finds it
  });

  it("a command shell → command (argv, prompt mode, env); with a brain it learns the brain from CATCAFE_BRAIN_*", async () => {
    const { binding } = bindAgent(await full(), "planner-cli");
    expect(binding!.runtime).toMatchObject({
      kind: "command",
      argv: ["node", "tools/agent.js", "--task", "{prompt}"],
      prompt: "arg",
      network: false, // no brain bound: the sandbox keeps it offline
      env: { AGENT_MODE: "ci" },
      passEnv: ["GEMINI_API_KEY"],
    });
    const config = configOf({
      "shells.json": { shells: { wrapper: { kind: "command", command: "./agent.sh" } } },
      "brains.json": { brains: { gpt: { provider: "openai", model: "gpt-5" } } },
      "agents.json": { agents: [{ id: "w", role: "coder", defaultShell: "wrapper", defaultBrain: "gpt" }] },
    });
    expect(bindAgent(config, "w").binding!.runtime).toEqual({
      kind: "command",
      id: "w",
      manifest: { capabilities: [] },
      argv: ["./agent.sh"],
      prompt: "stdin",
      network: true, // it calls its brain itself
      env: { CATCAFE_BRAIN_PROVIDER: "openai", CATCAFE_BRAIN_MODEL: "gpt-5", CATCAFE_BRAIN_API_KEY_ENV: "OPENAI_API_KEY" },
      passEnv: ["OPENAI_API_KEY"],
    });
  });

  it("every runtime config it produces is a valid ZAgentConfig", async () => {
    const config = await full();
    for (const agent of config.agents) expect(ZAgentConfig.safeParse(bindAgent(config, agent.id).binding!.runtime).success).toBe(true);
  });

  it("the runtime kinds are ZAgentConfig's discriminator values, each once", () => {
    expect(runtimeAgentKinds().sort()).toEqual(["anthropic", "claude", "codex", "command", "gemini", "openai", "scripted"]);
  });
});

describe("bindAgent refuses wrong combinations, pointing at the line that chose them", () => {
  it("unknown agent; wrong role for the step", async () => {
    const config = await full();
    expect(formatConfigErrors(bindAgent(config, "coder").errors)).toEqual([
      '.catcafe/agents.json: agents: unknown agent "coder" (known: coder-sim, planner-cli, reviewer-gpt, tester-claude); did you mean "coder-sim"?',
    ]);
    expect(
      formatConfigErrors(
        bindAgent(config, "tester-claude", { role: "reviewer", steps: [{ state: "reviewing", output: "review_verdict" }] }).errors,
      ),
    ).toEqual(['.catcafe/agents.json: agents[2].role: agent "tester-claude" is a tester, but the step "reviewing" needs a reviewer']);
  });

  it("a problem with a default is reported where the default is written", () => {
    const config = configOf({
      "shells.json": { shells: { tui: { kind: "command", command: "tui-agent", nonInteractive: false } } },
      "brains.json": { brains: { sim: { provider: "scripted", responses: [{ reply: "x" }] } } },
      "agents.json": { agents: [{ id: "a", role: "coder", defaultBrain: "sim" }] },
      "projects.json": { defaultShell: "tui" },
    });
    expect(formatConfigErrors(bindAgent(config, "a").errors)).toEqual([
      '.catcafe/projects.json: defaultShell: shell "tui" (the default from projects.json) cannot run non-interactively (nonInteractive is false in .catcafe/shells.json), so agent "a" cannot run in a session',
    ]);
  });

  it("gemini brings its own model: a brain bound to it is refused", () => {
    const config = configOf({
      "brains.json": { brains: { sonnet: { provider: "anthropic", model: "claude-sonnet-4-5" } } },
      "agents.json": { agents: [{ id: "g", role: "coder", defaultShell: "gemini", defaultBrain: "sonnet" }] },
    });
    expect(formatConfigErrors(bindAgent(config, "g").errors)).toEqual([
      '.catcafe/agents.json: agents[0].defaultBrain: brain "sonnet" (anthropic) cannot drive shell "gemini" (gemini), which uses its own models: leave the brain out',
    ]);
  });
});

describe("roles for a workflow", () => {
  it("the highest priority agent of each role; ties go to the first in the file; other roles stay with the project record", () => {
    const config = configOf({
      "brains.json": { brains: { sim: { provider: "scripted", responses: [{ reply: "x" }] } } },
      "agents.json": {
        agents: [
          { id: "c1", role: "coder", defaultBrain: "sim" },
          { id: "c2", role: "coder", defaultBrain: "sim", priority: 5 },
          { id: "r1", role: "reviewer", defaultBrain: "sim", priority: 1 },
          { id: "r2", role: "reviewer", defaultBrain: "sim", priority: 1 },
        ],
      },
    });
    const roles = bindWorkflowRoles(config, BUILTIN_WORKFLOWS.review_loop!);
    expect(Object.fromEntries(Object.entries(roles.bindings).map(([role, b]) => [role, b.agentId]))).toEqual({
      coder: "c2",
      reviewer: "r1",
    });
    expect(roles.unconfigured).toEqual(["tester"]);
    expect(roles.errors).toEqual([]);
  });

  it("steps depend on the mode: implementation never runs the roundtable", () => {
    const steps = (mode?: string) =>
      Object.fromEntries([...agentStepsByRole(BUILTIN_WORKFLOWS.review_loop!, mode)].map(([role, s]) => [role, s.map((x) => x.state)]));
    expect(steps("implementation")).toEqual({ coder: ["building"], reviewer: ["reviewing"], tester: ["testing"] });
    expect(steps()).toEqual({
      coder: ["proposal_coder", "building"],
      reviewer: ["proposal_reviewer", "reviewing"],
      tester: ["proposal_tester", "testing"],
    });
  });
});

describe("projects.json can narrow the admin's allowlist, never widen it", () => {
  it.each([
    [["npx", "vitest", "**"], ["npx", "vitest", "run", "src/a.test.ts"], true],
    [["npx", "vitest", "**"], ["npx", "vitest", "run", "**"], true],
    [["node", "--test", "*"], ["node", "--test", "test/"], true],
    [["node", "--test", "*"], ["node", "--test", "**"], false],
    [["node", "--test", "*"], ["node", "--test", "*.js"], true],
    [["node", "--test", "*.js"], ["node", "--test", "*"], false],
    [["npm", "test"], ["npm", "test", "--", "-u"], false],
    [["npm", "{test,run}"], ["npm", "test"], true],
  ])("%j covers %j: %s", (wide, narrow, covered) => {
    expect(ruleCovers(wide, narrow)).toBe(covered);
  });

  it("an uncovered rule is an error; the cap comes from projects.json when set", async () => {
    const config = configOf({
      "projects.json": {
        allowlist: [
          ["node", "--test", "test/"],
          ["rm", "-rf", "**"],
        ],
        maxIterations: 5,
      },
    });
    const effective = effectiveProjectSettings(config, { allowlist: [["node", "--test", "**"]], maxIterations: 3 });
    expect(formatConfigErrors(effective.errors)).toEqual([
      ".catcafe/projects.json: allowlist[1]: rule \"rm -rf **\" is not allowed by the project's allowlist (set by an admin); the repository's allowlist can only narrow it",
    ]);
    expect(effective.maxIterations).toBe(5);
    expect(effectiveProjectSettings(await full(), { allowlist: [["node", "**"]], maxIterations: 3 })).toEqual({
      allowlist: [["node", "--test", "**"]],
      maxIterations: 4,
      errors: [],
    });
  });
});

describe("runtime execution context", () => {
  async function contextEvent(mcpServers: McpServer[] = []) {
    const config = await full();
    const bindings = {
      coder: bindAgent(config, "coder-sim").binding!,
      reviewer: bindAgent(config, "reviewer-gpt").binding!,
      planner: bindAgent(config, "planner-cli").binding!,
    };
    return runtimeContextData({
      runId: "run-1",
      createdAt: new Date("2026-01-01T00:00:00Z"),
      commit: COMMIT,
      config,
      bindings,
      projectAgents: { tester: { id: "tester-sim", kind: "scripted" } },
      mcpServers,
    });
  }

  it("snapshots agent, shell, brain and FSM per role; key variables by name; scripted replies only counted", async () => {
    const data = await contextEvent();
    expectValidEvents([{ type: "RuntimeContextRecorded", data }]);
    expect(data.roles).toEqual({
      coder: { agentId: "coder-sim", source: "config" },
      reviewer: { agentId: "reviewer-gpt", source: "config" },
      planner: { agentId: "planner-cli", source: "config" },
      tester: { agentId: "tester-sim", source: "project" },
    });
    expect(data.source).toEqual({
      dir: ".catcafe",
      commit: COMMIT,
      files: ["version.json", "shells.json", "brains.json", "agents.json", "runtimes.json", "projects.json"],
      configVersion: "1.0",
    });
    expect(data.settings).toMatchObject({ retry: { backoffMs: [1000, 2000, 4000] }, rateLimit: { minIntervalMs: 2000 } });
    const agents = data.agents as Record<string, Record<string, unknown>>;
    expect(agents.reviewer!.brain).toMatchObject({ id: "gpt", apiKeyEnv: "OPENAI_API_KEY" });
    expect(agents.coder!.brain).toMatchObject({ provider: "scripted", scriptedResponses: 1 });
    expect(agents.coder!.brain).not.toHaveProperty("responses");
    expect(agents.planner!.shell).toMatchObject({ id: "sim-cli", kind: "command", command: "node", env: { AGENT_MODE: "ci" } });
    expect(agents.planner!.fsm).toMatchObject({ id: "careful_fsm", initialState: "IDLE" });
    expect(agents.tester).toMatchObject({ source: "project", runtimeKind: "scripted", fsm: { id: "execution_fsm_v1" } });
    expect(agents.coder!.agent).not.toHaveProperty("index");
  });

  it("records the MCP servers the agent CLIs get, once (not again under settings), variables by name; read back from it", async () => {
    const servers = ZMcpServers.parse([
      { name: "github", command: "npx", args: ["-y", "@example/github-mcp"], envFrom: { TOKEN: "GITHUB_TOKEN" } },
      { name: "docs", url: "https://mcp.example.com/mcp", bearerTokenEnv: "DOCS_MCP_TOKEN" },
    ]);
    const data = await contextEvent(servers);
    expectValidEvents([{ type: "RuntimeContextRecorded", data }]);
    expect(data.mcpServers).toEqual(servers);
    expect(data.settings).not.toHaveProperty("mcpServers");
    expect((await contextEvent()).mcpServers).toEqual([]);
    const started = {
      type: "TaskStarted",
      data: {
        workflow: "planning",
        workflowVersion: 1,
        mode: "implementation",
        prompt: "p",
        maxIterations: 3,
        project: { id: "p", name: "P", repoPath: "/r", baseCommit: COMMIT, allowlist: [] },
        agents: {},
        mcpServers: servers,
      },
    } as AppEvent;
    const created = { type: "SessionCreated", data: { title: "t", workflow: "planning", state: "init" } } as AppEvent;
    expect(runtimeContextFromEvents("s", recorded([created, { type: "RuntimeContextRecorded", data }, started]))!.mcpServers).toEqual(
      servers,
    );
    // A session without .catcafe/ records no context event: its TaskStarted says which servers.
    expect(runtimeContextFromEvents("s", recorded([created, started]))).toMatchObject({ recorded: false, mcpServers: servers });
  });

  it("read back from the events: each agent step's FSM history and the artifacts", async () => {
    const data = await contextEvent();
    const step = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    const blob = (c: string) => ({ blob: c.repeat(64), size: 10, mediaType: "text/plain" });
    const events = recorded([
      { type: "SessionCreated", data: { title: "t", workflow: "planning", state: "init" } },
      { type: "RuntimeContextRecorded", data },
      {
        type: "StepScheduled",
        data: { stepId: step(1), kind: "agent", input: { role: "planner", state: "planning" }, timeoutMs: 1000, maxAttempts: 4 },
      },
      { type: "StepStarted", data: { stepId: step(1), attempt: 1, runnerId: "r", leaseExpiresAt: "2026-01-01T00:01:00Z" } },
      {
        type: "StepFailed",
        data: { stepId: step(1), attempt: 1, errorClass: "timeout", message: "slow", retryAt: "2026-01-01T00:02:00Z" },
      },
      { type: "StepStarted", data: { stepId: step(1), attempt: 2, runnerId: "r", leaseExpiresAt: "2026-01-01T00:03:00Z" } },
      {
        type: "AgentOutputRecorded",
        data: {
          stepId: step(1),
          attempt: 2,
          role: "planner",
          agentId: "planner-cli",
          phase: "plan",
          raw: blob("a"),
          preview: "{}",
          parsed: {},
          validationErrors: [],
          simulated: false,
        },
      },
      { type: "StepCompleted", data: { stepId: step(1), attempt: 2, output: {} } },
      {
        type: "StepScheduled",
        data: { stepId: step(2), kind: "agent", input: { role: "coder", state: "building" }, timeoutMs: 1000, maxAttempts: 4 },
      },
      { type: "StepStarted", data: { stepId: step(2), attempt: 1, runnerId: "r", leaseExpiresAt: "2026-01-01T00:04:00Z" } },
      {
        type: "WorkspaceCommitted",
        data: {
          stepId: step(2),
          commit: "c".repeat(40),
          parent: COMMIT,
          empty: false,
          changedFiles: [{ path: "src/sum.js", status: "modified" }],
          diff: blob("d"),
        },
      },
      { type: "StepCompleted", data: { stepId: step(2), attempt: 1, output: {} } },
    ] as AppEvent[]);
    // A TaskStarted is what makes a session a task; its place after the context is how startTask records it.
    const taskStarted = recorded(
      [
        {
          type: "TaskStarted",
          data: {
            workflow: "planning",
            workflowVersion: 1,
            mode: "implementation",
            prompt: "p",
            maxIterations: 3,
            project: { id: "p", name: "P", repoPath: "/r", baseCommit: COMMIT, allowlist: [] },
            agents: {},
          },
        },
      ],
      99,
    );
    const context = runtimeContextFromEvents("session-under-test", [...events.slice(0, 2), ...taskStarted, ...events.slice(2)])!;
    expect(context).toMatchObject({ sessionId: "session-under-test", runId: "run-1", recorded: true, inheritedFrom: null });
    // Read back with the snapshot's schema: every role's agent exactly as recorded.
    expect(context.agents).toEqual(data.agents);
    expect(context.runs.map((r) => [r.role, r.attempt, r.fsmState, r.history.map((h) => `${h.from}-${h.event}->${h.to}`)])).toEqual([
      ["planner", 1, "FAILED", ["IDLE-start->EXECUTING", "EXECUTING-error->FAILED"]],
      ["planner", 2, "CHECKING", ["IDLE-start->EXECUTING", "EXECUTING-success->CHECKING"]],
      ["coder", 1, "COMPLETED", ["IDLE-start->EXECUTING", "EXECUTING-success->COMPLETED"]],
    ]);
    expect(context.runs[1]!.history[0]!.emitted).toEqual(["execution_started"]);
    expect(context.artifacts.map((a) => a.kind)).toEqual(["agent_output", "commit", "diff"]);
  });

  it("a session started without .catcafe/ gets a context derived from TaskStarted; no task, no context", () => {
    const events = recorded([
      { type: "SessionCreated", data: { title: "t", workflow: "review_loop", state: "start" } },
      {
        type: "TaskStarted",
        data: {
          workflow: "review_loop",
          workflowVersion: 1,
          mode: "proposal",
          prompt: "p",
          maxIterations: 3,
          project: { id: "p", name: "P", repoPath: "/r", baseCommit: COMMIT, allowlist: [] },
          agents: { coder: { kind: "scripted", id: "coder-sim", responses: [] } },
        },
      },
    ] as AppEvent[]);
    expect(runtimeContextFromEvents("session-under-test", events)).toMatchObject({
      recorded: false,
      source: { dir: null, commit: COMMIT },
      roles: { coder: { agentId: "coder-sim", source: "project" } },
      agents: { coder: { runtimeKind: "scripted", fsm: { id: "execution_fsm_v1" } } },
    });
    expect(runtimeContextFromEvents("x", events.slice(0, 1))).toBeNull();
  });
});
