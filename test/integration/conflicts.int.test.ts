// A conflict is a 409 that says where the session stands: the command handler
// (server/events/command-handler.ts) gives a refusal the version and state it was decided on,
// and tRPC (`data.current`) and REST (`error.current`) answer it, so a client that lost a race or
// repeated an action sees the state it lost to without asking again.
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { createTaskRestHandlers } from "../../server/api/rest";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness } from "../helpers/tasks";

let db: TestDatabase;
let api: ApiFixture;
let operator: CurrentUser;
let token: string;
let projectId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  operator = await api.user("operator");
  token = (await api.caller(operator).tokens.create({ name: "conflicts" })).token;
  projectId = await createHarness(db).project("conflicts", {
    coder: [{ reply: "p" }],
    reviewer: [{ reply: "r" }],
    tester: [{ reply: "t" }],
  });
});

const start = async () => (await api.caller(operator).tasks.start({ projectId, prompt: "Fix sum()", mode: "proposal" })).sessionId;
const lastVersion = async (id: string) => (await db.store.readStream(id)).at(-1)!.version;

describe("a conflict answers where the session stands", () => {
  it("a cancel of a cancelled session: 409 with its version and state, over REST and over tRPC alike", async () => {
    const id = await start();
    await api.caller(operator).tasks.cancel({ sessionId: id });
    const current = { version: await lastVersion(id), fsm: "cancelled", status: "finished" };

    const rest = createTaskRestHandlers(api.source);
    const res = await rest.cancel(
      new Request(`http://cats.test/api/tasks/${id}/cancel`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{}",
      }),
      { params: Promise.resolve({ id }) },
    );
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: { code: "CONFLICT", message: expect.any(String), current } });

    const trpc = await handleTrpc(
      new Request("http://cats.test/api/trpc/tasks.cancel", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ sessionId: id }),
      }),
      createContextFactory(api.source),
    );
    expect(trpc.status).toBe(409);
    expect(await trpc.json()).toMatchObject({ error: { data: { code: "CONFLICT", httpStatus: 409, current } } });
    expect(await lastVersion(id)).toBe(current.version); // nothing recorded by either
  });

  it("two cancels at once: one wins, the other is refused with the state the winner left", async () => {
    const id = await start();
    const results = await Promise.allSettled([0, 1].map(() => api.caller(operator).tasks.cancel({ sessionId: id })));
    const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason as { code: string; cause: { details: unknown } }] : []));
    expect([won.length, lost.length]).toEqual([1, 1]);
    expect(lost[0]!.code).toBe("CONFLICT");
    expect(lost[0]!.cause.details).toMatchObject({ current: { version: won[0]!.version, fsm: "cancelled", status: "finished" } });
  });
});
