// Starting a task with the repository's `.catcafe/` configuration (req M1, M5, M6, N3):
// the files are read at the base commit; invalid ones refuse the start with every error
// formatted `file: path: problem` and record nothing; valid ones are bound and snapshotted
// (secrets redacted) into the session's events, and the run uses that snapshot even after
// the files change.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { getRuntimeContext } from "../../server/config";
import { isAppError } from "../../server/errors";
import { cancelTask, startTask } from "../../server/tasks/commands";
import { rerunTask } from "../../server/tasks/fork";
import { validateConfigSource } from "../../server/projects/validate-config";
import { allowAgents } from "../helpers/access";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { BUGGY_SUM, createHarness, FIXED_SUM, gitIn, reviewApprove, tempDir, type Harness, ofType } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
const PROJECT = "cfg";
const KEY_VALUE = "sk-proj-IntegrationTestKeyThatMustNeverBeRecorded0001";

beforeAll(async () => {
  // Settings come from the data directory; this file gets its own.
  const dataDir = tempDir("catcafe-config-data-");
  process.env.CATCAFE_DATA_DIR = dataDir;
  fs.writeFileSync(path.join(dataDir, "settings.json"), JSON.stringify({ retry: { maxAttempts: 3 } }));
  process.env.CATCAFE_IT_OPENAI_API_KEY = KEY_VALUE;
  db = await createTestDatabase();
  // The brains' key variable, allowed as an admin would (settings access.agentEnv).
  await allowAgents(db, { agentEnv: ["CATCAFE_IT_*"] });
  h = createHarness(db);
  await h.project(PROJECT, {}); // no agents in the project record: .catcafe/ supplies them
});

const deps = () => ({ store: db.store, pool: db.pool });
const git = (...args: string[]) => gitIn(h.repo, ...args);

