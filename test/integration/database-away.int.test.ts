// The database away, as a person or a script meets it: the web process's connections (Prisma's
// and the event store's) go through a TCP proxy, which is stopped as PostgreSQL stops (open
// connections ended by the server, new ones refused). Every way in (the session cookie, an API
// token, MCP), every procedure of the router and every REST route answers 503 with
// Retry-After, never 500, and answers again once it is back.
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createContextFactory, type ContextSource } from "../../server/api/context";
import { handleTrpc } from "../../server/api/handler";
import { createMcpHandlers } from "../../server/api/mcp";
import { createModeRestHandlers, createSessionExportHandler, createTaskRestHandlers } from "../../server/api/rest";
import { createAppEventStore } from "../../server/app-store";
import { PrismaClient } from "../../server/db/generated/client";
import { createPool } from "../../server/db/pool";
import { createApiFixture, TEST_SECRET, type ApiFixture } from "../helpers/api";
import { proceduresOf } from "../helpers/command-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { createHarness } from "../helpers/tasks";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";

const APP = "catcafe-away";

let db: TestDatabase;
let api: ApiFixture;
let proxy: TcpProxy;
let source: () => ContextSource;
let prisma: PrismaClient;
let pool: ReturnType<typeof createPool>;
let token: string;
let cookie: string;
let projectId: string;
let sessionId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  const operator = await api.user("operator");
  token = (await api.caller(operator).tokens.create({ name: "away" })).token;
  cookie = await api.sessionCookie(operator.id);
  projectId = await createHarness(db).project("away", { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }] });
  sessionId = (await api.caller(operator).tasks.start({ projectId, prompt: "Fix sum()", mode: "proposal" })).sessionId;

  proxy = await startTcpProxy(Number(new URL(db.url).port));
  const url = new URL(proxy.url(db.url));
  url.searchParams.set("application_name", APP);
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url.toString(), max: 3, connectionTimeoutMillis: 1_000 }) });
  pool = createPool(proxy.url(db.url), 3, { applicationName: APP, connectTimeoutMs: 1_000 });
  const deps = { prisma, pool, store: createAppEventStore(pool) };
  source = () => ({ deps, secret: TEST_SECRET });
});

afterAll(async () => {
  await prisma.$disconnect();
  await pool.end();
  await proxy.close();
});

const json = { "content-type": "application/json" };
const bearer = () => ({ authorization: `Bearer ${token}` });

/** Each way in, as its route is called: the answer's status, Retry-After and body. */
function routes(): Array<[string, () => Promise<Response>]> {
  const rest = createTaskRestHandlers(source);
  const exported = createSessionExportHandler(source);
  const mcp = createMcpHandlers(source);
  const trpc = async (path: string, init: RequestInit) =>
    handleTrpc(new Request(`http://cats.test/api/trpc/${path}`, init), createContextFactory(source));
  const params = { params: Promise.resolve({ id: sessionId }) };
  return [
    ["tRPC query, cookie", () => trpc(`sessions.list?input=${encodeURIComponent(JSON.stringify({}))}`, { headers: { cookie } })],
    ["tRPC query, token", () => trpc(`sessions.list?input=${encodeURIComponent(JSON.stringify({}))}`, { headers: bearer() })],
    [
      "tRPC mutation, token",
      () =>
        trpc("tasks.start", {
          method: "POST",
          headers: { ...json, ...bearer() },
          body: JSON.stringify({ projectId, prompt: "x", mode: "proposal" }),
        }),
    ],
    [
      "REST start, token",
      () =>
        rest.start(
          new Request("http://cats.test/api/tasks", {
            method: "POST",
            headers: { ...json, ...bearer() },
            body: JSON.stringify({ projectId, prompt: "x", mode: "proposal" }),
          }),
          undefined,
        ),
    ],
    ["REST export, token", () => exported(new Request(`http://cats.test/api/sessions/${sessionId}/export`, { headers: bearer() }), params)],
    [
      "MCP, token",
      () =>
        mcp.POST(
          new Request("http://cats.test/api/mcp", {
            method: "POST",
            headers: { ...json, accept: "application/json, text/event-stream", ...bearer() },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          }),
        ),
    ],
  ];
}

async function answer(call: () => Promise<Response>) {
  const res = await call();
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
}

describe("the database away", () => {
  it("every way in answers 503 with Retry-After, over and over, never 500; and again once it is back", async () => {
    for (const [name, call] of routes())
      expect([name, (await answer(call)).status]).toEqual([name, name.startsWith("REST start") ? 201 : 200]);

    // As PostgreSQL stops: the server ends its open connections (57P01), then refuses new ones.
    await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [APP]);
    await proxy.stop();
    for (let round = 0; round < 3; round++) {
      for (const [name, call] of routes()) {
        const { status, retryAfter, body } = await answer(call);
        expect({ name, status, retryAfter }).toEqual({ name, status: 503, retryAfter: expect.stringMatching(/^\d+$/) });
        expect(body).not.toMatch(/internal error/i);
      }
    }
    // Every procedure of the router, and every REST route, signed in either way.
    const unavailable: string[] = [];
    for (const [path, kind] of [
      ...proceduresOf("query").map((p) => [p, "query"] as const),
      ...proceduresOf("mutation").map((p) => [p, "mutation"] as const),
    ]) {
      for (const auth of [{ cookie }, bearer()]) {
        const res = await handleTrpc(
          kind === "query"
            ? new Request(`http://cats.test/api/trpc/${path}?input=${encodeURIComponent("{}")}`, { headers: auth })
            : new Request(`http://cats.test/api/trpc/${path}`, {
                method: "POST",
                headers: { ...json, ...auth, origin: "http://cats.test" },
                body: "{}",
              }),
          createContextFactory(source),
        );
        unavailable.push(`${path} ${"cookie" in auth ? "cookie" : "token"}: ${res.status} ${res.headers.get("retry-after") ?? "-"}`);
      }
    }
    const rest = { ...createTaskRestHandlers(source), ...createModeRestHandlers(source) };
    for (const [name, handler] of Object.entries(rest)) {
      const res = await (handler as (req: Request, route: unknown) => Promise<Response>)(
        new Request(`http://cats.test/api/x/${sessionId}`, {
          method: name.startsWith("get") || name === "listModes" ? "GET" : "POST",
          headers: { ...json, ...bearer() },
          body: name.startsWith("get") || name === "listModes" ? null : "{}",
        }),
        { params: Promise.resolve({ id: sessionId }) },
      );
      unavailable.push(`REST ${name}: ${res.status} ${res.headers.get("retry-after") ?? "-"}`);
    }
    expect(unavailable.filter((line) => !/: 503 \d+$/.test(line))).toEqual([]);

    // Back: each pool replaces its broken connections, so a way in may take a try or two.
    await proxy.start();
    for (const [name, call] of routes()) {
      const ok = name.startsWith("REST start") ? 201 : 200;
      const statuses: number[] = [];
      while (statuses.at(-1) !== ok && statuses.length < 5) statuses.push((await answer(call)).status);
      expect({ name, statuses: statuses.filter((s) => s !== 503) }).toEqual({ name, statuses: [ok] });
    }
  });
});
