// Numbers at the edge: a version past what PostgreSQL's int4 columns hold (2^31, 2^53 − 1) is
// refused as bad input naming its field (a 400 over HTTP), before any query; the largest one
// the column holds is still taken (and finds nothing past the stream's end).
import { beforeAll, describe, expect, it } from "vitest";
import { createContextFactory } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import type { CurrentUser } from "../../server/auth/request";
import { MAX_VERSION } from "../../server/events/versions";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { createTestDatabase } from "../helpers/db";
import { createHarness } from "../helpers/tasks";

let api: ApiFixture;
let admin: CurrentUser;
let cookie: string;
let sessionId: string;

beforeAll(async () => {
  const db = await createTestDatabase();
  api = createApiFixture(db);
  admin = await api.user("admin");
  cookie = await api.sessionCookie(admin.id);
  const projectId = await createHarness(db).project("edge", {
    coder: [{ reply: "p" }],
    reviewer: [{ reply: "r" }],
    tester: [{ reply: "t" }],
  });
  sessionId = (await api.caller(admin).tasks.start({ projectId, prompt: "Fix sum()", mode: "proposal" })).sessionId;
});

/** A tRPC call over HTTP as the dashboard makes it: its status and its error's message. */
async function call(path: string, input: unknown, kind: "query" | "mutation") {
  const url = `http://cats.test/api/trpc/${path}`;
  const init: RequestInit =
    kind === "query"
      ? { headers: { cookie } }
      : {
          method: "POST",
          headers: { cookie, "content-type": "application/json", origin: "http://cats.test" },
          body: JSON.stringify(input),
        };
  const res = await handleTrpc(
    new Request(kind === "query" ? `${url}?input=${encodeURIComponent(JSON.stringify(input))}` : url, init),
    createContextFactory(api.source),
  );
  const body = (await res.json()) as { error?: { message: string } };
  return { status: res.status, message: body.error?.message ?? null };
}

describe("versions at the edge", () => {
  const tooBig = [2 ** 31, 2 ** 53 - 1];
  const cases: Array<[string, "query" | "mutation", string, (v: number) => unknown]> = [
    ["sessions.timeline", "query", "afterVersion", (v) => ({ sessionId: () => sessionId, afterVersion: v })],
    ["conversations.get", "query", "atVersion", (v) => ({ sessionId: () => sessionId, atVersion: v })],
    ["sessions.fork", "mutation", "atVersion", (v) => ({ sessionId: () => sessionId, atVersion: v })],
    ["sessions.revert", "mutation", "iteration", (v) => ({ sessionId: () => sessionId, to: "planning", iteration: v })],
    ["settings.revert", "mutation", "version", (v) => ({ scope: "server", version: v })],
    ["settings.configureServer", "mutation", "expectedVersion", (v) => ({ expectedVersion: v })],
  ];
  const withSession = (input: unknown) =>
    Object.fromEntries(
      Object.entries(input as Record<string, unknown>).map(([k, v]) => [k, typeof v === "function" ? (v as () => string)() : v]),
    );

  it.each(cases)("%s: a %s's %s past an int4 is a 400 naming it", async (path, kind, field, input) => {
    for (const v of [...tooBig, -1]) {
      const answer = await call(path, withSession(input(v)), kind);
      expect(answer).toEqual({ status: 400, message: expect.stringContaining(field) });
    }
  });

  it("the largest version the column holds is taken: the timeline after it is empty", async () => {
    expect(await api.caller(admin).sessions.timeline({ sessionId, afterVersion: MAX_VERSION })).toEqual([]);
    expect((await api.caller(admin).sessions.timeline({ sessionId, afterVersion: 0 })).length).toBeGreaterThan(0);
  });
});
