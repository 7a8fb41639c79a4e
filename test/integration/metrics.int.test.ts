// /metrics (docs/operations.md, "Metrics"): during a real review loop (a fake `claude` coder
// and an HTTP brain reviewer that report usage, a scripted tester) on an in-process runner,
// the web server's handler (/api/metrics) and the runner's metrics server both answer in
// Prometheus' text format, and each family moves as the run did: one outcome, one pickup and
// one wall time per step, the appended events, the stubs' tokens and their cost, the live
// subscribers. A scrape without the token, when one is set, is refused. A runner process
// started with CATCAFE_METRICS_PORT serves its own /metrics (its sandbox state, its pool).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsResponse } from "../../server/api/metrics";
import { databaseCallGate } from "../../server/brains/rate-limit";
import type { Runner } from "../../server/runner/runner";
import { scheduleStep } from "../../server/runner/dispatch";
import { startMetricsServer, type MetricsServer } from "../../server/metrics/server";
import { sessionEventsListener } from "../../server/sessions/view/listener";
import { startTask } from "../../server/tasks/commands";
import { allowAgents } from "../helpers/access";
import { stubAccess, type BrainStub } from "../helpers/brains-stub";
import { createTestDatabase, testActor, uniqueId, type TestDatabase } from "../helpers/db";
import { hasFamily, sample } from "../helpers/metrics";
import { freePort } from "../helpers/ports";
import { spawnRunnerProcess } from "../helpers/runner-process";
import { createHarness, testPlan, type Harness } from "../helpers/tasks";
import {
  BRAIN_COST,
  BRAIN_MODEL,
  BRAIN_TOKENS,
  CLI_COST,
  CLI_MODEL,
  CLI_TOKENS,
  startUsageBrain,
  USAGE_PRICING,
  writeFakeClaude,
} from "../helpers/usage";

const TOKEN = "metrics-test-token-0123456789";
const KEY_ENV = "CATCAFE_TEST_METRICS_KEY";

let db: TestDatabase;
let h: Harness;
let brain: BrainStub;
let runnerMetrics: MetricsServer;
let runner: Runner;

beforeAll(async () => {
  process.env[KEY_ENV] = "metrics-test-key";
  db = await createTestDatabase();
  await allowAgents(db, { agentEnv: [KEY_ENV] });
  h = createHarness(db);
  runner = await h.startRunner(undefined, { concurrency: 2 });
  brain = await startUsageBrain();
  runnerMetrics = await startMetricsServer({ port: 0, token: TOKEN });
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await runnerMetrics?.close();
  await brain?.close();
});

/** The fake `claude` of the usage tests, retrying its provider request once first (Claude Code's api_retry event). */
function writeRetryingClaude(dir: string): string {
  const file = writeFakeClaude(dir);
  const retry = {
    type: "system",
    subtype: "api_retry",
    attempt: 1,
    max_retries: 3,
    retry_delay_ms: 10,
    error_status: 429,
    error: "rate_limit",
  };
  const script = fs.readFileSync(file, "utf8").replace("for (const line of [", `for (const line of [${JSON.stringify(retry)},`);
  expect(script).toContain("api_retry");
  fs.writeFileSync(file, script, { mode: 0o755 });
  return file;
}

/** The web server's handler, as a scrape from `address` (X-Forwarded-For, as Next.js sets it) would reach it. */
async function scrapeWeb(
  options: { address?: string; authorization?: string | null; token?: string } = { token: TOKEN },
): Promise<Response> {
  const headers = new Headers({ "x-forwarded-for": options.address ?? "127.0.0.1" });
  const authorization = options.authorization === undefined && options.token ? `Bearer ${options.token}` : options.authorization;
  if (authorization) headers.set("authorization", authorization);
  return metricsResponse(new Request("http://localhost/api/metrics", { headers }), () => db.pool, {
    env: options.token ? { CATCAFE_METRICS_TOKEN: options.token } : {},
    pricing: () => USAGE_PRICING,
  });
}

