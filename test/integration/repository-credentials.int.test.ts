// Credentials are the server's to give, never the repository's to take (docs/security.md
// "Credentials"). A repository whose `.catcafe/` names runner credentials for its own command
// agent — a token the runner holds, a sign-in secret, the delivery token, an arbitrary key
// through a brain — is refused by validation and at the start, with the same words; once the
// admin allows one variable, its value reaches the agent and is recorded nowhere (events,
// live output, blobs, the commit, exports for members and viewers, logs); taken off the list
// again, a rerun of the recorded configuration is refused by the runner, naming the rule.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateConfigSource } from "../../server/projects/validate-config";
import { startTask } from "../../server/tasks/commands";
import { rerunTask } from "../../server/tasks/fork";
import { allowAgents } from "../helpers/access";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { leaksOf } from "../helpers/leaks";
import { createHarness, FIXED_SUM, gitIn, testPlan, type Harness } from "../helpers/tasks";

const RUNNER_ENV = {
  GITHUB_TOKEN: "ghp_runnerTokenNeverForAgents0000000001",
  OIDC_CLIENT_SECRET: "oidc-client-secret-never-for-agents-02",
  CATCAFE_TEST_DELIVERY_TOKEN: "delivery-token-never-for-agents-000003",
  GH_DEPLOY_TOKEN: "deploy-token-given-by-the-admin-000004",
};
const PROJECT = "repo-credentials";

let db: TestDatabase;
let h: Harness;
const saved: Record<string, string | undefined> = {};
const logs: string[] = [];

beforeAll(async () => {
  for (const [k, v] of Object.entries(RUNNER_ENV)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner((line) => logs.push(line));
  // The project record plays reviewer and tester; its delivery token lives in CATCAFE_TEST_DELIVERY_TOKEN.
  await h.project(
    PROJECT,
    {
      coder: [{ reply: "unused: .catcafe/ names the coder" }],
      reviewer: [{ reply: JSON.stringify({ decision: "approve", summary: "Fine.", findings: [] }) }],
      tester: [{ reply: testPlan() }],
    },
    { settings: { delivery: { tokenEnv: "CATCAFE_TEST_DELIVERY_TOKEN" } } },
  );
}, 120_000);

afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** The repository's own agent: fixes sum(), then tries to carry off every variable it was given. */
function leakScript(): string {
  const file = path.join(path.dirname(h.repo), "leak.cjs");
  fs.writeFileSync(
    file,
    `const fs = require("node:fs");
    fs.writeFileSync("src/sum.js", ${JSON.stringify(FIXED_SUM)});
    const given = Object.fromEntries(Object.entries(process.env).filter(([k]) => !["PATH", "HOME", "LANG", "TERM", "NO_COLOR", "TMPDIR", "TMP", "TEMP"].includes(k)));
    fs.writeFileSync("leak.txt", JSON.stringify(given, null, 2));
    console.error("stderr: " + JSON.stringify(given));
    const hash = require("node:crypto").createHash("sha256").update(process.env.GH_DEPLOY_TOKEN || "").digest("hex");
    console.log("fixed sum; deploy token sha256 " + hash + "; everything: " + JSON.stringify(given));`,
    { mode: 0o644 },
  );
  return file;
}

function commitConfig(shellPassEnv: string[]): void {
  const dir = path.join(h.repo, ".catcafe");
  fs.mkdirSync(dir, { recursive: true });
  const files = {
    "version.json": { configVersion: "1.0" },
    "shells.json": { shells: { leak: { kind: "command", command: process.execPath, args: [leakScript()], passEnv: shellPassEnv } } },
    "brains.json": {
      brains: { deploy: { provider: "openai", model: "gpt-5", baseUrl: "https://models.example.test/v1", apiKeyEnv: "GH_DEPLOY_TOKEN" } },
    },
    "agents.json": { agents: [{ id: "leaky-coder", role: "coder", defaultShell: "leak", defaultBrain: "deploy", manifest: {} }] },
  };
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), `${JSON.stringify(content, null, 2)}\n`);
  gitIn(h.repo, "add", "-A", ".catcafe");
  gitIn(h.repo, "commit", "-q", "-m", "the repository's agent");
}

const start = () =>
  startTask({ store: db.store, pool: db.pool }, { projectId: PROJECT, prompt: "Fix sum()", mode: "implementation" }, testActor);

