// Agent egress by allowlist (docs/security.md "Network"): a sandboxed command agent with
// network reaches its provider and the hosts an admin allows through the run's proxy, and
// nothing else — not the database, not the web app, not any other port on the host's
// loopback, not a host it was not given — whether it asks the proxy or connects directly.
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandAgent } from "../../server/agents/command";
import { appRegistry } from "../../server/events/catalog";
import { sandboxStatus } from "../../server/process/sandbox";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

/** What the agent tries, from inside: JSON lines of { name, outcome }. */
const PROBE = String.raw`
const http = require("node:http");
const net = require("node:net");
const proxy = new URL(process.env.HTTPS_PROXY);
const [targets] = [JSON.parse(process.argv[2])];
function direct(host, port) {
  return new Promise((resolve) => {
    const s = net.connect(port, host);
    s.setTimeout(3000, () => { s.destroy(); resolve("timeout"); });
    s.on("connect", () => { s.destroy(); resolve("connected"); });
    s.on("error", (e) => resolve(e.code || "error"));
  });
}
function tunnel(host, port) {
  return new Promise((resolve) => {
    const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: host + ":" + port });
    req.on("connect", (res, socket) => {
      if (res.statusCode !== 200) { socket.destroy(); return resolve("proxy " + res.statusCode); }
      socket.write("GET /who HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
      let body = "";
      socket.on("data", (d) => (body += d));
      socket.on("end", () => resolve("answered " + body.split("\r\n\r\n")[1]));
      socket.on("error", (e) => resolve(e.code || "error"));
    });
    req.on("error", (e) => resolve(e.code || "error"));
    req.end();
  });
}
function plain(url) {
  return new Promise((resolve) => {
    const req = http.get({ host: proxy.hostname, port: proxy.port, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve(res.statusCode === 200 ? "answered " + body : "proxy " + res.statusCode));
    });
    req.on("error", (e) => resolve(e.code || "error"));
  });
}
(async () => {
  const out = {};
  for (const t of targets) out[t.name] = t.kind === "direct" ? await direct(t.host, t.port) : t.kind === "tunnel" ? await tunnel(t.host, t.port) : await plain(t.url);
  process.stdout.write(JSON.stringify(out));
})();
`;

let db: TestDatabase;
let dir: string;
let probe: string;
const servers: http.Server[] = [];

/** A local HTTP server answering who it is. */
async function standIn(name: string): Promise<number> {
  const server = http.createServer((_req, res) => res.end(name));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-egress-"));
  fs.chmodSync(dir, 0o755);
  probe = path.join(dir, "probe.cjs");
  fs.writeFileSync(probe, PROBE, { mode: 0o644 });
}, 120_000);

