import { beforeAll, describe, expect, it } from "vitest";
import { registerProject } from "../../cli/commands/projects";
import { createCatCafeClient, describeError } from "../../lib/client";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
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

describe("catcafe projects add, over HTTP", () => {
  /** The CLI's typed client as an admin, its requests served in-process by the tRPC route. */
  async function adminClient() {
    const admin = await api.user("admin");
    const context = createContextFactory(api.source);
    return createCatCafeClient({
      url: "http://cats.test",
      cookie: await api.sessionCookie(admin.id),
      fetch: async (input, init) => handleTrpc(new Request(input, init), context),
    });
  }
  const base = { repoPath: "", allowlist: [["npm", "test"]] };

  it("registers the flags' agents over an --agents-file's, the file's taken as written", async () => {
    const client = await adminClient();
    const file = {
      coder: { kind: "command", id: "c", argv: ["node", "agent.js"] },
      reviewer: { kind: "scripted", id: "r", responses: [{ reply: "from the file" }] },
    };
    const flags = { reviewer: { kind: "claude" as const, id: "reviewer-claude" } };
    await registerProject(client, { ...base, repoPath: h.repo, id: "from-file", name: "From file", agents: flags }, file);
    expect((await getProject(db.pool, "from-file"))?.agents).toEqual({
      coder: { kind: "command", id: "c", argv: ["node", "agent.js"], prompt: "stdin", network: false },
      reviewer: expect.objectContaining({ kind: "claude", id: "reviewer-claude" }),
    });
    await registerProject(client, { ...base, repoPath: h.repo, id: "flags-only", name: "Flags", agents: flags });
    expect((await getProject(db.pool, "flags-only"))?.agents).toEqual({ reviewer: expect.objectContaining({ kind: "claude" }) });
  });

  it("an agent of the file that is no agent configuration is refused by the server, with the field named", async () => {
    const client = await adminClient();
    const file = { coder: { kind: "command", id: "c" } };
    const refused = await registerProject(client, { ...base, repoPath: h.repo, id: "bad-file", name: "Bad", agents: {} }, file).then(
      () => null,
      (err: unknown) => describeError(err),
    );
    expect(refused).toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("agents.coder.argv"),
      fieldErrors: { agents: [expect.any(String)] },
    });
    await expect(getProject(db.pool, "bad-file")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
