// The per-brain rate limit shared through Postgres (req R5): two runner processes never
// call one brain closer together than its interval, a provider's Retry-After holds back
// every caller, waits are abortable and reported, and through the runner each wait is an
// event and a 429's Retry-After sets the retry time.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainAgent } from "../../server/agents/brain";
import { AgentError, type AgentRequest } from "../../server/agents/types";
import { databaseCallGate, tryTakeTurn, type RateLimitWait } from "../../server/brains/rate-limit";
import type { RecordedEvent } from "../../server/events/types";
import { startTask } from "../../server/tasks/commands";
import {
  sendError,
  startBrainStub,
  startEventStream,
  streamOf,
  STUB_PRIVATE_HOSTS,
  stubAccess,
  writeStream,
  type BrainStub,
} from "../helpers/brains-stub";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { startProcess, tail, waitForExit } from "../helpers/processes";
import { createHarness, type Harness } from "../helpers/tasks";

let db: TestDatabase;
const stubs: BrainStub[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});

/** A provider that streams `reply` to every call. */
async function okStub(reply = "ok", usage = { input: 5, output: 1 }): Promise<BrainStub> {
  const stub = await startBrainStub(async (_req, res) => {
    startEventStream(res);
    await writeStream(res, streamOf("openai", [reply], usage));
  });
  stubs.push(stub);
  return stub;
}

function brain(id: string, stub: BrainStub, minIntervalMs: number): BrainAgent {
  return new BrainAgent({ kind: "openai", id, baseUrl: stub.url, model: "stub-model", rateLimit: { minIntervalMs } });
}

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: "coder",
    prompt: "hi",
    context: [],
    workspace: process.cwd(),
    invocation: 0,
    signal: new AbortController().signal,
    deadline: Date.now() + 20_000,
    privateHosts: STUB_PRIVATE_HOSTS,
    ...overrides,
  };
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

describe("the shared brain rate limit", () => {
  it("two runner processes calling one brain: consecutive calls reach the provider at least the interval apart", async () => {
    const stub = await okStub();
    const intervalMs = 300;
    const calls = 4;
    const workers = ["A", "B"].map((worker) =>
      startProcess(process.execPath, ["--import", "tsx", path.resolve("test/helpers/brains-rate-limit-worker.ts")], {
        cwd: process.cwd(),
        env: {
          NODE_ENV: "test",
          PATH: process.env.PATH,
          DATABASE_URL: db.url,
          STUB_URL: stub.url,
          WORKER: worker,
          CALLS: String(calls),
          INTERVAL_MS: String(intervalMs),
          BRAIN_API_KEY: "k",
        },
      }),
    );
    for (const w of workers) {
      const status = await waitForExit(w, 60_000);
      expect(status.code, tail(w.output())).toBe(0);
    }
    const arrivals = stub.requests.map((r) => r.arrivedAt).sort((a, b) => a - b);
    expect(arrivals).toHaveLength(2 * calls);
    for (const gap of gaps(arrivals)) expect(gap).toBeGreaterThanOrEqual(intervalMs);
    const byWorker = (w: string) => stub.requests.filter((r) => r.body.includes(`worker ${w} call`)).length;
    expect([byWorker("A"), byWorker("B")]).toEqual([calls, calls]);
    // Each worker reported its waits; together they waited for most calls.
    const waits = workers.flatMap((w) =>
      w
        .output()
        .split("\n")
        .filter((l) => l.startsWith('{"wait"'))
        .map((l) => (JSON.parse(l) as { wait: number }).wait),
    );
    expect(waits.length).toBeGreaterThanOrEqual(calls);
    for (const w of waits) expect(w).toBeGreaterThan(0);
    const row = await db.pool.query("SELECT brain_id, base_url, holder FROM brain_rate_limits WHERE brain_id = 'shared-brain'");
    expect(row.rows).toEqual([{ brain_id: "shared-brain", base_url: stub.url, holder: null }]);
  });

  it("reports a wait once, with its length; another brain on the same endpoint is not held up", async () => {
    const stub = await okStub();
    const waits: RateLimitWait[] = [];
    const gate = databaseCallGate(db.pool, { onWait: (w) => void waits.push(w) });
    const a = brain("brain-a", stub, 400);
    const b = brain("brain-b", stub, 400);
    await Promise.all([
      a.invoke(request({ callGate: gate })),
      a.invoke(request({ callGate: gate })),
      b.invoke(request({ callGate: gate })),
    ]);
    expect(waits).toHaveLength(1);
    expect(waits[0]!.brain).toEqual({ brainId: "brain-a", baseUrl: stub.url, minIntervalMs: 400 });
    expect(waits[0]!.waitedMs).toBeGreaterThanOrEqual(390);
  });

  it("a provider's Retry-After holds back every caller of that brain", async () => {
    const stub = await okStub();
    stub.handle((_req, res) => sendError(res, "openai", 429, "slow down", { "retry-after": "1" }));
    const gate = databaseCallGate(db.pool);
    const agent = brain("brain-429", stub, 100);
    const err = await agent.invoke(request({ callGate: gate })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).retryAfterMs).toBe(1000);
    stub.handle(async (_req, res) => {
      startEventStream(res);
      await writeStream(res, streamOf("openai", ["ok"]));
    });
    await agent.invoke(request({ callGate: gate }));
    const [first, second] = stub.requests.map((r) => r.arrivedAt);
    expect(second! - first!).toBeGreaterThanOrEqual(1000);
  });

  it("cancel while waiting for a turn: cancelled at once, and nothing reaches the provider", async () => {
    const stub = await okStub();
    const held = await tryTakeTurn(db.pool, { brainId: "brain-held", baseUrl: stub.url }, 100, 10_000);
    expect(held.granted).toBe(true);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const startedAt = Date.now();
    const err = await brain("brain-held", stub, 100)
      .invoke(request({ callGate: databaseCallGate(db.pool), signal: controller.signal }))
      .catch((e: unknown) => e);
    expect((err as AgentError).errorClass).toBe("cancelled");
    expect(Date.now() - startedAt).toBeLessThan(1_000);
    const deadlineErr = await brain("brain-held", stub, 100)
      .invoke(request({ callGate: databaseCallGate(db.pool), deadline: Date.now() + 200 }))
      .catch((e: unknown) => e);
    expect((deadlineErr as AgentError).errorClass).toBe("timeout");
    expect(stub.requests).toHaveLength(0);
  });

  it("a holder that died is waited for no longer than its hold", async () => {
    const stub = await okStub();
    await tryTakeTurn(db.pool, { brainId: "brain-dead-holder", baseUrl: stub.url }, 100, 400);
    const startedAt = Date.now();
    await brain("brain-dead-holder", stub, 100).invoke(request({ callGate: databaseCallGate(db.pool) }));
    const took = Date.now() - startedAt;
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took).toBeLessThan(2_000);
  });
});

