// Usage and cost (docs/delivery.md) through the real runner: the coder is an agent CLI (a fake
// `claude` printing Claude Code's stream-json with its model and usage), the reviewer an HTTP
// brain (a local OpenAI-compatible stub reporting usage), the tester scripted (it reports no
// tokens; its call counts). The session's totals, the project's and the day's are the stubs'
// numbers, priced with the table; a model without a price is counted and named; a stale
// attempt's result adds nothing; a rebuild gives the same rows.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PricingSettings } from "../../server/config/schemas";
import { rebuildAndCompare } from "../../server/events/rebuild";
import { startTask } from "../../server/tasks/commands";
import { sessionUsage, usageReport } from "../../server/usage/totals";
import { stubAccess, type BrainStub } from "../helpers/brains-stub";
import { allowAgents } from "../helpers/access";
import { createTestDatabase, rejection, testActor, type TestDatabase } from "../helpers/db";
import { createHarness, testPlan, type Harness } from "../helpers/tasks";
import {
  BRAIN_COST,
  BRAIN_COST_UNCACHED,
  BRAIN_MODEL,
  BRAIN_TOKENS,
  CLI_COST,
  CLI_MODEL,
  CLI_TOKENS,
  startUsageBrain,
  USAGE_PRICING as pricing,
  writeFakeClaude,
} from "../helpers/usage";

let db: TestDatabase;
let h: Harness;
let brain: BrainStub;
const KEY_ENV = "CATCAFE_TEST_USAGE_KEY";

beforeAll(async () => {
  process.env[KEY_ENV] = "usage-test-key";
  db = await createTestDatabase();
  // The key variable its agents are given, allowed as an admin would (settings access.agentEnv).
  await allowAgents(db, { agentEnv: [KEY_ENV] });
  h = createHarness(db);
  await h.startRunner(undefined, { concurrency: 2 });
  brain = await startUsageBrain();
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await brain?.close();
});

async function approvedSession(projectId: string): Promise<string> {
  const { sessionId } = await startTask(
    { store: db.store, pool: db.pool },
    { projectId, prompt: "Fix sum()", mode: "implementation" },
    testActor,
  );
  const done = await h.waitFor(sessionId, "the session to finish", (s) => s.status === "finished");
  expect(done.outcome).toBe("approved");
  return sessionId;
}