/** Replaces `.catcafe/` in the project repository (null deletes a file) and commits it. */
function commitConfig(files: Record<string, unknown>, message = "config"): string {
  writeConfig(files);
  git("add", "-A", ".catcafe");
  git("commit", "-q", "-m", message);
  return git("rev-parse", "HEAD");
}
function writeConfig(files: Record<string, unknown>): void {
  const dir = path.join(h.repo, ".catcafe");
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    if (content === null) fs.rmSync(file, { force: true });
    else fs.writeFileSync(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
}

const planScript = `process.stdout.write(JSON.stringify({ summary: "Run the unit tests.", commands: [{ argv: ["node", "--test", "test/"] }] }))`;
const validConfig = (coder: { id: string; files: Record<string, string> }) => ({
  "version.json": { configVersion: "1.0" },
  "shells.json": { shells: { "plan-writer": { kind: "command", command: "node", args: ["-e", planScript, "{prompt}"], prompt: "arg" } } },
  "brains.json": {
    brains: {
      "sim-coder": { provider: "scripted", responses: [{ reply: "Changed sum.", files: coder.files }] },
      "sim-reviewer": { provider: "scripted", responses: [{ reply: reviewApprove }] },
      gpt: { provider: "openai", model: "gpt-5", apiKeyEnv: "CATCAFE_IT_OPENAI_API_KEY" },
    },
  },
  "agents.json": {
    agents: [
      { id: coder.id, role: "coder", defaultBrain: "sim-coder", manifest: { capabilities: ["code-generation"], allowedFiles: ["src/**"] } },
      { id: "reviewer-sim", role: "reviewer", defaultBrain: "sim-reviewer", manifest: { output: { format: "json" } } },
      { id: "tester-cmd", role: "tester", defaultShell: "plan-writer", defaultBrain: "gpt", manifest: { capabilities: ["run-commands"] } },
    ],
  },
  "projects.json": { allowlist: [["node", "--test", "test/"]], maxIterations: 2, workflow: { mode: "implementation" } },
});

async function streamCount(): Promise<number> {
  return Number((await db.pool.query("SELECT count(*) AS n FROM streams")).rows[0].n);
}

async function refusal(prompt = "Fix sum()"): Promise<{ message: string; lines: string[] }> {
  const before = await streamCount();
  const err = await startTask(deps(), { projectId: PROJECT, prompt }, testActor).then(
    () => null,
    (e: unknown) => e,
  );
  if (!isAppError(err, "PRECONDITION_FAILED")) throw new Error(`expected PRECONDITION_FAILED, got ${String(err)}`);
  expect(await streamCount()).toBe(before); // nothing recorded
  return { message: err.message, lines: (err.details?.configErrors as string[]) ?? [] };
}

describe("startTask with .catcafe/ committed in the project repository", () => {
  it("invalid configuration refuses the start with every error, formatted, and records nothing", async () => {
    const commit = commitConfig({
      ...validConfig({ id: "coder-v1", files: { "src/sum.js": FIXED_SUM } }),
      "agents.json": { agents: [{ id: "coder-v1", role: "coder", defaultBrain: "sim-codr" }] },
      "projects.json": { maxIterations: 0 },
    });
    const { message, lines } = await refusal();
    expect(lines).toEqual([
      '.catcafe/agents.json: agents[0].defaultBrain: unknown brain "sim-codr" (known: gpt, sim-coder, sim-reviewer); did you mean "sim-coder"?',
      ".catcafe/projects.json: maxIterations: 0 is out of range: must be at least 1",
    ]);
    expect(message).toBe(
      `cannot start a task: project ${PROJECT} has an invalid .catcafe/ configuration at commit ${commit.slice(0, 12)}:\n${lines.map((l) => `  ${l}`).join("\n")}`,
    );
  });

  it("a key written into a file is refused without being repeated; an allowlist wider than the admin's is refused", async () => {
    const config = validConfig({ id: "coder-v1", files: { "src/sum.js": FIXED_SUM } });
    commitConfig({
      ...config,
      "brains.json": { brains: { ...config["brains.json"].brains, gpt: { provider: "openai", model: "gpt-5", apiKeyEnv: KEY_VALUE } } },
    });
    const secret = await refusal();
    expect(secret.lines).toEqual([
      ".catcafe/brains.json: brains.gpt.apiKeyEnv: must be the NAME of an environment variable (like OPENAI_API_KEY), but this value looks like an API key itself: remove it from the file and rotate it (it may already be in git history)",
    ]);
    expect(secret.message).not.toContain(KEY_VALUE);

    commitConfig({ ...config, "projects.json": { ...config["projects.json"], allowlist: [["node", "**"]] } });
    const wider = [
      ".catcafe/projects.json: allowlist[0]: rule \"node **\" is not allowed by the project's allowlist (set by an admin); the repository's allowlist can only narrow it",
    ];
    expect((await refusal()).lines).toEqual(wider);
    // Validation says what the start would: the same check, the same words.
    expect((await validateConfigSource(db.pool, { projectId: PROJECT })).errors).toEqual(wider);
  });

  it("valid configuration: bound agents and the redacted runtime context are recorded; later edits change nothing; the run uses the snapshot", async () => {
    const baseCommit = commitConfig(validConfig({ id: "coder-v1", files: { "src/sum.js": FIXED_SUM } }));
    // An uncommitted edit is not what a task runs with: the base commit is.
    writeConfig({ "agents.json": "{ not json" });
    const { sessionId } = await startTask(deps(), { projectId: PROJECT, prompt: "Fix sum() so the test passes" }, testActor);
    const atStart = await db.store.readStream(sessionId);
    expect(atStart.map((e) => e.type).slice(0, 3)).toEqual(["SessionCreated", "RuntimeContextRecorded", "TaskStarted"]);

    const [started] = ofType<{
      mode: string;
      maxIterations: number;
      project: { baseCommit: string; allowlist: string[][] };
      agents: Record<string, Record<string, unknown>>;
    }>(atStart, "TaskStarted");
    expect(started!.mode).toBe("implementation"); // projects.json's default mode
    expect(started!.maxIterations).toBe(2);
    expect(started!.project).toMatchObject({ baseCommit, allowlist: [["node", "--test", "test/"]] });
    expect(started!.agents.coder).toMatchObject({ kind: "scripted", id: "coder-v1", manifest: { allowedFiles: ["src/**"] } });
    expect(started!.agents.tester).toMatchObject({
      kind: "command",
      id: "tester-cmd",
      passEnv: ["CATCAFE_IT_OPENAI_API_KEY"],
      env: { CATCAFE_BRAIN_PROVIDER: "openai", CATCAFE_BRAIN_MODEL: "gpt-5", CATCAFE_BRAIN_API_KEY_ENV: "CATCAFE_IT_OPENAI_API_KEY" },
    });

    const context = await getRuntimeContext(db.store, sessionId);
    expect(context).toMatchObject({
      recorded: true,
      inheritedFrom: null,
      source: {
        dir: ".catcafe",
        commit: baseCommit,
        configVersion: "1.0",
        files: ["version.json", "shells.json", "brains.json", "agents.json", "projects.json"],
      },
      settings: { retry: { maxAttempts: 3, backoffMs: [1000, 2000, 4000] }, rateLimit: { minIntervalMs: 2000 } },
      roles: {
        coder: { agentId: "coder-v1", source: "config" },
        reviewer: { agentId: "reviewer-sim", source: "config" },
        tester: { agentId: "tester-cmd", source: "config" },
      },
      agents: {
        tester: {
          shell: { id: "plan-writer", kind: "command" },
          brain: { id: "gpt", apiKeyEnv: "CATCAFE_IT_OPENAI_API_KEY" },
          fsm: { id: "execution_fsm_v1", initialState: "IDLE" },
        },
      },
    });
    // The key's value was never read into the session: only its variable's name.
    expect(JSON.stringify(atStart)).not.toContain(KEY_VALUE);

    // Change the files (and commit them): the session's record stays exactly as it was.
    commitConfig(validConfig({ id: "coder-v2", files: { "src/sum.js": BUGGY_SUM.replace("a - b", "a * b") } }), "another coder");
    expect(await db.store.readStream(sessionId)).toEqual(atStart);
    expect(await getRuntimeContext(db.store, sessionId)).toEqual(context);
    // A new task reads the new commit.
    const second = await startTask(deps(), { projectId: PROJECT, prompt: "Fix sum() again" }, testActor);
    expect((await getRuntimeContext(db.store, second.sessionId))!.roles.coder).toEqual({ agentId: "coder-v2", source: "config" });
    await cancelTask(deps(), { sessionId: second.sessionId }, testActor);

    // The first session runs with its snapshot: the coder's fix from the original commit,
    // the tester's plan from the command shell, the narrowed allowlist.
    await h.startRunner();
    const done = await h.waitFor(sessionId, "approved", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");
    const events = await db.store.readStream(sessionId);
    expect(fs.readFileSync(path.join(h.workspacesRoot, sessionId, "src/sum.js"), "utf8")).toBe(FIXED_SUM);
    expect(ofType<{ argv: string[]; passed: boolean }>(events, "TestCommandRecorded").map((t) => [t.argv, t.passed])).toEqual([
      [["node", "--test", "test/"], true],
    ]);
    expect(JSON.stringify(events)).not.toContain(KEY_VALUE);
    const after = (await getRuntimeContext(db.store, sessionId))!;
    expect(after.runs.map((r) => [r.role, r.agentId, r.fsmState])).toEqual([
      ["coder", "coder-v1", "COMPLETED"],
      ["reviewer", "reviewer-sim", "COMPLETED"],
      ["tester", "tester-cmd", "COMPLETED"],
    ]);
    expect(after.artifacts.map((a) => a.kind)).toEqual(["agent_output", "commit", "diff", "agent_output", "agent_output", "test_result"]);

    // A rerun is a fork at TaskStarted: it inherits the same context, and runs with it
    // although HEAD now holds another coder.
    const rerun = await rerunTask(deps(), { sessionId }, testActor);
    const inherited = (await getRuntimeContext(db.store, rerun.sessionId))!;
    expect(inherited).toMatchObject({ runId: context!.runId, inheritedFrom: sessionId, roles: context!.roles });
    expect((await h.waitFor(rerun.sessionId, "rerun finished", (s) => s.status === "finished")).outcome).toBe("approved");
  });

  it("the project's MCP servers are fixed at the start: TaskStarted, the runtime context and each agent step carry them, names only", async () => {
    const mcpServers = [
      { name: "github", command: "npx", args: ["-y", "@example/github-mcp"], envFrom: { TOKEN: "CATCAFE_IT_OPENAI_API_KEY" } },
      { name: "docs", url: "https://mcp.example.com/mcp", bearerTokenEnv: "CATCAFE_IT_DOCS_TOKEN" },
    ];
    commitConfig(validConfig({ id: "coder-v1", files: { "src/sum.js": FIXED_SUM } }));
    await h.project(PROJECT, {}, { settings: { mcpServers } });
    try {
      const { sessionId } = await startTask(deps(), { projectId: PROJECT, prompt: "Fix sum() with the tools" }, testActor);
      const events = await db.store.readStream(sessionId);
      expect(ofType<{ mcpServers?: unknown }>(events, "TaskStarted")[0]!.mcpServers).toEqual(mcpServers);
      const [context] = ofType<{ mcpServers?: unknown; settings: Record<string, unknown> }>(events, "RuntimeContextRecorded");
      expect(context!.mcpServers).toEqual(mcpServers);
      expect(context!.settings).not.toHaveProperty("mcpServers");
      const [step] = ofType<{ kind: string; input: { mcpServers?: unknown } }>(events, "StepScheduled");
      expect(step).toMatchObject({ kind: "agent", input: { mcpServers } });
      expect((await getRuntimeContext(db.store, sessionId))!.mcpServers).toEqual(mcpServers);
      expect(JSON.stringify(events)).not.toContain(KEY_VALUE);
      await cancelTask(deps(), { sessionId }, testActor);

      // A project without servers: none handed to any step, and the context says so.
      await h.project(PROJECT, {});
      const plain = await startTask(deps(), { projectId: PROJECT, prompt: "Fix sum() without tools" }, testActor);
      const plainEvents = await db.store.readStream(plain.sessionId);
      expect(ofType(plainEvents, "TaskStarted")[0]).not.toHaveProperty("mcpServers");
      expect(ofType<{ input: object }>(plainEvents, "StepScheduled")[0]!.input).not.toHaveProperty("mcpServers");
      expect(ofType(plainEvents, "RuntimeContextRecorded")[0]).toMatchObject({ mcpServers: [] });
      await cancelTask(deps(), { sessionId: plain.sessionId }, testActor);
    } finally {
      await h.project(PROJECT, {});
    }
  });

  it("a broken settings file refuses the start too, naming it", async () => {
    const settingsFile = path.join(process.env.CATCAFE_DATA_DIR!, "settings.json");
    fs.writeFileSync(settingsFile, JSON.stringify({ rateLimit: { minIntervalMs: -1 } }));
    try {
      expect((await refusal()).lines).toEqual([`${settingsFile}: rateLimit.minIntervalMs: -1 is out of range: must be at least 0`]);
    } finally {
      fs.writeFileSync(settingsFile, "{}");
    }
  });
});
