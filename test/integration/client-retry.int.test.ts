// The clients' retries with one key per call (lib/client/retry.ts): the CLI and `catcafe mcp`
// talk to the API through a proxy that loses the first answer to a task start after the server
// has carried it out. Each sends the start again with the same Idempotency-Key, gets the first
// answer, and reports success; the task is started once.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { startApiServer, startDroppingProxy, type ApiServer } from "../helpers/api-server";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { cleanEnv, run } from "../helpers/live-server";
import { createHarness, sessionsPrompted } from "../helpers/tasks";

const BIN = path.resolve(import.meta.dirname, "../../bin/catcafe.mjs");

let db: TestDatabase;
let api: ApiFixture;
let server: ApiServer;
let operator: CurrentUser;
let token: string;
let projectId: string;
let home: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = createApiFixture(db);
  operator = await api.user("operator");
  token = (await api.caller(operator).tokens.create({ name: "retry" })).token;
  projectId = await createHarness(db).project("retry", { coder: [{ reply: "p" }], reviewer: [{ reply: "r" }], tester: [{ reply: "t" }] });
  server = await startApiServer(api.source);
  home = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-retry-"));
});

afterAll(async () => {
  await server.close();
  fs.rmSync(home, { recursive: true, force: true });
});

const env = (url: string) => cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), CATCAFE_URL: url, CATCAFE_TOKEN: token });

/** A proxy that loses the answer to the first task start. */
const losingFirstStart = () =>
  startDroppingProxy(server.url, (request, seen) => request.path.startsWith("/api/trpc/tasks.start") && !seen.some((s) => s.dropped));

describe("a lost answer, retried with the same key", () => {
  it("catcafe task start: the start is carried out once and the CLI reports the session it started", async () => {
    const proxy = await losingFirstStart();
    try {
      const prompt = "Fix sum() from the CLI";
      const r = await run(BIN, ["task", "start", "--project", projectId, prompt, "--json"], { env: env(proxy.url), timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      const sessions = await sessionsPrompted(db.pool, prompt);
      expect(sessions).toHaveLength(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ sessionId: sessions[0] });
      const starts = proxy.seen.filter((s) => s.path.startsWith("/api/trpc/tasks.start"));
      expect(starts.map((s) => s.dropped)).toEqual([true, false]);
      expect(starts[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
      expect(starts[1]!.idempotencyKey).toBe(starts[0]!.idempotencyKey);
    } finally {
      await proxy.close();
    }
  }, 90_000);

  it("catcafe mcp: start_task is carried out once and the tool answers with the session it started", async () => {
    const proxy = await losingFirstStart();
    const client = new Client({ name: "retry-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({ command: BIN, args: ["mcp"], env: env(proxy.url) as Record<string, string>, cwd: home, stderr: "pipe" }),
    );
    try {
      const prompt = "Fix sum() from MCP";
      const started = await client.callTool({ name: "start_task", arguments: { projectId, prompt, mode: "proposal" } });
      const text = (started.content as Array<{ text: string }>)[0]!.text;
      expect(started.isError, text).toBeFalsy();
      const sessions = await sessionsPrompted(db.pool, prompt);
      expect(sessions).toHaveLength(1);
      expect(JSON.parse(text)).toMatchObject({ sessionId: sessions[0] });
      const starts = proxy.seen.filter((s) => s.path.startsWith("/api/trpc/tasks.start"));
      expect(starts.map((s) => [s.dropped, s.idempotencyKey === starts[0]!.idempotencyKey])).toEqual([
        [true, true],
        [false, true],
      ]);
    } finally {
      await client.close();
      await proxy.close();
    }
  }, 90_000);
});