describe("usage and cost", () => {
  let sessionId: string;

  beforeAll(async () => {
    await h.project(
      "usage",
      {
        coder: { kind: "claude", id: "claude-coder", command: writeFakeClaude(path.join(path.dirname(h.repo), "bin")), apiKeyEnv: KEY_ENV },
        reviewer: { kind: "openai", id: "gpt-reviewer", baseUrl: brain.url, model: BRAIN_MODEL, rateLimit: { minIntervalMs: 0 } },
        tester: [{ reply: testPlan() }],
      },
      { settings: stubAccess },
    );
    sessionId = await approvedSession("usage");
  }, 60_000);

  it("records each call's tokens with the model: the CLI's from its init event, the brain's as configured", async () => {
    const recorded = (await db.store.readStream(sessionId)).filter((e) => e.type === "AgentOutputRecorded").map((e) => e.data);
    expect(recorded).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ agentId: "claude-coder", usage: { ...CLI_TOKENS, model: CLI_MODEL } }),
        expect.objectContaining({ agentId: "gpt-reviewer", usage: { ...BRAIN_TOKENS, model: BRAIN_MODEL } }),
      ]),
    );
    // The scripted tester reports no tokens (its call still counts: below).
    expect(recorded.find((d) => (d as { agentId: string }).agentId === "tester-sim")).not.toHaveProperty("usage");
  });

  it("adds up the session per model and in all, priced with the table; a call that reported no tokens counts, with nothing to price", async () => {
    const usage = await sessionUsage(db.pool, sessionId, pricing);
    expect(usage.currency).toBe("EUR");
    const none = { cachedInputTokens: 0, cacheCreationInputTokens: 0 };
    expect(usage.byModel).toEqual([
      { model: CLI_MODEL, calls: 1, ...CLI_TOKENS, cost: CLI_COST, unpriced: [] },
      { model: BRAIN_MODEL, calls: 1, ...none, ...BRAIN_TOKENS, cost: BRAIN_COST, unpriced: [] },
      { model: "unknown", calls: 1, inputTokens: 0, outputTokens: 0, ...none, cost: 0, unpriced: [] },
    ]);
    expect(usage.total).toEqual({
      calls: 3,
      inputTokens: 3500,
      outputTokens: 550,
      cachedInputTokens: 1324,
      cacheCreationInputTokens: 200,
      cost: CLI_COST + BRAIN_COST,
      unpriced: [],
    });
    // Not a staged workflow: no stages.
    expect(usage.byStage).toEqual([]);
  });

  it("cached input tokens are priced at the cache rates: the table's own (the brain's reads) or the defaults (the CLI's reads 0.1×, writes 1.25× input)", async () => {
    const usage = await sessionUsage(db.pool, sessionId, pricing);
    const byModel = Object.fromEntries(usage.byModel.map((m) => [m.model, m]));
    expect(byModel[BRAIN_MODEL]!.cost).toBeCloseTo(BRAIN_COST, 9);
    expect(byModel[BRAIN_MODEL]!.cost).toBeLessThan(BRAIN_COST_UNCACHED);
    expect(byModel[CLI_MODEL]!.cost).toBeCloseTo(CLI_COST, 9);
    // The same tokens with every input token at the input rate cost more: the cache is what saved it.
    const flat: PricingSettings = {
      currency: "EUR",
      models: Object.fromEntries(
        Object.entries(pricing.models).map(([m, p]) => [
          m,
          { ...p, cacheReadPerMillion: p.inputPerMillion, cacheWritePerMillion: p.inputPerMillion },
        ]),
      ),
    };
    expect((await sessionUsage(db.pool, sessionId, flat)).total.cost).toBeCloseTo((1500 * 3 + 450 * 15) / 1e6 + BRAIN_COST_UNCACHED, 9);
  });

  it("totals per project and per day; a model without a price is counted and named, its cost left out", async () => {
    const second = await approvedSession("usage");
    const onlyCli: PricingSettings = { currency: "EUR", models: { [CLI_MODEL]: pricing.models[CLI_MODEL]! } };
    const report = await usageReport(db.pool, { days: 1, projectId: "usage" }, onlyCli);
    const today = new Date().toISOString().slice(0, 10);
    const figures = {
      calls: 6,
      inputTokens: 7000,
      outputTokens: 1100,
      cachedInputTokens: 2648,
      cacheCreationInputTokens: 400,
      cost: 2 * CLI_COST,
      unpriced: [BRAIN_MODEL],
    };
    expect(report.since).toBe(today);
    expect(report.total).toEqual(figures);
    expect(report.byProject).toEqual([{ projectId: "usage", projectName: "Project usage", ...figures }]);
    expect(report.byDay).toEqual([{ day: today, ...figures }]);
    expect((await sessionUsage(db.pool, second, onlyCli)).total.cost).toBe(CLI_COST);
    // Another project's filter sees none of it; days before today are not in a one-day report.
    expect((await usageReport(db.pool, { days: 30, projectId: "elsewhere" }, pricing)).total.calls).toBe(0);
    const tomorrow = new Date(Date.now() + 86_400_000);
    expect((await usageReport(db.pool, { days: 1, now: tomorrow }, pricing)).total.calls).toBe(0);
  });

  it("a stale attempt's result adds nothing: the fence refuses it and the usage rows stay as they were", async () => {
    const before = await sessionUsage(db.pool, sessionId, pricing);
    const completed = (await db.store.readStream(sessionId)).find(
      (e) => e.type === "StepCompleted" && (e.data as { output: { agentId?: string } }).output.agentId === "claude-coder",
    )!;
    const late = await db.store
      .append(sessionId, "any", [{ type: "StepCompleted", data: completed.data }], { actor: testActor })
      .catch((err: unknown) => err);
    expect(late).toBeInstanceOf(Error);
    expect(String(late)).toMatch(/stale|attempt/i);
    expect(await sessionUsage(db.pool, sessionId, pricing)).toEqual(before);
  });

  it("a rebuild from the log gives the same rows", async () => {
    const report = await rebuildAndCompare(db.store);
    expect(report.tables).toContain("agent_usage");
    expect(report.changedTables).toEqual([]);
    const rows = await db.pool.query<{ n: string }>("SELECT count(*) AS n FROM agent_usage");
    expect(Number(rows.rows[0]!.n)).toBe(6);
  });

  it("an unknown session is NOT_FOUND", async () => {
    expect((await rejection(sessionUsage(db.pool, "s-000000000000", pricing))).code).toBe("NOT_FOUND");
  });
});
