import { beforeAll, describe, expect, it } from "vitest";
import { getProject } from "../../server/projects/projects";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
});

describe("projects.upsert (admin)", () => {
  it("registers a project on a git repository, then updates it; a path that is not a repository is refused", async () => {
    const admin = api.caller(await api.user("admin"));
    const agents = { coder: { kind: "scripted" as const, id: "c", responses: [{ reply: "x" }] } };
    await admin.projects.upsert({ id: "mine", name: "Mine", repoPath: h.repo, allowlist: [["node", "--test", "**"]], agents });
    await admin.projects.upsert({
      id: "mine",
      name: "Mine, renamed",
      repoPath: h.repo,
      allowlist: [["npm", "test"]],
      agents,
      maxIterations: 5,
    });
    expect(await getProject(db.pool, "mine")).toMatchObject({ name: "Mine, renamed", allowlist: [["npm", "test"]], maxIterations: 5 });
    expect(await admin.projects.list()).toContainEqual({ id: "mine", name: "Mine, renamed", simulated: true });
    await expect(
      admin.projects.upsert({ id: "nope", name: "Nope", repoPath: "/definitely/not/a/repo", allowlist: [], agents }),
    ).rejects.toThrow();
    await expect(admin.projects.upsert({ id: "Bad Id", name: "x", repoPath: h.repo, allowlist: [], agents })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });
});
