// Configuration edited by admins (docs/configuration.md): a project's record and the server's settings
// overrides are saved with the schemas the files use, each save a ConfigChanged event with
// its actor, revertible; what is in force says where each value comes from, and a task
// started afterwards runs with it.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { isAppError } from "../../server/errors";
import {
  configHistory,
  configureProject,
  configureServer,
  effectiveSettings,
  projectConfigStream,
  registerProject,
  revertChange,
  SERVER_CONFIG_STREAM,
  serverOverride,
} from "../../server/projects/config-edits";
import { getProject, type TProjectInput } from "../../server/projects/projects";
import { loadSettings } from "../../server/config/settings";
import { startTask } from "../../server/tasks/commands";
import { createApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, reviewApprove, tempDir, testPlan, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
const admin = { kind: "user" as const, id: "admin-1" };
const other = { kind: "user" as const, id: "admin-2" };

beforeAll(async () => {
  const dataDir = tempDir("catcafe-config-edits-data-");
  process.env.CATCAFE_DATA_DIR = dataDir;
  fs.writeFileSync(path.join(dataDir, "settings.json"), JSON.stringify({ timeouts: { commandMs: 45_000 } }));
  db = await createTestDatabase();
  h = createHarness(db);
});

const deps = () => ({ store: db.store, pool: db.pool });
const agents: TProjectInput["agents"] = {
  coder: { kind: "scripted", id: "coder-sim", responses: [{ reply: "done" }] },
  reviewer: { kind: "openai", id: "gpt-reviewer", model: "gpt-5", apiKeyEnv: "OPENAI_API_KEY" },
  tester: { kind: "scripted", id: "tester-sim", responses: [{ reply: testPlan() }] },
};

/** The field errors of a refused save: field → messages. */
async function fieldErrors(promise: Promise<unknown>): Promise<Record<string, string[]>> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isAppError(err, "INVALID_INPUT")) throw new Error(`expected a refusal with field errors, got ${String(err)}`);
  return err.details!.fieldErrors as Record<string, string[]>;
}

