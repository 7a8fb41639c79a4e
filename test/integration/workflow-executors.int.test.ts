// What a runner does with a workflow's steps (server/runner/workflow-executors.ts), its
// executors called directly on a real git repository, a real database and real processes: a
// step input, agent configuration or MCP server list that does not parse fails the step with
// every problem named; an agent step's output (preview, usage, tool calls, the sandbox flag,
// redactions), its streamed output, provider retries and rate-limit waits recorded as events
// before its result, the stage, MCP servers and diff handed to the agent, the session's
// workspace reset on a later step, a build's commit (its message, renames, the session's
// branch), a commit refused because another attempt took the workspace, and a build whose every
// tool call failed; an HTTP brain's files reply written and committed, or refused as invalid
// output (a link out, a directory in the way, not JSON), and read as it is where nothing is
// written; a commands step's results: refused, an exit code other than the expected one, a
// timeout, a signal, the tails cut and their secrets counted, an aborted signal's reason.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getBlob, putBlob } from "../../server/events/blobs";
import type { AgentStepOutput, CommandsStepOutput, StepInput } from "../../server/events/step-contract";
import { logger } from "../../server/log";
import { sandboxStatus } from "../../server/process/sandbox";
import { observeProcesses } from "../../server/process/spawn";
import { claimNextStep, recordStepOutcome, scheduleStep, type ClaimedStep } from "../../server/runner/dispatch";
import { StepExecutionError, StepNotRunnableHere } from "../../server/runner/executors";
import { stepKindRegistry } from "../../server/runner/step-kinds";
import { workflowStepKinds } from "../../server/runner/workflow-executors";
import { reactToReactionFailure, reactToStepOutcome } from "../../server/task-engine";
import { claimWorkspace } from "../../server/workspaces";
import { allowAgents } from "../helpers/access";
import { startBrainStub, startEventStream, streamOf, STUB_PRIVATE_HOSTS, writeStream, type BrainStub } from "../helpers/brains-stub";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { forgeStepInput } from "../helpers/forge";
import { claimedStep } from "../helpers/steps";
import { commitFiles, gitIn, ofType, tempDir } from "../helpers/tasks";

const KEY_ENV = "CATCAFE_TEST_WFX_API_KEY";
const SECRET = "nextauth-secret-wfx-5d27c9e1";

let db: TestDatabase;
/** World-readable: the sandbox shows an agent's script only from such a place. */
let root: string;
let workspacesRoot: string;
let fakeClaude: string;
let echo: string;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  for (const [k, v] of Object.entries({ [KEY_ENV]: "wfx-test-key", NEXTAUTH_SECRET: SECRET })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  db = await createTestDatabase();
  // The agents' key variable, allowed as an admin would (settings access.agentEnv).
  await allowAgents(db, { agentEnv: [KEY_ENV] });
  root = tempDir("catcafe-wfx-");
  fs.chmodSync(root, 0o755);
  workspacesRoot = path.join(root, "workspaces");
  fs.mkdirSync(workspacesRoot);
  fakeClaude = script("claude", FAKE_CLAUDE);
  echo = script("echo.js", ECHO);
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/**
 * A fake `claude`: prints the Claude Code stream-json events of $FAKE_CLAUDE's `lines` after
 * writing its `files` into the workspace; `argsResult` ends with a result whose text is its
 * own arguments, `stdinResult` with one whose text is what it read on stdin; `rendezvous` first writes `started` and waits for the file `go`.
 */
const FAKE_CLAUDE = `#!/usr/bin/env node
const fs = require("node:fs");
const stdin = fs.readFileSync(0, "utf8");
const plan = JSON.parse(process.env.FAKE_CLAUDE);
const finish = () => {
  for (const [p, c] of Object.entries(plan.files || {})) fs.writeFileSync(p, c);
  for (const line of plan.lines || []) console.log(JSON.stringify(line));
  if (plan.argsResult) console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: process.argv.slice(2).join(" ") }));
  if (plan.stdinResult) console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, result: stdin }));
};
if (!plan.rendezvous) finish();
else {
  fs.writeFileSync("started", "");
  const poll = setInterval(() => {
    if (!fs.existsSync("go")) return;
    clearInterval(poll);
    fs.rmSync("go");
    fs.rmSync("started");
    finish();
  }, 20);
}
`;

/** A command agent that answers with its prompt. */
const ECHO = `process.stdout.write(require("node:fs").readFileSync(0));\n`;

function script(name: string, text: string): string {
  const dir = path.join(root, "bin");
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = path.join(dir, name);
  fs.writeFileSync(file, text, { mode: 0o755 });
  return file;
}

/** A git repository with `files` committed; its path and that commit. */
function repo(files: Record<string, string> = { "README.md": "# Project\n" }): { dir: string; head: string } {
  const dir = fs.mkdtempSync(path.join(root, "repo-"));
  return { dir, head: commitFiles(dir, files) };
}

const claude = (plan: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
  kind: "claude",
  id: "claude-wfx",
  command: fakeClaude,
  apiKeyEnv: KEY_ENV,
  rateLimit: { minIntervalMs: 0 },
  env: { FAKE_CLAUDE: JSON.stringify(plan) },
  ...over,
});
const scripted = (reply: string, files?: Record<string, string | null>) => ({
  kind: "scripted",
  id: "scripted-wfx",
  responses: [{ reply, ...(files ? { files } : {}) }],
});
const result = (text: string, extra: Record<string, unknown> = {}) => ({
  type: "result",
  subtype: "success",
  is_error: false,
  result: text,
  ...extra,
});
const toolResult = (content: string, isError: boolean) => ({
  type: "user",
  message: { content: [{ type: "tool_result", content, is_error: isError }] },
});

function input(r: { dir: string; head: string }, over: Partial<StepInput> = {}): StepInput {
  return {
    workflow: "test",
    state: "coding",
    role: "coder",
    phase: "build",
    output: "build",
    prompt: "Do the work.",
    context: [],
    agent: scripted("Done."),
    invocation: 0,
    workspace: { repoPath: r.dir, baseCommit: r.head, head: r.head },
    diff: null,
    commands: [],
    allowlist: [],
    ...over,
  };
}

/** A reviewer's step whose agent answers with its prompt (what the runner handed it). */
const reviewer = (r: { dir: string; head: string }, over: Partial<StepInput>): StepInput =>
  input(r, {
    role: "reviewer",
    phase: "verdict",
    output: "review_verdict",
    agent: { kind: "command", id: "echo-wfx", argv: ["node", echo] },
    ...over,
  });

/** A new session's stream. */
async function newSession(): Promise<string> {
  const sessionId = uniqueId();
  await db.store.append(sessionId, "no_stream", [{ type: "SessionCreated", data: { title: "wfx", workflow: "test", state: "open" } }], {
    actor: testActor,
  });
  return sessionId;
}

