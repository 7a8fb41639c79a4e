// A team wires its own projects (req X2, docs/auth.md "Who configures what"): an operator adds
// a project, binds its agents per role and sets its delivery — each save a ConfigChanged
// event, revertible — but never the access lists; a viewer does none of it. A delivery token
// variable must be on the admin's list. A workflow whose roles are not all bound is shown as
// not ready, and its start refuses in the same words before anything is recorded; binding the
// role makes it start. The delivery Test answers from a real git remote.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { CurrentUser } from "../../server/auth/request";
import { configHistory, projectConfigStream } from "../../server/projects/config-edits";
import { getProject } from "../../server/projects/projects";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { startApiServer } from "../helpers/api-server";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { cleanEnv, run } from "../helpers/live-server";
import { createHarness, tempDir, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let admin: CurrentUser;
let operator: CurrentUser;
let viewer: CurrentUser;

beforeAll(async () => {
  const dataDir = tempDir("catcafe-roles-data-");
  process.env.CATCAFE_DATA_DIR = dataDir;
  fs.writeFileSync(path.join(dataDir, "settings.json"), JSON.stringify({}));
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  admin = await api.user("admin");
  operator = await api.user("operator");
  viewer = await api.user("viewer");
});

const sim = (role: string) => ({ kind: "scripted" as const, id: `${role}-sim`, responses: [{ reply: `${role}: ok` }] });

/** The code and message a call was refused with. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string; fieldErrors?: Record<string, string[]> }> {
  const err = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as { code?: string; message: string; cause?: { details?: { fieldErrors?: Record<string, string[]> } } } | null;
  if (!err) throw new Error("expected a refusal");
  return { code: err.code ?? "?", message: err.message, fieldErrors: err.cause?.details?.fieldErrors };
}

async function streamLength(stream: string): Promise<number> {
  return (await db.store.streamVersion(stream)) ?? 0;
}

describe("who wires a project", () => {
  it("an operator adds a project and binds its roles; a revert restores the binding; a viewer can do neither", async () => {
    const op = api.caller(operator);
    await op.projects.upsert({ id: "team-a", name: "Team A", repoPath: h.repo, allowlist: [], agents: { coder: sim("coder") } });
    expect((await getProject(db.pool, "team-a")).agents.coder).toMatchObject({ kind: "scripted" });

    const saved = await op.settings.configureProject({
      projectId: "team-a",
      agents: { planner: { kind: "openai", id: "planner-openai", model: "gpt-5", apiKeyEnv: "OPENAI_API_KEY" } },
    });
    expect(saved.changes).toEqual([
      { path: ["agents", "planner"], to: { kind: "openai", id: "planner-openai", model: "gpt-5", apiKeyEnv: "OPENAI_API_KEY" } },
    ]);
    const [last] = await configHistory(db.store, projectConfigStream("team-a"));
    expect(last).toMatchObject({ version: saved.version, actor: { kind: "user", id: operator.id } });

    await op.settings.revert({ scope: "project", projectId: "team-a", version: saved.version });
    expect((await getProject(db.pool, "team-a")).agents.planner).toBeUndefined();

    const v = api.caller(viewer);
    expect((await refusal(v.projects.upsert({ id: "team-v", name: "V", repoPath: h.repo, allowlist: [], agents: {} }))).code).toBe(
      "FORBIDDEN",
    );
    expect((await refusal(v.settings.configureProject({ projectId: "team-a", agents: { planner: sim("planner") } }))).code).toBe(
      "FORBIDDEN",
    );
  });

  it("an operator may not touch the access lists, nor a project's other settings, nor the server's; an admin may", async () => {
    await api.caller(admin).projects.upsert({ id: "team-b", name: "B", repoPath: h.repo, allowlist: [], agents: {} });
    const op = api.caller(operator);
    const before = await streamLength(projectConfigStream("team-b"));

    const access = await refusal(op.settings.configureProject({ projectId: "team-b", agentEnv: ["*"] }));
    expect(access.code).toBe("FORBIDDEN");
    expect(access.message).toMatch(/only an admin changes the access lists .*settings\.access\.agentEnv/);
    const hosts = await refusal(op.settings.configureProject({ projectId: "team-b", privateHosts: ["127.0.0.1"] }));
    expect(hosts.message).toMatch(/access lists/);
    const tokens = await refusal(op.settings.configureProject({ projectId: "team-b", deliveryTokenEnvAllowed: ["*"] }));
    expect(tokens.message).toMatch(/access lists/);
    const other = await refusal(op.settings.configureProject({ projectId: "team-b", maxIterations: 7 }));
    expect(other).toMatchObject({ code: "FORBIDDEN" });
    expect(other.message).toMatch(/maxIterations of project team-b is an admin's to change/);
    // A new project with access lists, and the server's settings.
    const created = await refusal(
      op.projects.upsert({
        id: "team-c",
        name: "C",
        repoPath: h.repo,
        allowlist: [],
        agents: {},
        settings: { access: { privateHosts: ["127.0.0.1"] } },
      }),
    );
    expect(created.message).toMatch(/access lists/);
    expect((await refusal(op.settings.configureServer({ agentEnv: ["*"] }))).code).toBe("FORBIDDEN");
    expect((await refusal(op.settings.revert({ scope: "server", version: 1 }))).code).toBe("FORBIDDEN");
    expect(await streamLength(projectConfigStream("team-b"))).toBe(before);

    const ok = await api.caller(admin).settings.configureProject({ projectId: "team-b", privateHosts: ["127.0.0.1"] });
    expect(ok.changes).toEqual([{ path: ["settings", "access"], to: { privateHosts: ["127.0.0.1"] } }]);
    // An operator cannot revert it either.
    expect((await refusal(op.settings.revert({ scope: "project", projectId: "team-b", version: ok.version }))).code).toBe("FORBIDDEN");
  });

  it("a role's agent is judged before it is saved, each problem at its field", async () => {
    const op = api.caller(operator);
    await op.projects.upsert({ id: "team-d", name: "D", repoPath: h.repo, allowlist: [], agents: {} });
    const bad = await refusal(
      op.settings.configureProject({
        projectId: "team-d",
        agents: { planner: { kind: "openai", id: "p", model: "gpt-5", apiKeyEnv: "SHOP_DB_PASSWORD" } },
      }),
    );
    expect(bad.code).toBe("BAD_REQUEST");
    expect(bad.fieldErrors?.["agents.planner"]?.join()).toMatch(
      /SHOP_DB_PASSWORD is not on the admin's list of variables agents may receive/,
    );
    const noArgv = await refusal(
      op.settings.configureProject({ projectId: "team-d", agents: { tester: { kind: "command", id: "t", argv: [] } } }),
    );
    expect(noArgv.fieldErrors?.["agents.tester"]?.join()).toMatch(/agents\.tester\.argv/);
    expect((await getProject(db.pool, "team-d")).agents).toEqual({});
  });
});

describe("a CLI shell's Check", () => {
  it("names the live runners that have it and whether its key variable is set on each (never its value); not ok where none can sign in", async () => {
    await api.caller(operator).projects.upsert({ id: "cli-check", name: "CLI check", repoPath: h.repo, allowlist: [], agents: {} });
    const claude = (keySet: boolean) =>
      JSON.stringify([
        {
          shell: "claude",
          path: "/opt/cli/claude",
          version: "2.1.0",
          requiredRange: ">=2.0.0 <3.0.0",
          supported: true,
          capabilities: { nonInteractive: true, editFiles: true, workingDirectory: true },
          problems: [],
          keyEnv: { name: "ANTHROPIC_API_KEY", set: keySet },
        },
      ]);
    const check = (agent: Record<string, unknown>) =>
      api.caller(operator).settings.checkRole({ projectId: "cli-check", role: "coder", agent });
    await db.pool.query(
      `INSERT INTO runners (id, host, pid, version, heartbeat_at, shells) VALUES ('r-nokey', 'box-a', 1, '0.0.0', now(), $1)`,
      [claude(false)],
    );
    const without = await check({ kind: "claude", id: "c" });
    expect(without.ok).toBe(false);
    expect(without.message).toMatch(
      /claude 2\.1\.0 is installed on box-a \(runner r-nokey\); .*ANTHROPIC_API_KEY is not set, so it cannot sign in there/,
    );

    await db.pool.query(
      `INSERT INTO runners (id, host, pid, version, heartbeat_at, shells) VALUES ('r-key', 'box-b', 2, '0.0.0', now(), $1)`,
      [claude(true)],
    );
    const withKey = await check({ kind: "claude", id: "c" });
    expect(withKey.ok).toBe(true);
    expect(withKey.message).toMatch(/box-b \(runner r-key\): ANTHROPIC_API_KEY is set \(it signs in with it\)/);
    // Another key variable: the runners did not say whether it is set.
    const other = await check({ kind: "claude", id: "c", apiKeyEnv: "OPENAI_API_KEY" });
    expect(other.ok).toBe(true);
    expect(other.message).toMatch(/whether OPENAI_API_KEY is set there is not reported/);
    await db.pool.query(`DELETE FROM runners WHERE id IN ('r-nokey', 'r-key')`);
  });
});

describe("delivery settings", () => {
  it("an operator sets them; a token variable must be on the admin's list", async () => {
    const op = api.caller(operator);
    await op.projects.upsert({ id: "team-e", name: "E", repoPath: h.repo, allowlist: [], agents: {} });
    const refused = await refusal(
      op.settings.configureProject({
        projectId: "team-e",
        deliveryMethod: "push",
        deliveryRemote: "origin",
        deliveryTokenEnv: "GITHUB_TOKEN",
      }),
    );
    expect(refused.code).toBe("BAD_REQUEST");
    expect(refused.fieldErrors?.deliveryTokenEnv?.join()).toMatch(
      /GITHUB_TOKEN is not on the admin's list of delivery token variables \(settings access\.deliveryTokenEnv: empty\)/,
    );
    expect((await refusal(op.settings.configureProject({ projectId: "team-e", deliveryTokenEnv: "DATABASE_URL" }))).message).toMatch(
      /DATABASE_URL/,
    );

    await api.caller(admin).settings.configureServer({ deliveryTokenEnvAllowed: ["TEAM_E_*"] });
    const saved = await op.settings.configureProject({
      projectId: "team-e",
      deliveryMethod: "pull_request",
      deliveryRemote: "origin",
      deliveryTarget: "main",
      deliveryTokenEnv: "TEAM_E_TOKEN",
      deliveryPullRequest: { provider: "github", repository: "acme/e" },
    });
    expect(saved.changes.map((c) => c.path.join("."))).toEqual(["settings.delivery"]);
    expect((await getProject(db.pool, "team-e")).settings.delivery).toEqual({
      method: "pull_request",
      remote: "origin",
      target: "main",
      tokenEnv: "TEAM_E_TOKEN",
      pullRequest: { provider: "github", repository: "acme/e" },
    });
    const bad = await refusal(op.settings.configureProject({ projectId: "team-e", deliveryMethod: "carrier_pigeon" }));
    expect(bad.fieldErrors?.deliveryMethod?.join()).toMatch(/settings\.delivery\.method/);
    await op.settings.revert({ scope: "project", projectId: "team-e", version: saved.version });
    expect((await getProject(db.pool, "team-e")).settings.delivery).toBeUndefined();
  });

  it("Test answers reachable with the branch head of a bare remote, and git's error for a missing one", async () => {
    const root = tempDir("catcafe-roles-remote-");
    const bare = path.join(root, "remote.git");
    execFileSync("git", ["init", "--bare", "-q", bare]);
    execFileSync("git", ["-C", h.repo, "push", "-q", bare, "HEAD:refs/heads/main"]);
    const head = execFileSync("git", ["-C", h.repo, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const op = api.caller(operator);
    await op.projects.upsert({ id: "team-f", name: "F", repoPath: h.repo, allowlist: [], agents: {} });
    await op.settings.configureProject({ projectId: "team-f", deliveryMethod: "push", deliveryRemote: bare, deliveryTarget: "main" });
    const reachable = await op.settings.testDelivery({ projectId: "team-f" });
    expect(reachable).toMatchObject({ ok: true, method: "push", message: `reachable, main at ${head.slice(0, 7)}` });

    // A merge with a remote merges there: its target must be on the remote.
    await op.settings.configureProject({ projectId: "team-f", deliveryMethod: "merge" });
    expect(await op.settings.testDelivery({ projectId: "team-f" })).toMatchObject({
      ok: true,
      method: "merge",
      message: `reachable, main at ${head.slice(0, 7)}`,
    });
    await op.settings.configureProject({ projectId: "team-f", deliveryTarget: "release" });
    expect(await op.settings.testDelivery({ projectId: "team-f" })).toMatchObject({
      ok: false,
      message: "reachable, but the target branch release does not exist on the remote",
    });
    await op.settings.configureProject({ projectId: "team-f", deliveryMethod: "push", deliveryTarget: "main" });

    await op.settings.configureProject({ projectId: "team-f", deliveryRemote: path.join(root, "missing.git") });
    const missing = await op.settings.testDelivery({ projectId: "team-f" });
    expect(missing.ok).toBe(false);
    expect(missing.message).toMatch(/does not appear to be a git repository/);
    expect((await refusal(api.caller(viewer).settings.testDelivery({ projectId: "team-f" }))).code).toBe("FORBIDDEN");
  });
});

describe("readiness", () => {
  it("names the roles no agent plays; the start refuses in the same words before recording anything; binding them makes it start", async () => {
    const op = api.caller(operator);
    await op.projects.upsert({
      id: "team-g",
      name: "G",
      repoPath: h.repo,
      allowlist: [["node", "--test", "**"]],
      agents: { coder: sim("coder"), reviewer: sim("reviewer"), tester: sim("tester") },
    });
    const readiness = await op.projects.readiness({ projectId: "team-g" });
    const forge = readiness.find((w) => w.workflow === "forge")!;
    expect(forge).toMatchObject({ ready: false, missing: ["planner"] });
    expect(forge.reason).toBe(
      "forge is not ready on project team-g: no agent plays the planner role; bind it in Settings → Projects → team-g → Roles, or with `catcafe projects agent team-g <role> --kind …`",
    );
    expect(readiness.find((w) => w.workflow === "review_loop")).toMatchObject({ ready: true, missing: [] });

    const streams = async () => Number((await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM events")).rows[0]!.n);
    const before = await streams();
    const refused = await refusal(op.forge.new({ projectId: "team-g", idea: "a tiny app" }));
    expect(refused).toMatchObject({ code: "PRECONDITION_FAILED", message: forge.reason });
    expect(await streams()).toBe(before);

    await op.settings.configureProject({ projectId: "team-g", agents: { planner: sim("planner") } });
    expect((await op.projects.readiness({ projectId: "team-g" })).find((w) => w.workflow === "forge")).toMatchObject({ ready: true });
    const started = await op.forge.new({ projectId: "team-g", idea: "a tiny app" });
    expect(started.sessionId).toMatch(/^s-/);
  });
});

describe("readiness with the repository's agents", () => {
  it("counts a role .catcafe/agents.json plays (at HEAD) as bound", async () => {
    const repo = path.join(tempDir("catcafe-roles-repo-"), "repo");
    execFileSync("git", ["clone", "-q", h.repo, repo]);
    const dir = path.join(repo, ".catcafe");
    fs.mkdirSync(dir);
    const files = {
      "version.json": { configVersion: "1.0" },
      "brains.json": { brains: { "sim-planner": { provider: "scripted", responses: [{ reply: "a plan" }] } } },
      "agents.json": { agents: [{ id: "planner-repo", role: "planner", defaultBrain: "sim-planner" }] },
    };
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), JSON.stringify(content));
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args]);
    git("add", "-A", ".catcafe");
    git("-c", "user.name=t", "-c", "user.email=t@cats.test", "commit", "-q", "-m", "planner from the repository");
    const op = api.caller(operator);
    await op.projects.upsert({
      id: "team-r",
      name: "R",
      repoPath: repo,
      allowlist: [],
      agents: { coder: sim("coder"), reviewer: sim("reviewer"), tester: sim("tester") },
    });
    const forge = (await op.projects.readiness({ projectId: "team-r" })).find((w) => w.workflow === "forge");
    expect(forge).toMatchObject({ ready: true, missing: [] });
    const roles = await op.settings.roles({ projectId: "team-r" });
    expect(roles.roles.find((r) => r.role === "planner")).toMatchObject({ record: null, repository: { id: "planner-repo" } });
  });
});

describe("from the CLI", () => {
  it("catcafe projects agent binds a role and reports readiness; projects delivery sets and tests the delivery", async () => {
    const BIN = path.resolve(import.meta.dirname, "../../bin/catcafe.mjs");
    const token = (await api.caller(operator).tokens.create({ name: "cli" })).token;
    const server = await startApiServer(api.source);
    const home = tempDir("catcafe-roles-cli-");
    const env = cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), CATCAFE_URL: server.url, CATCAFE_TOKEN: token });
    const catcafe = (args: string[]) => run(BIN, [...args, "--json"], { env, timeoutMs: 60_000 });
    try {
      await api.caller(operator).projects.upsert({
        id: "team-h",
        name: "H",
        repoPath: h.repo,
        allowlist: [],
        agents: { coder: sim("coder"), reviewer: sim("reviewer"), tester: sim("tester") },
      });
      const bound = await catcafe(["projects", "agent", "team-h", "planner", "--kind", "simulated"]);
      expect(bound.code, bound.stderr).toBe(0);
      const answer = JSON.parse(bound.stdout) as {
        changes: Array<{ path: string[] }>;
        readiness: Array<{ workflow: string; ready: boolean }>;
      };
      expect(answer.changes.map((c) => c.path.join("."))).toEqual(["agents.planner"]);
      expect(answer.readiness.find((w) => w.workflow === "forge")).toMatchObject({ ready: true });
      expect((await getProject(db.pool, "team-h")).agents.planner).toMatchObject({ kind: "scripted", id: "planner-sim" });

      const refused = await catcafe([
        "projects",
        "agent",
        "team-h",
        "planner",
        "--kind",
        "brain",
        "--model",
        "m",
        "--key-env",
        "SECRET_THING",
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/SECRET_THING is not on the admin's list of variables agents may receive/);

      const root = tempDir("catcafe-roles-cli-remote-");
      const bare = path.join(root, "r.git");
      execFileSync("git", ["init", "--bare", "-q", bare]);
      execFileSync("git", ["-C", h.repo, "push", "-q", bare, "HEAD:refs/heads/main"]);
      const head = execFileSync("git", ["-C", h.repo, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
      const delivery = await catcafe(["projects", "delivery", "team-h", "--method", "push", "--remote", bare, "--test"]);
      expect(delivery.code, delivery.stderr).toBe(0);
      const shown = JSON.parse(delivery.stdout) as {
        test: { ok: boolean; message: string };
        delivery: Array<{ path: string; value: unknown }>;
      };
      expect(shown.test).toMatchObject({ ok: true, message: `reachable, main at ${head.slice(0, 7)}` });
      expect(shown.delivery.find((d) => d.path === "delivery.remote")?.value).toBe(bare);
    } finally {
      await server.close();
    }
  }, 120_000);
});