describe("a project's configuration, edited", () => {
  it("records each save with its actor and the paths it changed; a revert undoes one change; a stale revert is refused", async () => {
    await registerProject(deps(), { id: "cfg-a", name: "A", repoPath: h.repo, allowlist: [["node", "--test", "**"]], agents }, admin);
    const saved = await configureProject(deps(), { projectId: "cfg-a", maxIterations: 5, models: { reviewer: "gpt-5-mini" } }, admin);
    expect(saved.changes).toEqual([
      { path: ["agents", "reviewer", "model"], from: "gpt-5", to: "gpt-5-mini" },
      { path: ["maxIterations"], from: 3, to: 5 },
    ]);
    const second = await configureProject(deps(), { projectId: "cfg-a", stepTimeoutMs: 120_000, backoffMs: [500, 1500] }, other);
    expect(second.changes).toEqual([
      { path: ["settings", "retry"], to: { backoffMs: [500, 1500] } },
      { path: ["settings", "timeouts"], to: { stepMs: 120_000 } },
    ]);
    // Saving the same values again changes nothing and records nothing.
    expect((await configureProject(deps(), { projectId: "cfg-a", maxIterations: 5 }, admin)).changes).toEqual([]);

    const history = await configHistory(db.store, projectConfigStream("cfg-a"));
    expect(history.map((e) => [e.version, e.actor.id, e.changes.map((c) => c.path.join("."))])).toEqual([
      [3, "admin-2", ["settings.retry", "settings.timeouts"]],
      [2, "admin-1", ["agents.reviewer.model", "maxIterations"]],
      [1, "admin-1", ["agents", "allowlist", "maxIterations", "name", "repoPath", "settings", "webhook"]],
    ]);
    const project = await getProject(db.pool, "cfg-a");
    expect(project).toMatchObject({ maxIterations: 5, settings: { timeouts: { stepMs: 120_000 }, retry: { backoffMs: [500, 1500] } } });
    expect(project.agents.reviewer).toMatchObject({ model: "gpt-5-mini" });

    // Reverting #2 puts the model and the cap back, and leaves #3's settings alone.
    const reverted = await revertChange(deps(), { scope: "project", projectId: "cfg-a", version: 2 }, admin);
    expect(reverted.changes.map((c) => [c.path.join("."), c.to])).toEqual([
      ["agents.reviewer.model", "gpt-5"],
      ["maxIterations", 3],
    ]);
    const back = await getProject(db.pool, "cfg-a");
    expect(back.maxIterations).toBe(3);
    expect(back.settings.timeouts).toEqual({ stepMs: 120_000 });
    expect((await configHistory(db.store, projectConfigStream("cfg-a")))[0]).toMatchObject({ revertOf: 2, actor: admin });

    // A change made again since cannot be reverted blindly.
    await configureProject(deps(), { projectId: "cfg-a", stepTimeoutMs: 90_000 }, other);
    const stale = await revertChange(deps(), { scope: "project", projectId: "cfg-a", version: 3 }, admin).catch((e: unknown) => e);
    expect(isAppError(stale, "CONFLICT")).toBe(true);
    expect((stale as Error).message).toBe("settings.timeouts changed again after #3: revert the later change first, or edit it");
  });

  it("a revert on a project with a webhook keeps its whole URL (history shows only the origin); a webhook change is not revertible", async () => {
    const url = "https://hooks.example.com/services/T0KEN/secret";
    await registerProject(
      deps(),
      { id: "cfg-hook", name: "Hook", repoPath: h.repo, allowlist: [], agents, webhook: { url, format: "slack" } },
      admin,
    );
    const history = JSON.stringify(await configHistory(db.store, projectConfigStream("cfg-hook")));
    expect(history).toContain("https://hooks.example.com/…");
    expect(history).not.toContain("T0KEN");
    const saved = await configureProject(deps(), { projectId: "cfg-hook", maxIterations: 6 }, admin);
    await revertChange(deps(), { scope: "project", projectId: "cfg-hook", version: saved.version }, admin);
    expect(await getProject(db.pool, "cfg-hook")).toMatchObject({ maxIterations: 3, webhook: { url, format: "slack" } });
    const hookChange = await configureProject(
      deps(),
      { projectId: "cfg-hook", webhookUrl: "https://hooks.example.com/services/NEW" },
      admin,
    );
    expect(hookChange.changes).toEqual([
      { path: ["webhook", "url"], from: "https://hooks.example.com/…", to: "https://hooks.example.com/… (new)" },
    ]);
    await expect(revertChange(deps(), { scope: "project", projectId: "cfg-hook", version: hookChange.version }, admin)).rejects.toThrow(
      /whose URL the history does not keep/,
    );
  });

  it("refuses bad values with the files' messages, each under its field, and keeps what was recorded", async () => {
    await registerProject(deps(), { id: "cfg-b", name: "B", repoPath: h.repo, allowlist: [], agents }, admin);
    const before = await db.store.readStream(projectConfigStream("cfg-b"));
    const errors = await fieldErrors(
      configureProject(
        deps(),
        {
          projectId: "cfg-b",
          stepTimeoutMs: 0,
          maxAttempts: 11,
          backoffMs: [100, -5],
          maxIterations: 0,
          models: { coder: "gpt-5", reviewer: " " },
        },
        admin,
      ),
    );
    expect(errors).toEqual({
      stepTimeoutMs: ["settings.timeouts.stepMs: 0 is out of range: must be at least 1"],
      maxAttempts: ["settings.retry.maxAttempts: 11 is out of range: must be at most 10"],
      backoffMs: ["settings.retry.backoffMs[1]: -5 is out of range: must be at least 0"],
      maxIterations: ["maxIterations: 0 is out of range: must be at least 1"],
      "models.coder": ["agents.coder.model: a scripted agent has no model to set"],
      "models.reviewer": ["agents.reviewer.model: must name a model (e.g. gpt-5, claude-sonnet-4-5)"],
    });
    expect(await db.store.readStream(projectConfigStream("cfg-b"))).toEqual(before);
    expect((await getProject(db.pool, "cfg-b")).maxIterations).toBe(3);
  });

  it("two admins saving at once: a form filled before the other's save is refused, never half-applied or silently undoing it", async () => {
    await registerProject(deps(), { id: "cfg-c", name: "C", repoPath: h.repo, allowlist: [], agents }, admin);
    // Both opened the form at #1.
    const results = await Promise.allSettled([
      configureProject(deps(), { projectId: "cfg-c", expectedVersion: 1, maxIterations: 4, stepTimeoutMs: null }, admin),
      configureProject(deps(), { projectId: "cfg-c", expectedVersion: 1, maxIterations: 3, stepTimeoutMs: 60_000 }, other),
    ]);
    const landed = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(landed).toHaveLength(1);
    expect(isAppError(refused[0]!.reason, "CONFLICT")).toBe(true);
    // The record is exactly the one save that landed, and the history has only it.
    const history = await configHistory(db.store, projectConfigStream("cfg-c"));
    expect(history).toHaveLength(2);
    const project = await getProject(db.pool, "cfg-c");
    const winner = history[0]!.actor.id;
    expect([project.maxIterations, project.settings.timeouts?.stepMs]).toEqual(winner === "admin-1" ? [4, undefined] : [3, 60_000]);
    // Saving again from the old form says why.
    const again = await configureProject(deps(), { projectId: "cfg-c", expectedVersion: 1, maxIterations: 7 }, admin).catch(
      (e: Error) => e,
    );
    expect((again as Error).message).toBe(
      "the settings of project cfg-c changed since you opened them (now at #2, your form is from #1): reload and save again",
    );
  });
});