/** `stepInput` scheduled in a new session (or in `sessionId`) and claimed: attempt 1 holds it in the steps table. */
async function held(stepInput: StepInput, kind: "agent" | "commands" = "agent", sessionId?: string): Promise<ClaimedStep> {
  const session = sessionId ?? (await newSession());
  const id = await scheduleStep(db.store, { sessionId: session, kind, input: stepInput, timeoutMs: 60_000 }, { actor: testActor });
  const claimed = await claimNextStep(db.store, { runnerId: "wfx", leaseMs: 600_000, reclaimBackoffMs: 0 });
  expect(claimed).toMatchObject({ id, attempt: 1, sessionId: session });
  return claimed!;
}

const executors = () =>
  stepKindRegistry(
    workflowStepKinds({ pool: db.pool, store: db.store, workspacesRoot, reactor: { reactToStepOutcome, reactToReactionFailure } }),
  ).executors;
const live = () => ({ signal: new AbortController().signal });

async function agentStep(stepInput: StepInput, sessionId?: string): Promise<{ step: ClaimedStep; output: AgentStepOutput }> {
  const step = await held(stepInput, "agent", sessionId);
  return { step, output: (await executors().agent!(step, live())) as AgentStepOutput };
}

async function commandsStep(stepInput: StepInput): Promise<CommandsStepOutput> {
  return (await executors().commands!(await held(stepInput, "commands"), live())) as CommandsStepOutput;
}

