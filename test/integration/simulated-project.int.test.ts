// A project a person adds with simulated agents (the "simulated" preset of Add project and
// `catcafe projects add`), on a fresh git repository that is not the demo's: a review-loop
// task ends approved through the real gates — a real commit of the coder's note of the task,
// a verdict that validates against the strict schema, the project's own test command really
// run — and a Forge on it stops honestly for a person instead of making up artifacts.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { agentPreset } from "../../lib/agent-presets";
import type { AgentConfigInput } from "../../server/agents/config";
import { SIMULATED_NOTES_DIR } from "../../server/agents/stand-ins";
import { getBlob } from "../../server/events/blobs";
import { forgeStatus, newForge } from "../../server/tasks/forge";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { upsertProject } from "../../server/projects/projects";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { commitFiles, createHarness, gitIn, ofType, tempDir, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let h: Harness;
let api: ApiFixture;
const deps = () => ({ store: db.store, pool: db.pool });
beforeAll(async () => {
  db = await createTestDatabase();
  h = createHarness(db);
  api = createApiFixture(db);
  await h.startRunner();
});

const PASSING_TEST = `const test = require("node:test");\ntest("greets", () => {});\n`;

/** A person's repository: a package whose `npm test` passes, nothing of the demo's. */
function personsRepo(): string {
  const repo = path.join(tempDir("catcafe-person-"), "shop");
  fs.mkdirSync(repo);
  commitFiles(repo, {
    "README.md": "# Shop\n",
    "package.json": `${JSON.stringify({ name: "shop", private: true, scripts: { test: "node --test test/" } }, null, 2)}\n`,
    "test/greet.test.js": PASSING_TEST,
  });
  return repo;
}

/** The agents the Add project form registers when every role is "simulated". */
function simulatedAgents(roles: string[]): Record<string, AgentConfigInput> {
  return Object.fromEntries(
    roles.map((role) => {
      const preset = agentPreset(role, "simulated");
      if ("problem" in preset) throw new Error(preset.problem);
      return [role, preset.agent];
    }),
  );
}

async function addProject(id: string, allowlist: string[][], maxIterations = 3) {
  const repo = personsRepo();
  await upsertProject(db.pool, {
    id,
    name: `Person's ${id}`,
    repoPath: repo,
    allowlist,
    agents: simulatedAgents(["coder", "reviewer", "tester", "planner"]),
    maxIterations,
  });
  return repo;
}

describe("simulated agents on a project a person added", () => {
  it("a review-loop task ends approved: the note of the task committed, a valid verdict, the project's own test really run", async () => {
    const repo = await addProject("shop", [["npm", "test"]]);
    const prompt = "Add a /health endpoint that answers 200";
    const { sessionId } = await startTask(deps(), { projectId: "shop", prompt, mode: "proposal" }, testActor);
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    await confirmTask(deps(), { sessionId, via: "button" }, testActor);
    const done = await h.waitFor(sessionId, "finished", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");

    const events = await db.store.readStream(sessionId);
    const outputs = ofType<{ role: string; phase: string; simulated: boolean; validationErrors: string[] }>(events, "AgentOutputRecorded");
    expect(outputs.every((o) => o.simulated && o.validationErrors.length === 0)).toBe(true);

    const note = `${SIMULATED_NOTES_DIR}/${sessionId}.md`;
    const [commit] = ofType<{ commit: string; changedFiles: Array<{ path: string; status: string }>; diff: { blob: string } }>(
      events,
      "WorkspaceCommitted",
    );
    expect(commit!.changedFiles).toEqual([{ path: note, status: "added" }]);
    const diff = (await getBlob(db.pool, commit!.diff.blob)).content.toString("utf8");
    expect(diff).toContain(`+++ b/${note}`);
    expect(diff).toContain("simulated coder");
    expect(diff).toContain(prompt);
    // The commit is real: in the session's worktree, on top of the person's repository.
    const worktree = path.join(h.workspacesRoot, sessionId);
    expect(gitIn(worktree, "show", "--name-only", "--format=", commit!.commit)).toBe(note);
    expect(fs.readFileSync(path.join(worktree, note), "utf8")).toContain(prompt);
    expect(fs.existsSync(path.join(repo, note))).toBe(false);

    const [verdict] = ofType<{ decision: string; summary: string; findings: unknown[] }>(events, "ReviewVerdictRecorded");
    expect(verdict).toMatchObject({ decision: "approve", findings: [] });
    expect(verdict!.summary).toMatch(/simulated: canned verdict/);

    const [test] = ofType<{ argv: string[]; status: string; passed: boolean; exitCode: number; stdoutTail: string }>(
      events,
      "TestCommandRecorded",
    );
    expect(test).toMatchObject({ argv: ["npm", "test"], status: "ran", passed: true, exitCode: 0 });
    expect(test!.stdoutTail).toMatch(/# pass 1/);

    // The page says so: the session's header (live.session, the session page's first paint).
    const viewer = api.caller(await api.user("viewer"));
    const view = await viewer.live.session({ sessionId });
    expect(view.header).toMatchObject({ simulated: true, projectId: "shop", workflow: "review_loop" });
  });

  it("with nothing on the allowlist it can run, the test step is refused for real and the task does not pass", async () => {
    await addProject("locked", [], 1);
    const { sessionId } = await startTask(deps(), { projectId: "locked", prompt: "Rename the shop", mode: "implementation" }, testActor);
    const done = await h.waitFor(sessionId, "finished", (s) => s.status === "finished");
    expect(done.outcome).toBe("max_iterations_reached");
    const events = await db.store.readStream(sessionId);
    const [test] = ofType<{ status: string; passed: boolean; reason: string }>(events, "TestCommandRecorded");
    expect(test).toMatchObject({ status: "refused", passed: false });
    expect(test!.reason).toMatch(/allowlist is empty/);
  });

  it("a Forge stops for a person at its first stage, its output recorded as simulated, with nothing of the demo's", async () => {
    await addProject("forge-shop", [["npm", "test"]]);
    const { sessionId } = await newForge(deps(), { projectId: "forge-shop", idea: "A shop that sells cat toys", gates: [] }, testActor);
    await h.waitFor(sessionId, "a person needed", (s) => s.fsm === "agent_failed", 60_000);
    const events = await db.store.readStream(sessionId);
    const status = forgeStatus(sessionId, events);
    expect(status.status).toBe("InProgress");
    expect(status.artifacts).toEqual([]);
    const outputs = ofType<{ role: string; simulated: boolean }>(events, "AgentOutputRecorded");
    expect(outputs.length).toBeGreaterThan(0);
    expect(outputs.every((o) => o.simulated)).toBe(true);
    expect(JSON.stringify(events)).not.toMatch(/word count/i);
    const view = await api.caller(await api.user("viewer")).live.session({ sessionId });
    expect(view.header).toMatchObject({ simulated: true, workflow: "forge" });
  });
});
