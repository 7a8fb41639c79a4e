// The operations behind the CLI (their domain functions through the `ops` router), on a real database:
// `go` picks the role, workflow and mode from the target agent and refuses an agent the run
// would not use; `validateConfig` checks uploaded `.catcafe/` files; `checkBrains` reports
// scripted brains without calling anything; `rebuildProjections` reports no drift.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Role } from "../../lib/roles";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, makeSumRepo, tempDir, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
const users = {} as Record<Role, CurrentUser>;
const roundtable = { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }] };

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  for (const role of ["operator", "admin"] as const) users[role] = await api.user(role);
});

/** A repository whose committed `.catcafe/` has two coders: coder-a outranks coder-b. */
function repoWithTwoCoders(): string {
  const repo = makeSumRepo(tempDir("catcafe-ops-"));
  fs.mkdirSync(path.join(repo, ".catcafe"));
  fs.writeFileSync(
    path.join(repo, ".catcafe", "agents.json"),
    JSON.stringify({
      agents: [
        { id: "coder-a", role: "coder", defaultBrain: "sim", priority: 5 },
        { id: "coder-b", role: "coder", defaultBrain: "sim", priority: 1 },
      ],
    }),
  );
  fs.writeFileSync(
    path.join(repo, ".catcafe", "brains.json"),
    JSON.stringify({ brains: { sim: { provider: "scripted", responses: [{ reply: "ok" }] } } }),
  );
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
      cwd: repo,
      stdio: "ignore",
    });
  git("add", ".catcafe");
  git("commit", "-qm", "agents");
  return repo;
}

describe("ops.go", () => {
  it("runs the workflow of the target agent's role, named by agent id or by role", async () => {
    const projectId = await h.project(`go-${Date.now()}`, roundtable);
    const operator = api.caller(users.operator);
    const byId = await operator.ops.go({ projectId, agent: "coder-sim", prompt: "Fix sum()" });
    expect(byId).toMatchObject({ role: "coder", agentId: "coder-sim", workflow: "review_loop", mode: "proposal" });
    expect(await operator.tasks.get({ sessionId: byId.sessionId })).toMatchObject({
      status: "active",
      workflow: "review_loop",
      mode: "proposal",
      prompt: "Fix sum()",
    });
    expect(await operator.ops.go({ projectId, agent: "reviewer", prompt: "Fix sum()", mode: "implementation" })).toMatchObject({
      role: "reviewer",
      agentId: "reviewer-sim",
      mode: "implementation",
    });
  });

  it("a planner runs planning, in its only mode", async () => {
    const projectId = await h.project(`go-plan-${Date.now()}`, {
      planner: [{ reply: "{}" }],
      executor: [{ reply: "x" }],
      tester: [{ reply: "t" }],
    });
    expect(await api.caller(users.operator).ops.go({ projectId, agent: "planner", prompt: "An epic" })).toMatchObject({
      role: "planner",
      workflow: "planning",
      mode: "implementation",
    });
  });

  it("refuses an unknown agent, a workflow without the agent's role, and an agent the run would not bind", async () => {
    const projectId = await h.project(`go-bad-${Date.now()}`, roundtable);
    const operator = api.caller(users.operator);
    await expect(operator.ops.go({ projectId, agent: "nobody", prompt: "x" })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("coder-sim, reviewer-sim, tester-sim"),
    });
    await expect(operator.ops.go({ projectId, agent: "coder-sim", prompt: "x", workflow: "planning" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("no step for a coder"),
    });
    await expect(operator.ops.go({ projectId, agent: "planner", prompt: "x" })).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });

    const configured = await h.project(`go-cfg-${Date.now()}`, roundtable, { repoPath: repoWithTwoCoders() });
    expect(await operator.ops.go({ projectId: configured, agent: "coder-a", prompt: "x" })).toMatchObject({
      agentId: "coder-a",
      role: "coder",
    });
    // A lower-priority agent named by id plays its role in that run (the others keep theirs).
    const chosen = await operator.ops.go({ projectId: configured, agent: "coder-b", prompt: "x" });
    expect(chosen).toMatchObject({ agentId: "coder-b", role: "coder" });
    const started = (await db.store.readStream(chosen.sessionId)).find((e) => e.type === "TaskStarted")!;
    expect((started.data as { agents: Record<string, { id: string }> }).agents.coder!.id).toBe("coder-b");
    const context = (await db.store.readStream(chosen.sessionId)).find((e) => e.type === "RuntimeContextRecorded")!;
    expect((context.data as { roles: Record<string, { agentId: string }> }).roles.coder).toMatchObject({ agentId: "coder-b" });
    // The next run without a choice goes back to the highest priority.
    const plain = await operator.tasks.start({ projectId: configured, prompt: "x", mode: "proposal" });
    const plainStart = (await db.store.readStream(plain.sessionId)).find((e) => e.type === "TaskStarted")!;
    expect((plainStart.data as { agents: Record<string, { id: string }> }).agents.coder!.id).toBe("coder-a");
  });
});

describe("ops.validateConfig, ops.checkBrains, ops.rebuildProjections", () => {
  it("validates uploaded files and a project's working tree", async () => {
    const operator = api.caller(users.operator);
    const ok = await operator.ops.validateConfig({
      files: {
        "agents.json": JSON.stringify({ agents: [{ id: "c", role: "coder", defaultBrain: "sim" }] }),
        "brains.json": JSON.stringify({ brains: { sim: { provider: "scripted", responses: [{ reply: "ok" }] } } }),
      },
    });
    expect(ok).toMatchObject({ ok: true, found: true, errors: [] });
    const bad = await operator.ops.validateConfig({ files: { "agents.json": "{ not json" } });
    expect(bad.ok).toBe(false);
    expect(bad.errors[0]).toMatch(/^\.catcafe\/agents\.json: /);
    await expect(operator.ops.validateConfig({ files: { "../agents.json": "{}" } })).rejects.toMatchObject({ code: "BAD_REQUEST" });

    const projectId = await h.project(`cfg-${Date.now()}`, roundtable);
    expect(await operator.ops.validateConfig({ projectId })).toMatchObject({ ok: true, found: false });
  });

  it("checks the brains of a project (scripted ones need no call) and names unknown ones", async () => {
    const projectId = await h.project(`brains-${Date.now()}`, roundtable);
    const admin = api.caller(users.admin);
    const results = await admin.ops.checkBrains({ projectId });
    expect(results.map((r) => [r.brain, r.provider, r.ok]).sort()).toEqual([
      ["role:coder", "scripted", true],
      ["role:reviewer", "scripted", true],
      ["role:tester", "scripted", true],
    ]);
    await expect(admin.ops.checkBrains({ projectId, brains: ["gpt-9"] })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("rebuilds the read models from the log and finds nothing changed", async () => {
    const report = await api.caller(users.admin).ops.rebuildProjections();
    expect(report.tables).toEqual(expect.arrayContaining(["sessions"]));
    expect(report.changedTables).toEqual([]);
    expect(report.events).toBeGreaterThan(0);
  });
});