async function failure(p: Promise<unknown>): Promise<StepExecutionError> {
  const err = await p.then(
    (value) => {
      throw new Error(`expected a StepExecutionError, got ${JSON.stringify(value)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StepExecutionError);
  return err as StepExecutionError;
}

const text = async (ref: { blob: string }) => (await getBlob(db.pool, ref.blob)).content.toString("utf8");
const messageOf = (dir: string, commit: string) => gitIn(dir, "log", "-1", "--format=%B", commit);

describe("a step that cannot run fails at once, as an internal error that is not retried, naming every problem", () => {
  it("an input that is not a workflow step's", async () => {
    const r = repo();
    const step = claimedStep("agent", { ...input(r), role: "chef", workspace: { repoPath: r.dir, baseCommit: r.head } });
    const err = await failure(executors().agent!(step, live()));
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "internal_error",
      retryable: false,
      message: `step ${step.id} (agent) has no valid workflow step input: role: Invalid option: expected one of "coder"|"reviewer"|"tester"|"planner"|"executor"; workspace.head: Invalid input: expected string, received undefined`,
    });
  });

  it("an agent configuration that does not parse", async () => {
    const step = claimedStep("agent", input(repo(), { agent: { kind: "command", id: "bad id", argv: ["node", "a\0b"] } }));
    const err = await failure(executors().agent!(step, live()));
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "internal_error",
      retryable: false,
      message:
        "no valid agent configured for role coder: id: use letters, digits, '.', '_' and '-', starting with a letter or digit; argv.1: must not contain a NUL byte",
    });
  });

  it("MCP servers that do not parse", async () => {
    const step = claimedStep("agent", input(repo(), { mcpServers: [{ name: "Docs", command: "" }] }));
    const err = await failure(executors().agent!(step, live()));
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "internal_error",
      retryable: false,
      message:
        "the task's MCP servers are not valid: 0.name: must use lower-case letters, digits, '_' and '-'; 0.command: must not be empty",
    });
  });
});

describe("an agent step's output", () => {
  it("a reply in a step that builds nothing: its first 2,000 characters as the preview, the whole reply as a blob, nothing else reported, nothing committed", async () => {
    const r = repo();
    const reply = `${"x".repeat(1_500)}${"y".repeat(1_000)}`;
    const { output } = await agentStep(
      input(r, { role: "reviewer", phase: "verdict", output: "review_verdict", agent: scripted(reply, { "notes.txt": "mine\n" }) }),
    );
    expect(output).toStrictEqual({
      kind: "agent",
      agentId: "scripted-wfx",
      raw: { blob: expect.any(String), size: 2_500, mediaType: "text/plain; charset=utf-8" },
      preview: reply.slice(0, 2_000),
      simulated: true,
    });
    expect(await text(output.raw)).toBe(reply);
    expect(gitIn(r.dir, "log", "--format=%s", "--all")).toBe("base");
  });

  it("a build by an agent CLI: its usage with the model of its init event, its tool calls, the sandbox flag, the server's secrets redacted, and its commit", async () => {
    const r = repo();
    const firstLine = `Added the greeting module${" and more".repeat(10)}`;
    const reply = `${firstLine}\nIt reads ${SECRET} from nowhere.`;
    const plan = {
      files: { "greet.js": "module.exports = 'hi';\n" },
      lines: [
        { type: "system", subtype: "init", model: "claude-wfx-model" },
        toolResult("written", false),
        toolResult("ls: cannot access 'x': No such file or directory", true),
        result(reply, { usage: { input_tokens: 100, cache_read_input_tokens: 20, output_tokens: 7 } }),
      ],
    };
    const { output } = await agentStep(input(r, { agent: claude(plan) }));
    const recorded = reply.replace(SECRET, "[redacted NEXTAUTH_SECRET]");
    // The step's input (this fake CLI's script included) is an event: the secret was redacted
    // when it was recorded, so the CLI already said the redacted text (server/redact.ts).
    expect(output).toStrictEqual({
      kind: "agent",
      agentId: "claude-wfx",
      raw: { blob: expect.any(String), size: Buffer.byteLength(recorded), mediaType: "text/plain; charset=utf-8" },
      preview: recorded,
      simulated: false,
      usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 20, model: "claude-wfx-model" },
      sandboxed: sandboxStatus().available,
      tools: { calls: 2, failed: 1 },
      commit: {
        commit: expect.stringMatching(/^[0-9a-f]{40}$/),
        parent: r.head,
        empty: false,
        changedFiles: [{ path: "greet.js", status: "added" }],
        diff: { blob: expect.any(String), size: expect.any(Number), mediaType: "text/x-diff; charset=utf-8" },
        bundle: { blob: expect.any(String), size: expect.any(Number), mediaType: "application/x-git-bundle" },
        // Only what this build added: since the commit it started from.
        bundleSince: r.head,
      },
    });
    const commit = output.commit!.commit;
    // The commit message is the role, the state and the reply's first line cut at 72 characters.
    expect(messageOf(r.dir, commit)).toBe(`coder (coding): ${firstLine.slice(0, 72)}`);
    expect(gitIn(r.dir, "log", "-1", "--format=%an <%ae>", commit)).toBe("claude-wfx (coder) <claude-wfx@agents.catcafe.local>");
    expect(await text(output.commit!.diff)).toContain("+module.exports = 'hi';");
    // No branch prefix: no branch but the repository's own.
    expect(gitIn(r.dir, "branch", "--format=%(refname:short)")).toBe("main");
  });

  it("a reply whose first line is empty commits as 'changes'; a renamed file is listed with its previous path; with a branch prefix the session's branch points at the commit", async () => {
    const r = repo({ "README.md": "# Project\n\nSome words to make git see a rename.\n" });
    const { step, output } = await agentStep(
      input(r, {
        phase: "execute",
        state: "executing",
        role: "executor",
        output: "execution",
        agent: scripted("\nMoved the readme.", {
          "README.md": null,
          "docs/README.md": "# Project\n\nSome words to make git see a rename.\n",
        }),
        workspace: { repoPath: r.dir, baseCommit: r.head, head: r.head, branchPrefix: "catcafe/" },
      }),
    );
    expect(output.commit?.changedFiles).toStrictEqual([{ path: "docs/README.md", status: "renamed", previousPath: "README.md" }]);
    expect(messageOf(r.dir, output.commit!.commit)).toBe("executor (executing): changes");
    expect(gitIn(r.dir, "branch", "--format=%(refname:short) %(objectname)").split("\n").sort()).toEqual(
      [`catcafe/${step.sessionId} ${output.commit!.commit}`, `main ${r.head}`].sort(),
    );
  });

  it("a draft commits too, added and deleted files listed without a previous path", async () => {
    const r = repo({ "old.txt": "old\n" });
    const { output } = await agentStep(
      input(r, { phase: "draft", output: "draft", agent: scripted("Drafted.", { "old.txt": null, "new.txt": "new and different\n" }) }),
    );
    expect(output.commit?.changedFiles).toStrictEqual([
      { path: "new.txt", status: "added" },
      { path: "old.txt", status: "deleted" },
    ]);
    expect(messageOf(r.dir, output.commit!.commit)).toBe("coder (coding): Drafted.");
  });
});

describe("an HTTP brain's files reply (server/runner/files-reply.ts)", () => {
  let stub: BrainStub;
  let reply = "";
  const prompts: string[] = [];
  beforeAll(async () => {
    // The stub's loopback host, allowed as an admin would (settings access.privateHosts).
    await allowAgents(db, { agentEnv: [KEY_ENV], privateHosts: [...STUB_PRIVATE_HOSTS] });
    stub = await startBrainStub((req, res) => {
      const body = JSON.parse(req.body) as { messages: Array<{ content: string }> };
      prompts.push(body.messages.at(-1)!.content);
      startEventStream(res);
      return writeStream(res, streamOf("openai", [reply]));
    });
  });
  afterAll(async () => {
    await stub?.close();
  });
  const brain = () => ({ kind: "openai", id: "brain-wfx", baseUrl: stub.url, model: "stub", rateLimit: { minIntervalMs: 0 } });
  const files = (entries: Record<string, string>, summary?: string) =>
    JSON.stringify({ files: Object.entries(entries).map(([path, content]) => ({ path, content })), ...(summary ? { summary } : {}) });

  it("in a build: told the format, its files written and committed with its summary, the server's secrets redacted from them", async () => {
    const r = repo({ "README.md": "# Project\n", "src/a.js": "old\n" });
    reply = files({ "src/a.js": "new\n", "src/deep/b.js": `const key = "${SECRET}";\n` }, "Rewrote a, added b");
    const { output } = await agentStep(input(r, { agent: brain() }));
    expect(prompts.at(-1)).toContain("How to write files: you cannot write them yourself.");
    expect(output.commit?.changedFiles).toStrictEqual([
      { path: "src/a.js", status: "modified" },
      { path: "src/deep/b.js", status: "added" },
    ]);
    expect(messageOf(r.dir, output.commit!.commit)).toBe("coder (coding): Rewrote a, added b");
    expect(gitIn(r.dir, "show", `${output.commit!.commit}:src/a.js`)).toBe("new");
    const b = gitIn(r.dir, "show", `${output.commit!.commit}:src/deep/b.js`);
    expect(b).not.toContain(SECRET);
    expect(b).toContain("[redacted NEXTAUTH_SECRET]");
    expect(await text(output.raw)).not.toContain(SECRET);
  });

  it("is shown the worktree it writes in: every tracked name, the text of the files it may write, never a link's target or a binary", async () => {
    const outside = fs.mkdtempSync(path.join(root, "secret-"));
    fs.writeFileSync(path.join(outside, "runner.env"), "RUNNER_ONLY=yes\n");
    const r = repo({ "README.md": "# Project\n", "src/sum.js": "module.exports = (a, b) => a - b;\n", "docs/guide.md": "How to.\n" });
    fs.symlinkSync(path.join(outside, "runner.env"), path.join(r.dir, "src/env.js"));
    fs.writeFileSync(path.join(r.dir, "src/logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
    gitIn(r.dir, "add", "-A");
    gitIn(r.dir, "commit", "-q", "-m", "more");
    const head = gitIn(r.dir, "rev-parse", "HEAD");
    reply = files({ "src/sum.js": "module.exports = (a, b) => a + b;\n" });
    await agentStep(
      input({ dir: r.dir, head }, { agent: { ...brain(), manifest: { allowedFiles: ["src/**"] } } as ReturnType<typeof brain> }),
    );
    const prompt = prompts.at(-1)!;
    expect(prompt).toMatch(/The repository's files \(5\):\n(.+\n){4}.+/);
    for (const name of ["README.md", "docs/guide.md", "src/env.js", "src/logo.png", "src/sum.js"]) expect(prompt).toContain(`${name}\n`);
    expect(prompt).toContain("--- src/sum.js ---\nmodule.exports = (a, b) => a - b;\n");
    // Outside what it may write (docs/), a link (whose target is the runner's), a binary: names only.
    expect(prompt).not.toContain("How to.");
    expect(prompt).not.toContain("RUNNER_ONLY");
    expect(prompt).not.toContain("--- src/logo.png ---");
  });

  it("a path through a symbolic link out of the worktree: invalid output, retried, nothing written outside, nothing committed", async () => {
    const outside = fs.mkdtempSync(path.join(root, "outside-"));
    const r = repo();
    fs.symlinkSync(outside, path.join(r.dir, "link"));
    gitIn(r.dir, "add", "link");
    gitIn(r.dir, "commit", "-q", "-m", "link");
    const head = gitIn(r.dir, "rev-parse", "HEAD");
    reply = files({ "link/evil.txt": "pwned\n" });
    const err = await failure(agentStep(input({ dir: r.dir, head }, { agent: brain() })));
    expect({ errorClass: err.errorClass, retryable: err.retryable }).toEqual({ errorClass: "schema_invalid", retryable: true });
    expect(err.message).toBe(
      'the files reply of brain-wfx is invalid: files.0.path: cannot write "link/evil.txt": refused path "link/evil.txt": it leaves the workspace (a "..", an absolute path, or a symbolic link out)',
    );
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(gitIn(r.dir, "log", "--format=%s", "--all")).toBe("link\nbase");
  });

  it("a directory where a file is to be written, and a reply that is not JSON: invalid output naming the problem", async () => {
    const r = repo({ "src/a.js": "a\n" });
    reply = files({ src: "not a directory\n" });
    expect((await failure(agentStep(input(r, { agent: brain() })))).message).toBe(
      'the files reply of brain-wfx is invalid: files.0.path: cannot write "src": a directory is there',
    );
    reply = "I changed src/a.js as asked.";
    const err = await failure(agentStep(input(r, { agent: brain() })));
    expect({ errorClass: err.errorClass, retryable: err.retryable }).toEqual({ errorClass: "schema_invalid", retryable: true });
    expect(err.message).toMatch(/^the files reply of brain-wfx is invalid: not valid JSON: /);
  });

  it("in a step that writes nothing: not told the format, its reply read as it is, nothing written", async () => {
    const r = repo();
    reply = files({ "notes.txt": "mine\n" });
    const { output } = await agentStep(input(r, { role: "reviewer", phase: "verdict", output: "review_verdict", agent: brain() }));
    expect(prompts.at(-1)).not.toContain("How to write files");
    expect(await text(output.raw)).toBe(reply);
    expect(output.commit).toBeUndefined();
    expect(gitIn(r.dir, "log", "--format=%s", "--all")).toBe("base");
  });
});

describe("what an agent is handed", () => {
  const staged = {
    kind: "scripted",
    id: "scripted-stages",
    responses: [{ reply: "no stage" }],
    byStage: { prd: [{ reply: "prd, iteration 1" }, { reply: "prd, iteration 2" }], prd_modify: [{ reply: "prd, modified" }] },
  };
  const forge = (over: Partial<NonNullable<StepInput["forge"]>> = {}) => forgeStepInput({ iteration: 2, writes: ["prd.md"], ...over });

  it("a staged step's stage and iteration", async () => {
    const { output } = await agentStep(input(repo(), { phase: "discussion", output: "text", agent: staged, forge: forge() }));
    expect(output.preview).toBe("prd, iteration 2");
    // A staged step commits like a build, whatever its phase.
    expect(output.commit?.empty).toBe(false);
  });

  it("a modify session's stage, marked as modifying", async () => {
    const { output } = await agentStep(
      input(repo(), { phase: "discussion", output: "text", agent: staged, forge: forge({ iteration: 1, modifying: true }) }),
    );
    expect(output.preview).toBe("prd, modified");
  });

  it("the task's MCP servers (an agent CLI is told of them on its command line)", async () => {
    const { output } = await agentStep(
      input(repo(), {
        phase: "verdict",
        output: "review_verdict",
        agent: claude({ argsResult: true }),
        mcpServers: [{ name: "docs", command: "docs-server" }],
      }),
    );
    expect(output.preview).toContain(" --allowedTools mcp__docs --mcp-config ");
  });

  it("the change since the task began, in a reviewer's prompt, cut at 200,000 characters", async () => {
    const r = repo();
    fs.writeFileSync(path.join(r.dir, "big.txt"), `${"0123456789".repeat(25_000)}\n`);
    gitIn(r.dir, "add", "-A");
    gitIn(r.dir, "commit", "-q", "-m", "big");
    const head = gitIn(r.dir, "rev-parse", "HEAD");
    const { output } = await agentStep(
      reviewer(r, {
        prompt: "Review.",
        workspace: { repoPath: r.dir, baseCommit: r.head, head },
        diff: await putBlob(db.pool, "the diff as recorded (the runner computes its own)"),
      }),
    );
    const prompt = await text(output.raw);
    const heading = "Review.\n\nThe change under review (git diff):\n";
    expect(prompt.startsWith(`${heading}diff --git a/big.txt b/big.txt\n`)).toBe(true);
    expect(prompt.endsWith("\n[diff truncated]")).toBe(true);
    expect(prompt.length).toBe(heading.length + 200_000 + "\n[diff truncated]".length);
  });

  it("with the build's message in the thread, the diff goes right after it (the next call repeats it there), not after the instruction", async () => {
    const r = repo();
    fs.writeFileSync(path.join(r.dir, "a.txt"), "a\n");
    gitIn(r.dir, "add", "-A");
    gitIn(r.dir, "commit", "-q", "-m", "a");
    const head = gitIn(r.dir, "rev-parse", "HEAD");
    const context = [
      { from: "reviewer" as const, text: "Looks right." },
      { from: "coder" as const, text: "Built it." },
      { from: "operator" as const, text: "Go on." },
    ];
    const step = async (agent: StepInput["agent"]) => {
      const { output } = await agentStep(
        reviewer(r, {
          prompt: "Review.",
          context,
          agent,
          workspace: { repoPath: r.dir, baseCommit: r.head, head },
          diff: await putBlob(db.pool, "the diff as recorded"),
          diffAfterMessage: 1,
        }),
      );
      return text(output.raw);
    };
    // An agent CLI reads the thread: the diff follows the build's message.
    const cli = await step(claude({ stdinResult: true }));
    const built = cli.indexOf("[coder]\nBuilt it.\n\nThe change under review (git diff):\ndiff --git a/a.txt b/a.txt\n");
    expect(built).toBeGreaterThan(0);
    expect(cli.indexOf("[operator]\nGo on.")).toBeGreaterThan(built);
    expect(cli.endsWith("Your task now, as the reviewer; what [reviewer] said above is yours:\n\nReview.")).toBe(true);
    expect(cli.match(/The change under review/g)).toHaveLength(1);
    // A command is not shown the thread: the diff stays in its prompt, after the instruction.
    expect(await step({ kind: "command", id: "echo-wfx", argv: ["node", echo] })).toMatch(
      /^Review\.\n\nThe change under review \(git diff\):\ndiff --git a\/a\.txt b\/a\.txt\n/,
    );
  });

  it("no diff section in a prompt when the step has no diff", async () => {
    const { output } = await agentStep(reviewer(repo(), { prompt: "Discuss." }));
    expect(await text(output.raw)).toBe("Discuss.");
  });

  it("a diff of exactly 200,000 characters, whole and unmarked", async () => {
    const r = repo();
    /** The change base → HEAD as the runner's diff shows it (server/workspaces/changes.ts's options). */
    const diff = () =>
      execFileSync(
        "git",
        [
          "diff",
          "--no-color",
          "--no-ext-diff",
          "--no-textconv",
          "--find-renames",
          "--src-prefix=a/",
          "--dst-prefix=b/",
          r.head,
          "HEAD",
          "--",
        ],
        { cwd: r.dir, encoding: "utf8" },
      );
    const commitLine = (n: number) => {
      gitIn(r.dir, "reset", "-q", "--hard", r.head);
      fs.writeFileSync(path.join(r.dir, "big.txt"), `${"x".repeat(n)}\n`);
      gitIn(r.dir, "add", "-A");
      gitIn(r.dir, "commit", "-q", "-m", "big");
    };
    commitLine(199_000);
    commitLine(199_000 + 200_000 - diff().length);
    expect(diff().length).toBe(200_000);
    const { output } = await agentStep(
      reviewer(r, {
        prompt: "Review.",
        workspace: { repoPath: r.dir, baseCommit: r.head, head: gitIn(r.dir, "rev-parse", "HEAD") },
        diff: await putBlob(db.pool, "the diff as recorded"),
      }),
    );
    expect(await text(output.raw)).toBe(`Review.\n\nThe change under review (git diff):\n${diff()}`);
  });
});

describe("the session's workspace on a later step", () => {
  it("is clean as a step ends: what its agent left uncommitted is gone at once", async () => {
    const r = repo();
    const sessionId = await newSession();
    // A discussion step's agent leaves a file behind (nothing is committed for it).
    await agentStep(input(r, { phase: "discussion", output: "text", agent: scripted("Talked.", { "stray.txt": "left\n" }) }), sessionId);
    expect(fs.existsSync(path.join(workspacesRoot, sessionId, "stray.txt"))).toBe(false);
  });

  it("is reset to the step's head by a runner that did not leave it clean: what is in it is gone before the agent starts", async () => {
    const r = repo();
    const sessionId = await newSession();
    await agentStep(input(r, { phase: "discussion", output: "text", agent: scripted("Talked.") }), sessionId);
    // What a step stopped before its end left (each agentStep is a runner of its own).
    fs.writeFileSync(path.join(workspacesRoot, sessionId, "stray.txt"), "left\n");
    const { output } = await agentStep(input(r, { agent: scripted("Built.", { "built.txt": "built\n" }) }), sessionId);
    expect(output.commit?.changedFiles).toStrictEqual([{ path: "built.txt", status: "added" }]);
  });
});

describe("the session's workspace, prepared by one runner for step after step", () => {
  // One registry for all the steps, as in a runner process: what it learned of its clone (and
  // the worktree's own files) stands in for git's answers (docs/scaling.md, "First output and
  // live paint"); whatever an agent left is still gone, and a clone gone is still noticed.
  const lookAround = (r: { dir: string; head: string }, head = r.head) =>
    input(r, {
      phase: "discussion",
      output: "text",
      agent: {
        kind: "command",
        id: "look-wfx",
        argv: ["sh", "-c", "cat > /dev/null; ls -A; git status --porcelain --untracked-files=all"],
      },
      workspace: { repoPath: r.dir, baseCommit: r.head, head },
    });

  it("at the same head: a modified, a deleted and an untracked file, an empty directory an agent left are gone before the next agent starts", async () => {
    const r = repo({ "README.md": "# Project\n", "src/keep.txt": "kept\n" });
    const sessionId = await newSession();
    const kinds = executors();
    const run = async (stepInput: StepInput) => (await kinds.agent!(await held(stepInput, "agent", sessionId), live())) as AgentStepOutput;
    const messy = {
      kind: "command",
      id: "messy-wfx",
      argv: ["sh", "-c", "cat > /dev/null; echo changed > README.md; rm src/keep.txt; mkdir -p empty/deeper; echo left > stray.txt"],
    };
    await run(input(r, { phase: "discussion", output: "text", agent: messy }));
    const ws = path.join(workspacesRoot, sessionId);
    expect(gitIn(ws, "rev-parse", "HEAD")).toBe(r.head);

    const seen = await text((await run(lookAround(r))).raw);
    expect(seen).toBe(".git\nREADME.md\nsrc\n");
    expect(fs.readFileSync(path.join(ws, "README.md"), "utf8")).toBe("# Project\n");
    expect(fs.readFileSync(path.join(ws, "src/keep.txt"), "utf8")).toBe("kept\n");
  });

  it("reset as each step ends, it is taken as it is by the runner's next step: no git process before the agent; another runner resets it first", async () => {
    const r = repo();
    const sessionId = await newSession();
    const kinds = executors();
    const talk = () => input(r, { phase: "discussion", output: "text", agent: scripted("Talked.") });
    /** The executables a step started, in order (a scripted brain starts none of its own). */
    const started = async (k: ReturnType<typeof executors>) => {
      const files: string[] = [];
      const step = await held(talk(), "agent", sessionId);
      await observeProcesses({ spawned: (p) => files.push(path.basename(p.file)), exited: () => {} }, () => k.agent!(step, live()));
      return files;
    };
    await kinds.agent!(await held(talk(), "agent", sessionId), live());
    // The same runner: only the reset as the step ends (git's two commands in one `sh`).
    expect(await started(kinds)).toStrictEqual(["sh"]);
    expect(await started(kinds)).toStrictEqual(["sh"]);
    // Another runner process (which asks git once whether the clone is one): a reset first.
    expect(await started(executors())).toStrictEqual(["git", "sh", "sh"]);
  });

  it("at a head the workspace is not at (a commit made in the clone since): moved there, what was left gone", async () => {
    const r = repo();
    const sessionId = await newSession();
    const kinds = executors();
    const run = async (stepInput: StepInput) => (await kinds.agent!(await held(stepInput, "agent", sessionId), live())) as AgentStepOutput;
    await run(input(r, { phase: "discussion", output: "text", agent: scripted("Talked.", { "stray.txt": "left\n" }) }));
    fs.writeFileSync(path.join(r.dir, "next.txt"), "next\n");
    gitIn(r.dir, "add", "next.txt");
    gitIn(r.dir, "commit", "-q", "-m", "next");
    const next = gitIn(r.dir, "rev-parse", "HEAD");

    expect(await text((await run(lookAround(r, next))).raw)).toBe(".git\nREADME.md\nnext.txt\n");
    expect(gitIn(path.join(workspacesRoot, sessionId), "rev-parse", "HEAD")).toBe(next);
  });

  it("a clone deleted after its first step: the next step is not runnable here, naming it; a new clone at the same path is used again", async () => {
    const r = repo();
    const sessionId = await newSession();
    const kinds = executors();
    await kinds.agent!(await held(input(r, { phase: "discussion", output: "text" }), "agent", sessionId), live());
    const kept = `${r.dir}-kept`;
    fs.renameSync(r.dir, kept);

    const err = await kinds.agent!(await held(input(r, { phase: "discussion", output: "text" }), "agent", sessionId), live()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StepNotRunnableHere);
    expect((err as StepNotRunnableHere).missing).toBe(`no clone at ${r.dir}`);

    // Not a clone at all in its place: still said, git asked again.
    fs.mkdirSync(r.dir);
    const notRepo = await kinds.agent!(await held(input(r, { phase: "discussion", output: "text" }), "agent", sessionId), live()).then(
      () => null,
      (e: unknown) => e,
    );
    expect((notRepo as StepNotRunnableHere).missing).toBe(`${r.dir} is not the top of a git repository`);

    fs.rmdirSync(r.dir);
    fs.renameSync(kept, r.dir);
    const built = input(r, { agent: scripted("Built.", { "built.txt": "built\n" }) });
    const output = (await kinds.agent!(await held(built, "agent", sessionId), live())) as AgentStepOutput;
    expect(output.commit?.changedFiles).toStrictEqual([{ path: "built.txt", status: "added" }]);
  });
});

describe("a reset that fails on a later step", () => {
  // The worktree is put back at the step's head before any agent runs in it (a command in its
  // sandbox, or the scripted brain writing files) unless the runner left it clean and nothing
  // touched it since: a lock on its index is such a touch. When the reset fails, the step fails
  // with the reason, and nothing of the agent runs; what was in the worktree is still there.
  it("the worktree's index locked: the step fails with git's reason; neither a command nor the scripted brain ran", async () => {
    const r = repo();
    const sessionId = await newSession();
    const kinds = executors();
    const run = async (stepInput: StepInput) => kinds.agent!(await held(stepInput, "agent", sessionId), live());
    await run(input(r, { phase: "discussion", output: "text", agent: scripted("Talked.") }));
    const ws = path.join(workspacesRoot, sessionId);
    fs.writeFileSync(path.join(ws, "stray.txt"), "left\n");
    fs.writeFileSync(path.join(gitIn(ws, "rev-parse", "--absolute-git-dir"), "index.lock"), "");
    const touches = { kind: "command", id: "touch-wfx", argv: ["sh", "-c", "touch ran.txt"] };
    const writes = scripted("Wrote.", { "ran.txt": "ran\n" });
    for (const agent of [touches, writes]) {
      const err = await run(input(r, { phase: "discussion", output: "text", agent })).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, agent.id).toBeInstanceOf(Error);
      expect((err as Error).message, agent.id).toMatch(/index\.lock/);
      expect(fs.existsSync(path.join(ws, "ran.txt")), agent.id).toBe(false);
      expect(fs.readFileSync(path.join(ws, "stray.txt"), "utf8")).toBe("left\n");
    }
  });
});

describe("the access rules, read beside the workspace's preparation", () => {
  // Both are settled before either error is thrown, in the order they were thrown when one
  // ran after the other: a refusal first, then what the workspace lacks.
  const refused = (r: { dir: string; head: string }) =>
    input(r, { agent: claude({ lines: [result("Never.")] }, { apiKeyEnv: "CATCAFE_TEST_WFX_NOT_ALLOWED_KEY" }) });

  it("a variable the rules refuse fails the step, not retried, naming it; even where the clone is missing too", async () => {
    const r = repo();
    const err = await failure(executors().agent!(await held(refused(r)), live()));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/CATCAFE_TEST_WFX_NOT_ALLOWED_KEY/);

    const gone = { dir: path.join(root, "no-such-clone"), head: r.head };
    const both = await failure(executors().agent!(await held(refused(gone)), live()));
    expect(both.message).toMatch(/CATCAFE_TEST_WFX_NOT_ALLOWED_KEY/);
    const onlyClone = await executors().agent!(await held(input(gone)), live()).then(
      () => null,
      (e: unknown) => e,
    );
    expect((onlyClone as StepNotRunnableHere).missing).toBe(`no clone at ${gone.dir}`);
  });
});

describe("what an agent step records while it runs", () => {
  it("each retry an agent CLI makes of its provider request, in order, as ProviderRetried by the agent", async () => {
    const retry = (attempt: number, delay: number) => ({
      type: "system",
      subtype: "api_retry",
      error_status: 529,
      error: "overloaded",
      attempt,
      max_retries: 2,
      retry_delay_ms: delay,
    });
    const { step, output } = await agentStep(
      input(repo(), {
        phase: "verdict",
        output: "review_verdict",
        agent: claude({ lines: [retry(1, 1500), retry(2, 3000), result("Fine.")] }, { providerRetries: 2 }),
      }),
    );
    expect(output.preview).toBe("Fine.");
    const events = (await db.store.readStream(step.sessionId)).filter((e) => e.type === "ProviderRetried");
    const data = { stepId: step.id, attempt: 1, agent: "claude-wfx", maxRetries: 2, error: "overloaded (HTTP 529)" };
    expect(events.map((e) => e.data)).toEqual([
      { ...data, retry: 1, delayMs: 1500 },
      { ...data, retry: 2, delayMs: 3000 },
    ]);
    expect(events.map((e) => e.metadata.actor)).toEqual([
      { kind: "agent", id: "claude-wfx" },
      { kind: "agent", id: "claude-wfx" },
    ]);
  });

  it("everything streamed is recorded before the step's result: once the result is in, the whole reply is in the session's streamed output", async () => {
    const reply = "Streamed in a few chunks, then recorded whole.";
    const { step, output } = await agentStep(input(repo(), { phase: "verdict", output: "review_verdict", agent: scripted(reply) }));
    // As the runner does at once: the attempt stops holding the step, and later appends are refused.
    expect(await recordStepOutcome(db.store, step, { kind: "completed", output }, { kind: "runner", id: "wfx" })).toBe(true);
    const streamed = ofType<{ text: string }>(await db.store.readStream(step.sessionId), "AgentOutputStreamed");
    expect(streamed.map((d) => d.text).join("")).toBe(reply);
  });

  it("a retry that cannot be recorded is logged, and the step goes on", async () => {
    const warn = vi.spyOn(logger, "warn").mockImplementation(() => undefined);
    try {
      // A negative delay is refused by ProviderRetried's schema.
      const retry = { type: "system", subtype: "api_retry", error: "overloaded", attempt: 1, max_retries: 1, retry_delay_ms: -5 };
      const { step, output } = await agentStep(
        input(repo(), { phase: "verdict", output: "review_verdict", agent: claude({ lines: [retry, result("Fine anyway.")] }) }),
      );
      expect(output.preview).toBe("Fine anyway.");
      expect(ofType(await db.store.readStream(step.sessionId), "ProviderRetried")).toEqual([]);
      expect(warn.mock.calls.filter((c) => c[1] === "could not record a provider retry")).toEqual([
        [{ err: expect.stringContaining("delayMs"), stepId: step.id }, "could not record a provider retry"],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it("a wait for the agent's turn under its provider's shared rate limit, as RateLimitWaited", async () => {
    const id = "claude-limited";
    // Its last run ended a moment ago: the next may start 2 s from now (far enough that the
    // step's own preparation on a loaded machine does not outlast the wait).
    await db.pool.query(
      "INSERT INTO brain_rate_limits (brain_id, base_url, next_allowed_at, updated_at) VALUES ($1, 'claude', clock_timestamp() + interval '2 seconds', clock_timestamp())",
      [id],
    );
    const { step, output } = await agentStep(
      input(repo(), {
        phase: "verdict",
        output: "review_verdict",
        agent: claude({ lines: [result("Waited.")] }, { id, rateLimit: { minIntervalMs: 250 } }),
      }),
    );
    expect(output.preview).toBe("Waited.");
    const events = (await db.store.readStream(step.sessionId)).filter((e) => e.type === "RateLimitWaited");
    expect(events.map((e) => e.data)).toEqual([{ stepId: step.id, attempt: 1, brain: id, minIntervalMs: 250, waitMs: expect.any(Number) }]);
    expect((events[0]!.data as { waitMs: number }).waitMs).toBeGreaterThan(0);
    expect(events[0]!.metadata.actor).toEqual({ kind: "agent", id });
  });
});

describe("a build that cannot be committed", () => {
  it("because another attempt took the workspace over meanwhile fails to be retried, nothing committed", async () => {
    const r = repo();
    const step = await held(input(r, { agent: claude({ rendezvous: true, files: { "work.txt": "mine\n" }, lines: [result("Done.")] }) }));
    const running = executors().agent!(step, live());
    const workspace = path.join(workspacesRoot, step.sessionId);
    await vi.waitFor(() => expect(fs.existsSync(path.join(workspace, "started"))).toBe(true), { timeout: 30_000, interval: 20 });
    await claimWorkspace(workspace, "another-attempt:2");
    fs.writeFileSync(path.join(workspace, "go"), "");
    const err = await failure(running);
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "internal_error",
      retryable: true,
      message: `the workspace ${fs.realpathSync(workspace)} is now worked on by another-attempt:2, not ${step.id}:1: nothing committed`,
    });
    expect(gitIn(r.dir, "log", "--format=%s", "--all")).toBe("base");
  });

  it("a build whose one tool call failed and that changed nothing is a tool error, not retried", async () => {
    const plan = { lines: [toolResult("ls: cannot access 'x': No such file or directory", true), result("Could not.")] };
    const err = await failure(agentStep(input(repo(), { agent: claude(plan) })));
    expect({ errorClass: err.errorClass, retryable: err.retryable, message: err.message }).toEqual({
      errorClass: "tool_error",
      retryable: false,
      message: "all 1 tool call of claude-wfx failed and nothing changed; the last: ls: cannot access 'x': No such file or directory",
    });
  });

  it("so is one whose every tool call failed (named in the plural, the last error given)", async () => {
    const plan = { lines: [toolResult("denied: first", true), toolResult("denied: second", true), result("Could not.")] };
    const err = await failure(agentStep(input(repo(), { agent: claude(plan) })));
    expect(err.message).toBe("all 2 tool calls of claude-wfx failed and nothing changed; the last: denied: second");
  });

  it("but a build whose every tool call failed and that changed files completes with its commit", async () => {
    const plan = { files: { "done.txt": "done\n" }, lines: [toolResult("denied", true), result("Wrote it myself.")] };
    const { output } = await agentStep(input(repo(), { agent: claude(plan) }));
    expect(output.tools).toStrictEqual({ calls: 1, failed: 1 });
    expect(output.commit?.changedFiles).toStrictEqual([{ path: "done.txt", status: "added" }]);
  });

  it("but a build that changed nothing with one tool call of two failing completes, its commit empty", async () => {
    const r = repo();
    const plan = { lines: [toolResult("fine", false), toolResult("denied", true), result("Nothing to do.")] };
    const { output } = await agentStep(input(r, { agent: claude(plan) }));
    expect(output.tools).toStrictEqual({ calls: 2, failed: 1 });
    expect(output.commit).toStrictEqual({
      commit: r.head,
      parent: r.head,
      empty: true,
      changedFiles: [],
      diff: { blob: expect.any(String), size: 0, mediaType: "text/x-diff; charset=utf-8" },
    });
  });
});

describe("a commands step's results", () => {
  const STDOUT = `${"a".repeat(1_000)}${"b".repeat(3_000)}${SECRET} ${SECRET}`;
  const STDERR = `${"c".repeat(5_000)}${SECRET}`;
  const scripts = {
    "exit.js": "process.exit(Number(process.argv[2]));\n",
    "print.js": `process.stdout.write(${JSON.stringify(STDOUT)});\nprocess.stderr.write(${JSON.stringify(STDERR)});\n`,
    "signal.js": 'process.kill(process.pid, "SIGKILL");\n',
    "hang.js": "setInterval(() => {}, 1000);\n",
    "trap.js": 'process.on("SIGTERM", () => process.exit(0));\nsetInterval(() => {}, 1000);\n',
  };
  const plan = (r: { dir: string; head: string }, commands: StepInput["commands"], over: Partial<StepInput> = {}) =>
    input(r, {
      role: "tester",
      phase: "test",
      output: "commands",
      agent: null,
      commands,
      allowlist: [["node", "**"]],
      ...over,
    });
  const ran = {
    status: "ran",
    durationMs: expect.any(Number),
    stdoutTail: "",
    stderrTail: "",
    sandboxed: sandboxStatus().available,
  };

  it("an exit code as expected passes, even when it is not 0; another fails with both codes named, 0 among them", async () => {
    const out = await commandsStep(
      plan(repo(scripts), [
        { argv: ["node", "exit.js", "1"], expect: { exitCode: 1 } },
        { argv: ["node", "exit.js", "1"], expect: { exitCode: 0 } },
        { argv: ["node", "exit.js", "0"], expect: { exitCode: 0 } },
        { argv: ["node", "exit.js", "0"], expect: { exitCode: 1 } },
      ]),
    );
    expect(out).toStrictEqual({
      kind: "commands",
      results: [
        { ...ran, argv: ["node", "exit.js", "1"], exitCode: 1, expectedExitCode: 1, errorClass: null, reason: null },
        {
          ...ran,
          argv: ["node", "exit.js", "1"],
          exitCode: 1,
          expectedExitCode: 0,
          errorClass: "command_failed",
          reason: "exited with code 1, expected 0",
        },
        { ...ran, argv: ["node", "exit.js", "0"], exitCode: 0, expectedExitCode: 0, errorClass: null, reason: null },
        {
          ...ran,
          argv: ["node", "exit.js", "0"],
          exitCode: 0,
          expectedExitCode: 1,
          errorClass: "command_failed",
          reason: "exited with code 0, expected 1",
        },
      ],
    });
    for (const r of out.results) expect(Number.isInteger(r.durationMs)).toBe(true);
  });

  it("a command refused by the allowlist is recorded as refused, never run, and the next one runs", async () => {
    const out = await commandsStep(
      plan(repo(scripts), [
        { argv: ["rm", "-rf", "."], expect: { exitCode: 0 } },
        { argv: ["node", "exit.js", "0"], expect: { exitCode: 0 } },
      ]),
    );
    expect(out.results[0]).toStrictEqual({
      argv: ["rm", "-rf", "."],
      status: "refused",
      exitCode: null,
      expectedExitCode: 0,
      durationMs: 0,
      stdoutTail: "",
      stderrTail: "",
      errorClass: "command_refused",
      reason: "`rm -rf .` is not on the project's allowlist; no rule starts with `rm` (allowed programs: node)",
    });
    expect(out.results[1]).toMatchObject({ status: "ran", exitCode: 0, errorClass: null });
  });

  it("a command killed by a signal, and one that times out, fail with the reason of each", async () => {
    const out = await commandsStep(
      plan(
        repo(scripts),
        [
          { argv: ["node", "signal.js"], expect: { exitCode: 0 } },
          { argv: ["node", "hang.js"], expect: { exitCode: 0 } },
        ],
        { commandTimeoutMs: 1_000 },
      ),
    );
    expect(out.results).toStrictEqual([
      {
        ...ran,
        argv: ["node", "signal.js"],
        exitCode: null,
        expectedExitCode: 0,
        errorClass: "command_failed",
        reason: "killed by SIGKILL",
      },
      { ...ran, argv: ["node", "hang.js"], exitCode: null, expectedExitCode: 0, errorClass: "timeout", reason: "timed out after 1000 ms" },
    ]);
  });

  it("a command that exits 0 when it is stopped for its timeout still timed out, its reason not its exit code", async () => {
    // Outside the sandbox, where the command itself receives SIGTERM (bubblewrap dies of it);
    // the five seconds are for node to start and set its handler.
    const sandbox = process.env.CATCAFE_SANDBOX;
    process.env.CATCAFE_SANDBOX = "off";
    try {
      const out = await commandsStep(
        plan(repo(scripts), [{ argv: ["node", "trap.js"], expect: { exitCode: 0 } }], { commandTimeoutMs: 5_000 }),
      );
      expect(out.results).toStrictEqual([
        {
          ...ran,
          argv: ["node", "trap.js"],
          exitCode: 0,
          expectedExitCode: 0,
          errorClass: "timeout",
          reason: "timed out after 5000 ms",
          sandboxed: false,
        },
      ]);
    } finally {
      if (sandbox === undefined) delete process.env.CATCAFE_SANDBOX;
      else process.env.CATCAFE_SANDBOX = sandbox;
    }
  });

  it("the tails of stdout and stderr: their last 4,000 characters, the server's secrets in them replaced and counted over both", async () => {
    const out = await commandsStep(plan(repo(scripts), [{ argv: ["node", "print.js"], expect: { exitCode: 0 } }]));
    const redacted = (s: string) => s.replaceAll(SECRET, "[redacted NEXTAUTH_SECRET]");
    expect(out.results).toStrictEqual([
      {
        ...ran,
        argv: ["node", "print.js"],
        exitCode: 0,
        expectedExitCode: 0,
        stdoutTail: redacted(STDOUT.slice(-4_000)),
        stderrTail: redacted(STDERR.slice(-4_000)),
        redactions: 3,
        errorClass: null,
        reason: null,
      },
    ]);
  });

  it("a step whose signal is aborted throws the signal's reason instead of recording a result", async () => {
    const step = await held(plan(repo(scripts), [{ argv: ["node", "exit.js", "0"], expect: { exitCode: 0 } }]), "commands");
    const controller = new AbortController();
    const reason = new Error("the step's lease was lost");
    controller.abort(reason);
    await expect(executors().commands!(step, { signal: controller.signal })).rejects.toBe(reason);
  });
});

describe("the workflow step kinds' reactions", () => {
  /** The kinds with a reactor that records what it is given and answers with `appended`. */
  function kindsWith(appended: Array<{ type: string }>) {
    const calls: string[] = [];
    const kinds = workflowStepKinds({
      pool: db.pool,
      store: db.store,
      workspacesRoot: tempDir("wfx-react"),
      reactor: {
        reactToStepOutcome: async (_tx, _store, sessionId, recorded) => {
          calls.push(`react ${sessionId} ${recorded.map((e) => e.type).join(",")}`);
          return appended as never;
        },
        reactToReactionFailure: async (_tx, _store, sessionId, recorded, message) => {
          calls.push(`fallback ${sessionId} ${recorded.map((e) => e.type).join(",")} ${message}`);
        },
      },
      onSessionFinalized: async (_tx, _store, sessionId) => void calls.push(`finalized ${sessionId}`),
    });
    return { calls, agent: kinds.find((k) => k.kind === "agent")! };
  }
  const failed = {
    type: "StepFailed",
    data: { stepId: "st-1", attempt: 1, errorClass: "timeout", message: "too slow", retryAt: null },
  } as never;

  it("the outcome goes to the workflow's reactor; a session it finalizes is handed on (delivery), any other is not", async () => {
    const r = repo();
    const step = { kind: "agent", input: input(r) };
    const tx = {} as never;
    const ended = kindsWith([{ type: "StepScheduled" }, { type: "SessionFinalized" }]);
    await ended.agent.react(tx, db.store, "s-1", failed, step);
    expect(ended.calls).toEqual(["react s-1 StepFailed", "finalized s-1"]);
    const going = kindsWith([{ type: "StepScheduled" }]);
    await going.agent.react(tx, db.store, "s-2", failed, step);
    expect(going.calls).toEqual(["react s-2 StepFailed"]);
  });

  it("when reacting failed, the fallback gets the outcome and the message", async () => {
    const r = repo();
    const { calls, agent } = kindsWith([]);
    await agent.onReactFailure({} as never, db.store, "s-3", failed, { kind: "agent", input: input(r) }, "the reaction broke");
    expect(calls).toEqual(["fallback s-3 StepFailed the reaction broke"]);
  });
});