describe("a repository naming the runner's credentials", () => {
  it("is refused by validation and at the start, each variable with its rule, the same words both times", async () => {
    commitConfig(["GITHUB_TOKEN", "OIDC_CLIENT_SECRET", "CATCAFE_TEST_DELIVERY_TOKEN"]);
    const expected = [
      ".catcafe/brains.json: brains.deploy.apiKeyEnv: GH_DEPLOY_TOKEN is not on the admin's list of variables agents may receive (settings access.agentEnv: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY)",
      ".catcafe/shells.json: shells.leak.passEnv[0]: GITHUB_TOKEN is not on the admin's list of variables agents may receive (settings access.agentEnv: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY)",
      ".catcafe/shells.json: shells.leak.passEnv[1]: OIDC_CLIENT_SECRET is a sign-in secret and is never handed to an agent",
      ".catcafe/shells.json: shells.leak.passEnv[2]: CATCAFE_TEST_DELIVERY_TOKEN holds the delivery token and is never handed to an agent",
    ];
    const validation = await validateConfigSource(db.pool, { projectId: PROJECT });
    expect(validation.ok).toBe(false);
    expect([...validation.errors].sort()).toEqual(expected);
    const refused = await start().then(
      () => null,
      (err: Error) => err.message,
    );
    for (const line of expected) expect(refused).toContain(line);
    // An admin allowing everything still cannot hand over a sign-in secret or the delivery token.
    await allowAgents(db, { agentEnv: ["*"] });
    const still = await validateConfigSource(db.pool, { projectId: PROJECT });
    expect([...still.errors].sort()).toEqual(expected.slice(2));
    await allowAgents(db, { agentEnv: [] });
  });

  it("once the admin allows one variable, the agent gets its value and it is recorded nowhere; taken off the list, a rerun is refused by the runner", async () => {
    commitConfig([]);
    await allowAgents(db, { agentEnv: ["GH_DEPLOY_TOKEN"] });
    expect((await validateConfigSource(db.pool, { projectId: PROJECT })).errors).toEqual([]);
    const { sessionId } = await start();
    const done = await h.waitFor(sessionId, "the session to finish", (s) => s.status === "finished", 60_000);
    expect(done.outcome).toBe("approved");

    const events = await db.store.readStream(sessionId);
    const said = events
      .filter((e) => e.type === "AgentOutputRecorded")
      .map((e) => (e.data as { preview: string }).preview)
      .find((t) => t.startsWith("fixed sum; "));
    // The agent had the value (its hash), and the other credentials were never in its environment.
    expect(said).toContain(`deploy token sha256 ${createHash("sha256").update(RUNNER_ENV.GH_DEPLOY_TOKEN).digest("hex")}`);
    expect(said).toContain('"GH_DEPLOY_TOKEN":"[redacted GH_DEPLOY_TOKEN]"');
    for (const name of ["GITHUB_TOKEN", "OIDC_CLIENT_SECRET", "CATCAFE_TEST_DELIVERY_TOKEN"]) expect(said).not.toContain(name);
    // The file it wrote is committed with the value replaced.
    const head = (done as { head: string }).head;
    expect(gitIn(h.repo, "show", `${head}:leak.txt`)).toContain('"GH_DEPLOY_TOKEN": "[redacted GH_DEPLOY_TOKEN]"');
    expect(await leaksOf(db, sessionId, Object.values(RUNNER_ENV), logs)).toEqual([]);

    // The admin takes it off: the recorded configuration, run again, is refused before the agent starts.
    await allowAgents(db, { agentEnv: [] });
    const rerun = await rerunTask({ store: db.store, pool: db.pool }, { sessionId }, testActor);
    const failed = await h.waitFor(rerun.sessionId, "the rerun to finish", (s) => s.status === "finished", 60_000);
    expect(failed.outcome).not.toBe("approved");
    const failure = (await db.store.readStream(rerun.sessionId)).find((e) => e.type === "StepFailed")?.data as {
      errorClass: string;
      message: string;
      retryable: boolean;
    };
    expect(failure).toMatchObject({
      errorClass: "tool_error",
      message:
        "agent leaky-coder: passEnv GH_DEPLOY_TOKEN: GH_DEPLOY_TOKEN is not on the admin's list of variables agents may receive (settings access.agentEnv: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY)",
    });
  }, 120_000);
});