afterAll(async () => {
  for (const s of servers) s.close();
  await db?.pool.end();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a sandboxed agent's network (bubblewrap is installed where the tests run: .ci/run)", () => {
  it("bubblewrap works here", () => expect(sandboxStatus()).toEqual({ available: true, reason: null }));

  it("reaches the provider and the admin's hosts through the proxy, and nothing else", async () => {
    const provider = await standIn("provider");
    const external = await standIn("external stand-in");
    const web = await standIn("web app");
    const other = await standIn("another service");
    const dbPort = Number(new URL(db.url).port);
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-egress-ws-"));
    const targets = [
      { name: "provider through the proxy", kind: "tunnel", host: "127.0.0.1", port: provider },
      { name: "provider directly", kind: "direct", host: "127.0.0.1", port: provider },
      { name: "provider as plain HTTP", kind: "plain", url: `http://127.0.0.1:${provider}/who` },
      { name: "allowed name", kind: "tunnel", host: "models.example.test", port: external },
      { name: "database through the proxy", kind: "tunnel", host: "127.0.0.1", port: dbPort },
      { name: "database directly", kind: "direct", host: "127.0.0.1", port: dbPort },
      { name: "web through the proxy", kind: "tunnel", host: "127.0.0.1", port: web },
      { name: "web directly", kind: "direct", host: "127.0.0.1", port: web },
      { name: "web as plain HTTP", kind: "plain", url: `http://127.0.0.1:${web}/who` },
      { name: "other port", kind: "tunnel", host: "localhost", port: other },
      { name: "metadata address", kind: "tunnel", host: "169.254.169.254", port: 80 },
      { name: "a name not given", kind: "tunnel", host: "elsewhere.example.test", port: external },
    ];
    const agent = new CommandAgent({
      kind: "command",
      id: "prober",
      argv: [process.execPath, probe, JSON.stringify(targets)],
      prompt: "stdin",
      network: true,
    });
    const answer = await agent.invoke({
      role: "coder",
      prompt: "probe",
      context: [],
      workspace,
      invocation: 0,
      output: "text",
      signal: new AbortController().signal,
      deadline: Date.now() + 60_000,
      egress: {
        // The admin's word: the provider stub on the host's loopback, and a name that stands for an outside host.
        hosts: [`127.0.0.1:${provider}`, "models.example.test"],
        resolve: async (host) => (host === "models.example.test" || host === "elsewhere.example.test" ? ["127.0.0.1"] : [host]),
      },
    });
    expect(answer.sandboxed).toBe(true);
    const seen = JSON.parse(answer.text) as Record<string, string>;
    expect(seen).toEqual({
      "provider through the proxy": "answered provider",
      "provider directly": "connected",
      "provider as plain HTTP": "answered provider",
      "allowed name": "answered external stand-in",
      "database through the proxy": "proxy 403",
      "database directly": "ECONNREFUSED",
      "web through the proxy": "proxy 403",
      "web directly": "ECONNREFUSED",
      "web as plain HTTP": "proxy 403",
      "other port": "proxy 403",
      "metadata address": "proxy 403",
      "a name not given": "proxy 403",
    });
    // What the proxy refused, each once, for the step's record.
    expect(answer.egressRefused).toEqual([
      `127.0.0.1:${dbPort}`,
      `127.0.0.1:${web}`,
      `localhost:${other}`,
      "169.254.169.254:80",
      `elsewhere.example.test:${external}`,
    ]);
    // The timeline's line for the step says so.
    const output = {
      kind: "agent",
      agentId: "prober",
      raw: { blob: "0".repeat(64), size: 1, mediaType: "text/plain" },
      preview: "",
      simulated: false,
      egressRefused: answer.egressRefused,
    };
    expect(appRegistry.summarize("StepCompleted", { stepId: crypto.randomUUID(), attempt: 1, output })).toBe(
      `Step completed (attempt 1); the egress proxy refused ${answer.egressRefused!.join(", ")}`,
    );
    fs.rmSync(workspace, { recursive: true, force: true });
  }, 60_000);

  it("a command agent without network has none: not even the proxy", async () => {
    const web = await standIn("web app");
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-egress-ws-"));
    const script = path.join(dir, "direct.cjs");
    fs.writeFileSync(
      script,
      `require("node:net").connect(${web}, "127.0.0.1").on("connect", () => { console.log("connected"); process.exit(0); }).on("error", (e) => { console.log(e.code); });`,
      { mode: 0o644 },
    );
    const agent = new CommandAgent({ kind: "command", id: "offline", argv: [process.execPath, script], prompt: "stdin", network: false });
    const answer = await agent.invoke({
      role: "coder",
      prompt: "",
      context: [],
      workspace,
      invocation: 0,
      output: "text",
      signal: new AbortController().signal,
      deadline: Date.now() + 30_000,
      egress: { hosts: [`127.0.0.1:${web}`] },
    });
    expect(answer.text.trim()).toBe("ECONNREFUSED");
    fs.rmSync(workspace, { recursive: true, force: true });
  }, 60_000);
});
