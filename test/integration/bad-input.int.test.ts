// Input PostgreSQL cannot store, or numbers past what a column holds, is a 400 naming the
// field, never a 500, and records nothing: NUL bytes and lone surrogates in prompts, titles,
// texts and ids (tRPC and REST alike), a version beyond int32; a stream of an unknown
// session is NOT_FOUND.
import { beforeAll, describe, expect, it } from "vitest";
import { createTaskRestHandlers } from "../../server/api/rest";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness, type Harness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let h: Harness;
let projectId: string;
let operator: Awaited<ReturnType<ApiFixture["user"]>>;

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  h = createHarness(db);
  operator = await api.user("operator");
  projectId = await h.project("bad-input", { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }] });
});

const eventCount = async () => Number((await db.pool.query("SELECT count(*) AS n FROM events")).rows[0].n);

describe("input that cannot be stored", () => {
  it.each([
    ["a NUL byte in the prompt", { prompt: "fix\u0000it" }, /prompt: contains a NUL byte/],
    ["a NUL byte in the title", { prompt: "fix it", title: "t\u0000" }, /title: contains a NUL byte/],
    ["a lone surrogate in the prompt", { prompt: "fix \uD800 it" }, /prompt: contains a lone surrogate/],
  ])("tasks.start with %s is BAD_REQUEST naming the field; nothing recorded", async (_what, fields, message) => {
    const before = await eventCount();
    await expect(api.caller(operator).tasks.start({ projectId, mode: "proposal", ...fields })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(message),
    });
    expect(await eventCount()).toBe(before);
  });

  it("ids with a NUL byte, and versions beyond int32, are BAD_REQUEST; a stream of an unknown session is NOT_FOUND", async () => {
    const caller = api.caller(operator);
    await expect(caller.live.session({ sessionId: "s-\u0000" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.tasks.followUp({ sessionId: "s-x", text: "hi\u0000" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(caller.live.updates({ sessionId: "s-x", afterVersion: 2 ** 40 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    const stream = (await caller.live.updates({ sessionId: "s-unknown-session" })) as AsyncIterable<unknown>;
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("the REST aliases answer 400 for a NUL byte in the body or in the path's id", async () => {
    const rest = createTaskRestHandlers(api.source);
    const { token } = await api.caller(operator).tokens.create({ name: "bad-input" });
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const start = await rest.start(
      new Request("http://cats.test/api/tasks", { method: "POST", headers, body: JSON.stringify({ projectId, prompt: "a\u0000b" }) }),
      undefined,
    );
    expect(start.status).toBe(400);
    expect(await start.json()).toMatchObject({ error: { code: "INVALID_INPUT", message: "prompt: contains a NUL byte" } });
    const follow = await rest.followUp(
      new Request("http://cats.test/api/tasks/x/followup", { method: "POST", headers, body: JSON.stringify({ text: "hi" }) }),
      { params: Promise.resolve({ id: "s-\u0000" }) },
    );
    expect(follow.status).toBe(400);
  });
});
