// The web server under load and with unknown paths, against a live `npm start` whose pool is
// deliberately tiny (2 connections, 300 ms wait): a burst of 100 task starts gets no 500,
// only successes or 503s with Retry-After; through the typed client (which retries 503s)
// every start lands; an unknown /api path answers JSON 404 in the API's error shape.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCatCafeClient, createTokenWithPassword } from "../../lib/client";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";
import { processesMentioning } from "../helpers/processes";

let server: LiveServer;
let token: string;

beforeAll(async () => {
  server = await startLiveServer("web-load", { CATCAFE_WEB_POOL_MAX: "2", CATCAFE_WEB_POOL_WAIT_MS: "300" });
  // Signing in shares the two connections with whatever the server does at start: try again.
  for (let attempt = 1; ; attempt++) {
    try {
      token = (await createTokenWithPassword({ url: server.url, email: server.admin.email, password: server.admin.password })).token;
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}, LIVE_SERVER_TIMEOUT_MS);

afterAll(async () => {
  await server?.stop();
});

const startBody = JSON.stringify({ projectId: "demo", prompt: "Fix sum()", mode: "proposal" });

describe("the web server under load", () => {
  it("100 concurrent task starts over REST: no 500; a saturated pool answers 503 with Retry-After", async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${server.url}/api/tasks`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: startBody,
        }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), body: (await r.json()) as unknown })),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0); // the pool was saturated
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.retryAfter).toMatch(/^\d+$/);
      expect(a.body).toMatchObject({ error: { code: "UNAVAILABLE" } });
    }
  });

  it("100 concurrent task starts through the typed client: it retries the 503s, and every start lands", async () => {
    const client = createCatCafeClient({ url: server.url, token });
    const started = await Promise.all(
      Array.from({ length: 100 }, () => client.tasks.start.mutate({ projectId: "demo", prompt: "Fix sum()", mode: "proposal" })),
    );
    expect(new Set(started.map((s) => s.sessionId)).size).toBe(100);
  });

  it("an unknown /api path answers a JSON 404 in the API's error shape, never an HTML page", async () => {
    for (const [method, path] of [
      ["GET", "/api/nope"],
      ["POST", "/api/tasks/s-123/nonsense"],
    ] as const) {
      const r = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toMatch(/application\/json/);
      expect(await r.json()).toMatchObject({ error: { code: "NOT_FOUND", message: expect.stringContaining(path) } });
    }
  });

  it("POST /api/tasks/:id/confirm confirms (the REST alias), and again is 409 CONFLICT", async () => {
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const first = await fetch(`${server.url}/api/tasks/${server.demoSessionId}/confirm`, { method: "POST", headers, body: "{}" });
    expect(first.status).toBe(200);
    const again = await fetch(`${server.url}/api/tasks/${server.demoSessionId}/confirm`, { method: "POST", headers, body: "{}" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: "CONFLICT" } });
  });

  it("a path that is not percent-encoded UTF-8, or holds a NUL, is a 400 naming its segment, on every route, signed in or not", async () => {
    const paths = [
      ["GET", "/api/sessions/%ED%A0%80/export", "%ED%A0%80"],
      ["GET", "/api/sessions/%FF/export", "%FF"],
      ["GET", "/api/sessions/a%00b/export", "a%00b"],
      ["POST", "/api/tasks/%ED%A0%80/confirm", "%ED%A0%80"],
      ["POST", "/api/tasks/a%00b/confirm", "a%00b"],
      ["GET", "/api/modes/%FF", "%FF"],
    ] as const;
    for (const [method, path, segment] of paths) {
      for (const headers of [{ authorization: `Bearer ${token}` }, {}] as Array<Record<string, string>>) {
        const r = await fetch(`${server.url}${path}`, { method, headers: { ...headers, "content-type": "application/json" } });
        expect([path, r.status]).toEqual([path, 400]);
        expect(await r.json()).toEqual({ error: { code: "INVALID_INPUT", message: expect.stringContaining(`"${segment}"`) } });
      }
    }
    const page = await fetch(`${server.url}/sessions/%ED%A0%80`);
    expect([page.status, await page.text()]).toEqual([400, expect.stringContaining("not percent-encoded UTF-8")]);
  });

  it("the web server and the runner do not keep ADMIN_PASSWORD in their environment after start", () => {
    const children = processesMentioning(server.dataDir).filter((p) => /next|runner\/main\.ts/.test(p.commandLine));
    expect(children.length).toBeGreaterThanOrEqual(2);
    for (const p of children) {
      const environ = fs.readFileSync(`/proc/${p.pid}/environ`, "utf8");
      expect(environ, p.commandLine).not.toContain(server.admin.password);
      expect(environ.split("\0").some((kv) => kv.startsWith("ADMIN_PASSWORD="))).toBe(false);
    }
  });
});