async function webText(): Promise<string> {
  const res = await scrapeWeb();
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

async function runnerText(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${runnerMetrics.address.port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

describe("metrics during a review loop", () => {
  let before: { web: string; runner: string };
  let after: { web: string; runner: string };
  let sessionId: string;
  const projectId = `metrics-${uniqueId("p").slice(2, 8)}`;

  beforeAll(async () => {
    await h.project(
      projectId,
      {
        coder: {
          kind: "claude",
          id: "claude-coder",
          command: writeRetryingClaude(path.join(path.dirname(h.repo), "bin")),
          apiKeyEnv: KEY_ENV,
        },
        reviewer: { kind: "openai", id: "gpt-reviewer", baseUrl: brain.url, model: BRAIN_MODEL, rateLimit: { minIntervalMs: 0 } },
        tester: [{ reply: testPlan() }],
      },
      { settings: stubAccess },
    );
    before = { web: await webText(), runner: await runnerText() };
    ({ sessionId } = await startTask(
      { store: db.store, pool: db.pool },
      { projectId, prompt: "Fix sum()", mode: "implementation" },
      testActor,
    ));
    const done = await h.waitFor(sessionId, "the session to finish", (s) => s.status === "finished");
    expect(done.outcome).toBe("approved");
    after = { web: await webText(), runner: await runnerText() };
  }, 90_000);

  const moved = (which: "web" | "runner", name: string, labels: Record<string, string> = {}) =>
    sample(after[which], name, labels) - sample(before[which], name, labels);

  it("counts one completed outcome, one pickup and one wall time per step, by kind", async () => {
    const events = await db.store.readStream(sessionId);
    const kindOf = new Map(
      events
        .filter((e) => e.type === "StepScheduled")
        .map((e) => [(e.data as { stepId: string }).stepId, (e.data as { kind: string }).kind]),
    );
    const perKind = (type: string) => {
      const n = new Map<string, number>();
      for (const e of events.filter((e) => e.type === type)) {
        const kind = kindOf.get((e.data as { stepId: string }).stepId)!;
        n.set(kind, (n.get(kind) ?? 0) + 1);
      }
      return n;
    };
    const completed = perKind("StepCompleted");
    const started = perKind("StepStarted");
    // The coder, the tester's plan, the tests, the reviewer: steps of more than one kind.
    expect([...completed.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
    expect(completed.size).toBeGreaterThanOrEqual(2);
    for (const [kind, n] of completed) {
      const labels = { kind, outcome: "completed", error_class: "" };
      expect(moved("runner", "catcafe_step_outcomes_total", labels), kind).toBe(n);
      expect(moved("runner", "catcafe_step_duration_seconds_count", { kind, outcome: "completed" }), kind).toBe(n);
    }
    for (const [kind, n] of started) expect(moved("runner", "catcafe_step_pickup_seconds_count", { kind }), kind).toBe(n);
    expect(moved("runner", "catcafe_step_outcomes_total", { outcome: "failed" })).toBe(0);
    // The same process's families, whichever endpoint serves them.
    expect(moved("web", "catcafe_step_outcomes_total")).toBe(moved("runner", "catcafe_step_outcomes_total"));
  });

  it("counts the CLI's provider retry, by agent kind", async () => {
    const retried = (await db.store.readStream(sessionId)).filter((e) => e.type === "ProviderRetried");
    expect(retried).toHaveLength(1);
    expect(moved("runner", "catcafe_provider_retries_total", { agent_kind: "claude" })).toBe(1);
    expect(moved("runner", "catcafe_events_appended_total", { category: "step", type: "ProviderRetried" })).toBe(1);
  });

  it("counts every event appended, by category and type", async () => {
    const events = await db.store.readStream(sessionId);
    for (const type of ["StepScheduled", "StepStarted", "StepCompleted"]) {
      const n = events.filter((e) => e.type === type).length;
      expect(moved("runner", "catcafe_events_appended_total", { category: "step", type }), type).toBe(n);
    }
    expect(moved("runner", "catcafe_events_appended_total", { category: "session", type: "TaskStarted" })).toBe(1);
    expect(moved("runner", "catcafe_events_appended_total")).toBeGreaterThanOrEqual(events.length);
  });

  it("shows the stubs' tokens and their cost by project and model (the usage totals)", () => {
    const of = (model: string, direction: string) => sample(after.web, "catcafe_usage_tokens", { project: projectId, model, direction });
    expect(of(CLI_MODEL, "input")).toBe(CLI_TOKENS.inputTokens);
    expect(of(CLI_MODEL, "output")).toBe(CLI_TOKENS.outputTokens);
    expect(of(BRAIN_MODEL, "input")).toBe(BRAIN_TOKENS.inputTokens);
    expect(of(BRAIN_MODEL, "output")).toBe(BRAIN_TOKENS.outputTokens);
    expect(of(BRAIN_MODEL, "cached_input")).toBe(BRAIN_TOKENS.cachedInputTokens);
    expect(of(CLI_MODEL, "cached_input")).toBe(CLI_TOKENS.cachedInputTokens);
    expect(sample(before.web, "catcafe_usage_tokens", { project: projectId })).toBe(0);
    expect(sample(after.web, "catcafe_usage_cost", { project: projectId, model: CLI_MODEL, currency: "EUR" })).toBeCloseTo(CLI_COST, 9);
    expect(sample(after.web, "catcafe_usage_cost", { project: projectId, model: BRAIN_MODEL, currency: "EUR" })).toBeCloseTo(BRAIN_COST, 9);
  });

  it("counts a call held back by a brain's shared rate limit, and the time it waited", async () => {
    const gate = databaseCallGate(db.pool);
    const brainTurn = { brainId: "metrics-brain", baseUrl: "http://brain.test", minIntervalMs: 300 };
    const start = await runnerText();
    const first = await gate.waitTurn(brainTurn, new AbortController().signal);
    await first.release();
    const second = await gate.waitTurn(brainTurn, new AbortController().signal);
    await second.release();
    const end = await runnerText();
    expect(
      sample(end, "catcafe_rate_limit_waits_total", { brain: "metrics-brain" }) -
        sample(start, "catcafe_rate_limit_waits_total", { brain: "metrics-brain" }),
    ).toBe(1);
    expect(sample(end, "catcafe_rate_limit_wait_seconds_total", { brain: "metrics-brain" })).toBeGreaterThan(0.1);
  });

  it("reads the queue, the pool and the default process metrics at scrape time", async () => {
    for (const name of [
      "catcafe_steps_pending",
      "catcafe_steps_running",
      "catcafe_pg_pool_clients",
      "catcafe_pg_pool_idle_clients",
      "catcafe_pg_pool_waiting_clients",
      "process_cpu_user_seconds_total",
      "nodejs_eventloop_lag_seconds",
    ])
      expect(hasFamily(after.web, name), name).toBe(true);
    expect(sample(after.web, "catcafe_pg_pool_clients", { pool: "web" })).toBeGreaterThan(0);
    // With no runner, a step scheduled waits: the pending gauge, read from the steps table at the scrape, shows it.
    await runner.stop();
    expect(sample(await webText(), "catcafe_steps_pending", { kind: "echo" })).toBe(0);
    await scheduleStep(db.store, { sessionId, kind: "echo", input: { message: "waits", delayMs: 0 } }, { actor: testActor });
    expect(sample(await webText(), "catcafe_steps_pending", { kind: "echo" })).toBe(1);
    expect(sample(await webText(), "catcafe_steps_running")).toBe(0);
  });

  it("counts the live subscribers of this web process", async () => {
    const listener = sessionEventsListener(db.pool);
    const base = sample(await webText(), "catcafe_live_subscribers");
    const unsubscribe = await listener.subscribe(sessionId, () => {});
    try {
      expect(sample(await webText(), "catcafe_live_subscribers")).toBe(base + 1);
    } finally {
      unsubscribe();
    }
    expect(sample(await webText(), "catcafe_live_subscribers")).toBe(base);
  });
});

describe("metrics access", () => {
  it("the web handler serves only a bearer of the token: without it, or with none set, it refuses", async () => {
    expect((await scrapeWeb({ token: TOKEN, authorization: null })).status).toBe(401);
    expect((await scrapeWeb({ token: TOKEN, authorization: "Bearer wrong-token-wrong-token" })).status).toBe(401);
    const ok = await scrapeWeb({ token: TOKEN, address: "8.8.8.8", authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("catcafe_events_appended_total");
    // A token too short to be one refuses every scrape, naming the variable, never its value.
    const malformed = await scrapeWeb({ token: "tiny-tok", authorization: "Bearer tiny-tok" });
    expect(malformed.status).toBe(500);
    const why = await malformed.text();
    expect(why).toContain("CATCAFE_METRICS_TOKEN");
    expect(why).not.toContain("tiny-tok");
    // Without a token the web server serves nobody: the address a request claims proves nothing.
    for (const address of ["8.8.8.8", "127.0.0.1", "10.0.0.7"]) {
      const refused = await scrapeWeb({ address });
      expect(refused.status, address).toBe(403);
      expect(await refused.text()).toMatch(/^the web server's metrics need CATCAFE_METRICS_TOKEN/);
    }
  });

  it("the runner's metrics server refuses a scrape without its token, and serves nothing but GET /metrics", async () => {
    const url = `http://127.0.0.1:${runnerMetrics.address.port}`;
    const refused = await fetch(`${url}/metrics`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain("catcafe_");
    expect((await fetch(`${url}/metrics`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await fetch(`${url}/other`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });

  it("a runner process with CATCAFE_METRICS_PORT serves its /metrics on loopback: its sandbox state and its pool", async () => {
    const port = await freePort();
    const id = `metrics-runner-${uniqueId("r").slice(2, 8)}`;
    const child = spawnRunnerProcess({
      databaseUrl: db.url,
      id,
      stateDir: h.stateDir,
      env: { CATCAFE_METRICS_PORT: String(port) },
    });
    try {
      let text = "";
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
        const registered = await db.pool.query<{ sandbox_on: boolean }>("SELECT sandbox_on FROM runners WHERE id = $1", [id]);
        if (res?.status === 200 && registered.rows[0]) {
          text = await res.text();
          // As registered: whether this runner runs agents sandboxed.
          expect(sample(text, "catcafe_runner_sandbox_on")).toBe(registered.rows[0].sandbox_on ? 1 : 0);
          break;
        }
      }
      expect(hasFamily(text, "catcafe_runner_sandbox_on")).toBe(true);
      expect(sample(text, "catcafe_pg_pool_clients", { pool: "runner" })).toBeGreaterThan(0);
      expect(hasFamily(text, "catcafe_steps_pending")).toBe(true);
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
});