describe("brains through the runner", () => {
  let h: Harness;
  beforeAll(async () => {
    h = createHarness(db);
    await h.startRunner();
  });
  const deps = () => ({ store: db.store, pool: db.pool });
  const ofType = <T>(events: RecordedEvent[], type: string) => events.filter((e) => e.type === type) as (RecordedEvent & { data: T })[];

  it("each wait for a brain's turn is a RateLimitWaited event; outputs are not simulated and carry usage", async () => {
    const stub = await okStub("A considered opinion.", { input: 42, output: 4 });
    const agent = { kind: "openai", id: "brain-e2e", baseUrl: stub.url, model: "stub-model", rateLimit: { minIntervalMs: 500 } };
    const projectId = await h.project("brains-e2e", { coder: agent, reviewer: agent, tester: agent }, { settings: stubAccess });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Discuss sum()", mode: "proposal" }, testActor);
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    const events = await db.store.readStream(sessionId);
    const outputs = ofType<{ simulated: boolean; usage?: unknown; agentId: string }>(events, "AgentOutputRecorded");
    expect(outputs.map((o) => [o.data.agentId, o.data.simulated, o.data.usage])).toEqual(
      Array(3).fill(["brain-e2e", false, { inputTokens: 42, outputTokens: 4, model: "stub-model" }]),
    );
    const waited = ofType<{ stepId: string; brain: string; waitMs: number; minIntervalMs: number }>(events, "RateLimitWaited");
    expect(waited.length).toBeGreaterThanOrEqual(1);
    const stepIds = new Set(ofType<{ stepId: string }>(events, "StepScheduled").map((e) => e.data.stepId));
    for (const w of waited) {
      expect(w.data).toMatchObject({ brain: "brain-e2e", minIntervalMs: 500 });
      expect(w.data.waitMs).toBeGreaterThan(0);
      expect(stepIds.has(w.data.stepId)).toBe(true);
    }
    for (const gap of gaps(stub.requests.map((r) => r.arrivedAt))) expect(gap).toBeGreaterThanOrEqual(500);
  });

  it("a 429's Retry-After, longer than the backoff, sets when the step is retried", async () => {
    const stub = await okStub("Fine.");
    stub.handle((_req, res) => {
      stub.handle(async (_r, ok) => {
        startEventStream(ok);
        await writeStream(ok, streamOf("openai", ["Fine."]));
      });
      sendError(res, "openai", 429, "Rate limit reached", { "retry-after": "2" });
    });
    const agent = { kind: "openai", id: "brain-e2e-429", baseUrl: stub.url, model: "stub-model", rateLimit: { minIntervalMs: 0 } };
    const scripted = [{ reply: "ok" }];
    const projectId = await h.project("brains-e2e-429", { coder: agent, reviewer: scripted, tester: scripted }, { settings: stubAccess });
    const { sessionId } = await startTask(deps(), { projectId, prompt: "Discuss sum()", mode: "proposal" }, testActor);
    await h.waitFor(sessionId, "awaiting confirm", (s) => s.fsm === "awaiting_operator_confirm");
    const events = await db.store.readStream(sessionId);
    const [failed] = ofType<{ errorClass: string; retryAt: string | null; message: string }>(events, "StepFailed");
    expect(failed!.data.errorClass).toBe("provider_rate_limit");
    expect(Date.parse(failed!.data.retryAt!) - Date.parse(failed!.recordedAt)).toBeGreaterThanOrEqual(1_990);
    const [firstCall, retry] = stub.requests.map((r) => r.arrivedAt);
    expect(retry! - firstCall!).toBeGreaterThanOrEqual(1_990);
  });
});
