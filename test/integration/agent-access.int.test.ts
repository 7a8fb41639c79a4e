// The access rules a runner reads before each agent step (server/runner/agent-access.ts): the
// server's override is folded again only when its config stream moved and settings.json parsed
// again only when the file changed, yet a change of each — the project's settings, the server's
// override, settings.json (edited in place at the same size and time, replaced, deleted) — is in
// force at the very next read, and another database's override is never taken for this one's
// (docs/security.md).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configureProject, configureServer } from "../../server/projects/config-edits";
import { upsertProject } from "../../server/projects/projects";
import { currentAgentAccess } from "../../server/runner/agent-access";
import { startTask } from "../../server/tasks/commands";
import { allowAgents } from "../helpers/access";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { makeSumRepo, tempDir } from "../helpers/tasks";

let dataDir: string;
let settingsFile: string;
let savedDataDir: string | undefined;

beforeAll(() => {
  savedDataDir = process.env.CATCAFE_DATA_DIR;
  dataDir = tempDir("catcafe-access-");
  settingsFile = path.join(dataDir, "settings.json");
  process.env.CATCAFE_DATA_DIR = dataDir;
});
afterAll(() => {
  if (savedDataDir === undefined) delete process.env.CATCAFE_DATA_DIR;
  else process.env.CATCAFE_DATA_DIR = savedDataDir;
});

/** A session of a project of its own in `db`. */
async function session(db: TestDatabase): Promise<{ projectId: string; sessionId: string }> {
  const projectId = uniqueId("access").toLowerCase();
  await upsertProject(db.pool, {
    id: projectId,
    name: "access rules",
    repoPath: makeSumRepo(tempDir("catcafe-access-repo-")),
    allowlist: [],
    agents: Object.fromEntries(
      (["coder", "reviewer", "tester"] as const).map((role) => [
        role,
        { kind: "scripted", id: `${role}-access`, responses: [{ reply: "Done." }] },
      ]),
    ),
  });
  const { sessionId } = await startTask({ store: db.store, pool: db.pool }, { projectId, prompt: "Fix it", mode: "proposal" }, testActor);
  return { projectId, sessionId };
}

/** settings.json with `hosts` as its agent hosts, its times set to `mtime` (a file that has settled). */
function writeSettings(hosts: string[], mtime: Date, how: "in place" | "replaced" = "in place"): void {
  const text = JSON.stringify({ access: { agentHosts: hosts } });
  if (how === "replaced") {
    fs.writeFileSync(`${settingsFile}.new`, text);
    fs.utimesSync(`${settingsFile}.new`, mtime, mtime);
    fs.renameSync(`${settingsFile}.new`, settingsFile);
  } else {
    fs.writeFileSync(settingsFile, text);
    fs.utimesSync(settingsFile, mtime, mtime);
  }
}

describe("the access rules a runner reads before each agent step", () => {
  it("a change of settings.json, of the server's override and of the project's settings is in force at the very next read", async () => {
    const db = await createTestDatabase();
    const { projectId, sessionId } = await session(db);
    const hosts = async () => (await currentAgentAccess(db.pool, sessionId)).hosts;
    fs.rmSync(settingsFile, { force: true });
    expect(await hosts()).toStrictEqual([]);

    // settings.json: written, edited in place at the same size and the same times, replaced, deleted.
    const settled = new Date(Date.now() - 60_000);
    writeSettings(["file-a.example"], settled);
    expect(await hosts()).toStrictEqual(["file-a.example"]);
    expect(await hosts()).toStrictEqual(["file-a.example"]);
    writeSettings(["file-b.example"], settled);
    expect(await hosts()).toStrictEqual(["file-b.example"]);
    writeSettings(["file-c.example"], settled, "replaced");
    expect(await hosts()).toStrictEqual(["file-c.example"]);
    fs.rmSync(settingsFile);
    expect(await hosts()).toStrictEqual([]);
    // A file just written (within the clock's granularity) is read again however it looks.
    fs.writeFileSync(settingsFile, JSON.stringify({ access: { agentHosts: ["file-d.example"] } }));
    expect(await hosts()).toStrictEqual(["file-d.example"]);
    fs.writeFileSync(settingsFile, JSON.stringify({ access: { agentHosts: ["file-e.example"] } }));
    expect(await hosts()).toStrictEqual(["file-e.example"]);
    fs.rmSync(settingsFile);

    // The server's override: each save, then a save that takes the list off.
    await allowAgents(db, { agentHosts: ["server-a.example"] });
    expect(await hosts()).toStrictEqual(["server-a.example"]);
    await allowAgents(db, { agentHosts: ["server-b.example"] });
    expect(await hosts()).toStrictEqual(["server-b.example"]);

    // The project's settings, on top of the server's.
    await configureProject({ pool: db.pool, store: db.store }, { projectId, agentHosts: ["project.example"] }, testActor);
    expect(await hosts()).toStrictEqual(["server-b.example", "project.example"]);
    await configureProject({ pool: db.pool, store: db.store }, { projectId, agentHosts: null }, testActor);
    expect(await hosts()).toStrictEqual(["server-b.example"]);
    await configureServer({ pool: db.pool, store: db.store }, { agentHosts: null }, testActor);
    expect(await hosts()).toStrictEqual([]);
  });

  it("another database's server override, at the same version of its config stream, is its own", async () => {
    const [one, two] = [await createTestDatabase(), await createTestDatabase()];
    const [inOne, inTwo] = [await session(one), await session(two)];
    await allowAgents(one, { agentHosts: ["one.example"] });
    await allowAgents(two, { agentHosts: ["two.example"] });
    expect((await currentAgentAccess(one.pool, inOne.sessionId)).hosts).toStrictEqual(["one.example"]);
    expect((await currentAgentAccess(two.pool, inTwo.sessionId)).hosts).toStrictEqual(["two.example"]);
    expect((await currentAgentAccess(one.pool, inOne.sessionId)).hosts).toStrictEqual(["one.example"]);
  });
});