describe("the server's settings overrides", () => {
  it("sit between settings.json and the project's, say where each value comes from, and govern the next task", async () => {
    await configureServer(deps(), { maxAttempts: 2, rateLimitMs: 500 }, admin);
    expect((await serverOverride(db.store)).override).toEqual({ retry: { maxAttempts: 2 }, rateLimit: { minIntervalMs: 500 } });
    await registerProject(
      deps(),
      {
        id: "cfg-d",
        name: "D",
        repoPath: h.repo,
        allowlist: [["node", "--test", "**"]],
        agents: { ...agents, reviewer: { kind: "scripted", id: "reviewer-sim", responses: [{ reply: reviewApprove }] } },
        settings: { timeouts: { stepMs: 300_000 } },
      },
      admin,
    );
    const file = loadSettings().settings;
    const project = await getProject(db.pool, "cfg-d");
    const inForce = effectiveSettings(file, (await serverOverride(db.store)).override, project.settings);
    expect(Object.fromEntries(inForce.map((s) => [s.field, [s.value, s.source]]))).toEqual({
      stepTimeoutMs: [300_000, "project"],
      commandTimeoutMs: [45_000, "settings.json"],
      maxAttempts: [2, "server"],
      backoffMs: [[1000, 2000, 4000], "built-in"],
      rateLimitMs: [500, "server"],
      agentEnv: [["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"], "built-in"],
      agentHosts: [[], "built-in"],
      privateHosts: [[], "built-in"],
      deliveryTokenEnvAllowed: [[], "built-in"],
      deliveryMethod: ["merge", "built-in"],
      deliveryRemote: [undefined, "built-in"],
      deliveryTarget: ["main", "built-in"],
      deliveryTokenEnv: [undefined, "built-in"],
      deliveryPullRequest: [undefined, "built-in"],
      pruneFailedAfterDays: [null, "built-in"],
      keepFinishedDays: [7, "built-in"],
    });

    const { sessionId } = await startTask(deps(), { projectId: "cfg-d", prompt: "Make sum() add", mode: "implementation" }, testActor);
    const started = (await db.store.readStream(sessionId)).find((e) => e.type === "TaskStarted")!;
    expect((started.data as { limits: unknown }).limits).toEqual({
      stepTimeoutMs: 300_000,
      maxAttempts: 2,
      backoffMs: [1000, 2000, 4000],
      commandTimeoutMs: 45_000,
    });

    // Clearing the server's attempts (null) falls back to settings.json; a revert restores it.
    const cleared = await configureServer(deps(), { maxAttempts: null }, other);
    expect(cleared.changes).toEqual([{ path: ["retry"], from: { maxAttempts: 2 } }]);
    expect((await serverOverride(db.store)).override).toEqual({ rateLimit: { minIntervalMs: 500 } });
    await revertChange(deps(), { scope: "server", version: cleared.version }, admin);
    expect((await serverOverride(db.store)).override).toEqual({ retry: { maxAttempts: 2 }, rateLimit: { minIntervalMs: 500 } });
    expect((await configHistory(db.store, SERVER_CONFIG_STREAM)).map((e) => [e.actor.id, e.revertOf])).toEqual([
      ["admin-1", cleared.version],
      ["admin-2", null],
      ["admin-1", null],
    ]);
    const bad = await fieldErrors(configureServer(deps(), { rateLimitMs: 3_600_001 }, admin));
    expect(bad).toEqual({ rateLimitMs: ["rateLimit.minIntervalMs: 3600001 is out of range: must be at most 3600000"] });
  });

  it("sessions.pruneFailedAfterDays (docs/operations.md): an admin's recorded change, in force for every project; out of range refused under its field; not an operator's to set for a project", async () => {
    const saved = await configureServer(deps(), { pruneFailedAfterDays: 14 }, admin);
    expect(saved.changes).toEqual([{ path: ["sessions"], to: { pruneFailedAfterDays: 14 } }]);
    const inForce = effectiveSettings(loadSettings().settings, (await serverOverride(db.store)).override);
    expect(inForce.find((f) => f.field === "pruneFailedAfterDays")).toMatchObject({ value: 14, source: "server" });
    expect(await fieldErrors(configureServer(deps(), { pruneFailedAfterDays: 0 }, admin))).toEqual({
      pruneFailedAfterDays: ["sessions.pruneFailedAfterDays: 0 is out of range: must be at least 1"],
    });
    const refused = await configureProject(deps(), { projectId: "cfg-a", pruneFailedAfterDays: 3 }, admin, { role: "operator" }).catch(
      (err: unknown) => err,
    );
    expect(isAppError(refused, "FORBIDDEN")).toBe(true);
    // Cleared (null): off again, as built in.
    await configureServer(deps(), { pruneFailedAfterDays: null }, admin);
    expect((await serverOverride(db.store)).override.sessions).toBeUndefined();
  });

  it("workspaces.keepFinishedDays (docs/operations.md, \"Worktrees on every host\"): an admin's recorded change, per project too; 0 is at once; out of range refused under its field; not an operator's to set", async () => {
    const saved = await configureServer(deps(), { keepFinishedDays: 0 }, admin);
    expect(saved.changes).toEqual([{ path: ["workspaces"], to: { keepFinishedDays: 0 } }]);
    const project = await configureProject(deps(), { projectId: "cfg-a", keepFinishedDays: 30 }, admin);
    expect(project.changes).toEqual([{ path: ["settings", "workspaces"], to: { keepFinishedDays: 30 } }]);
    const server = (await serverOverride(db.store)).override;
    expect(effectiveSettings(loadSettings().settings, server).find((f) => f.field === "keepFinishedDays")).toMatchObject({
      value: 0,
      source: "server",
    });
    expect(
      effectiveSettings(loadSettings().settings, server, (await getProject(db.pool, "cfg-a")).settings).find(
        (f) => f.field === "keepFinishedDays",
      ),
    ).toMatchObject({ value: 30, source: "project" });
    expect(await fieldErrors(configureServer(deps(), { keepFinishedDays: -1 }, admin))).toEqual({
      keepFinishedDays: ["workspaces.keepFinishedDays: -1 is out of range: must be at least 0"],
    });
    const refused = await configureProject(deps(), { projectId: "cfg-a", keepFinishedDays: 3 }, admin, { role: "operator" }).catch(
      (err: unknown) => err,
    );
    expect(isAppError(refused, "FORBIDDEN")).toBe(true);
    await configureServer(deps(), { keepFinishedDays: null }, admin);
    await configureProject(deps(), { projectId: "cfg-a", keepFinishedDays: null }, admin);
    expect((await serverOverride(db.store)).override.workspaces).toBeUndefined();
  });

  it("the access lists: an admin's save is a recorded change that adds to settings.json's; a bad host rule or name is refused under its field", async () => {
    const saved = await configureServer(deps(), { agentEnv: ["TEAM_*_API_KEY"], agentHosts: ["127.0.0.1:11434"] }, admin);
    expect(saved.changes).toEqual([{ path: ["access"], to: { agentEnv: ["TEAM_*_API_KEY"], agentHosts: ["127.0.0.1:11434"] } }]);
    const inForce = effectiveSettings(loadSettings().settings, (await serverOverride(db.store)).override);
    const field = (name: string) => inForce.find((s) => s.field === name);
    expect(field("agentEnv")).toMatchObject({
      value: ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "TEAM_*_API_KEY"],
      source: "server",
    });
    expect(field("agentHosts")).toMatchObject({ value: ["127.0.0.1:11434"], source: "server" });
    const bad = await fieldErrors(configureServer(deps(), { agentHosts: ["http://x"], agentEnv: ["not a name"] }, admin));
    expect(Object.keys(bad).sort()).toEqual(["agentEnv", "agentHosts"]);
    expect(bad.agentHosts![0]).toMatch(/"http:\/\/x" is not a host rule/);
    await configureServer(deps(), { agentEnv: null, agentHosts: null }, admin);
  });
});

describe("over HTTP", () => {
  it("a refused save answers 400 with each message under its field (what the settings form shows beside it); a viewer's save is 403", async () => {
    const api = createApiFixture(db);
    await registerProject(deps(), { id: "cfg-http", name: "H", repoPath: h.repo, allowlist: [], agents }, admin);
    const call = async (role: "admin" | "viewer", input: unknown) => {
      const user = await api.user(role);
      const cookie = await api.sessionCookie(user.id);
      const req = new Request("http://cats.test/api/trpc/settings.configureProject", {
        method: "POST",
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify(input),
      });
      const res = await handleTrpc(req, createContextFactory(api.source));
      return { status: res.status, body: (await res.json()) as { error?: { data: { zodError: { fieldErrors: unknown } | null } } } };
    };
    const refused = await call("admin", { projectId: "cfg-http", stepTimeoutMs: 0 });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error?.data.zodError?.fieldErrors).toEqual({
      stepTimeoutMs: ["settings.timeouts.stepMs: 0 is out of range: must be at least 1"],
    });
    expect((await call("viewer", { projectId: "cfg-http", maxIterations: 4 })).status).toBe(403);
    expect((await getProject(db.pool, "cfg-http")).maxIterations).toBe(3);
  });
});
