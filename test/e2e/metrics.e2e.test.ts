// /metrics for real (docs/operations.md, "Metrics"): `npm start` with CATCAFE_METRICS_TOKEN and
// CATCAFE_METRICS_PORT; the web server answers /metrics (the rewrite) and /api/metrics in
// Prometheus' text format to a bearer of the token only, and its runner serves its own on the
// port, on loopback, under the same token.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasFamily, sample } from "../helpers/metrics";
import { freePort } from "../helpers/ports";
import { LIVE_SERVER_TIMEOUT_MS, startLiveServer, type LiveServer } from "../helpers/live-server";

const TOKEN = "e2e-metrics-token-0123456789";
let server: LiveServer;
let runnerPort: number;

beforeAll(async () => {
  runnerPort = await freePort();
  server = await startLiveServer("metrics", { CATCAFE_METRICS_TOKEN: TOKEN, CATCAFE_METRICS_PORT: String(runnerPort) });
}, LIVE_SERVER_TIMEOUT_MS);
afterAll(async () => {
  await server?.stop();
});

const bearer = { authorization: `Bearer ${TOKEN}` };

describe("metrics under npm start", () => {
  it("the web server serves /metrics and /api/metrics to a bearer of the token, and refuses a scrape without it", async () => {
    for (const p of ["/metrics", "/api/metrics"]) {
      const refused = await fetch(`${server.url}${p}`);
      expect(refused.status, p).toBe(401);
      expect(await refused.text()).not.toContain("catcafe_");
      const res = await fetch(`${server.url}${p}`, { headers: bearer });
      expect(res.status, p).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      for (const name of ["catcafe_steps_pending", "catcafe_usage_tokens", "catcafe_live_subscribers", "catcafe_events_appended_total"])
        expect(hasFamily(text, name), name).toBe(true);
      expect(sample(text, "catcafe_pg_pool_clients", { pool: "web" })).toBeGreaterThan(0);
      expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    }
  });

  it("its runner serves its own /metrics on the port, on loopback, under the same token", async () => {
    const url = `http://127.0.0.1:${runnerPort}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    const res = await fetch(url, { headers: bearer });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(hasFamily(text, "catcafe_runner_sandbox_on")).toBe(true);
    expect(sample(text, "catcafe_pg_pool_clients", { pool: "runner" })).toBeGreaterThan(0);
    // The demo's proposal task was scheduled and picked up by this runner.
    expect(sample(text, "catcafe_step_pickup_seconds_count")).toBeGreaterThan(0);
  });
});
