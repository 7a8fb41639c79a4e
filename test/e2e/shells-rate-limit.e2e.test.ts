// The rate limit shared through PostgreSQL paces agent CLIs as it paces brains: two runners
// (each its own pool and gate, as two runner processes have) running the real Claude Code
// agent on one provider never let two runs reach the provider closer than its interval,
// measured where it counts, at the provider.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../server/agents/index";
import { databaseCallGate } from "../../server/brains/rate-limit";
import { createPool } from "../../server/db/pool";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { startProviderStub, type ProviderStub } from "../helpers/shell-provider-stub";

const INTERVAL_MS = 1_500;
const KEY_ENV = "CATCAFE_TEST_RATE_LIMIT_API_KEY";
let db: TestDatabase;
let stub: ProviderStub;
let workspace = "";
const waits: number[] = [];

beforeAll(async () => {
  process.env[KEY_ENV] = "sk-rate-limit-test";
  db = await createTestDatabase();
  stub = await startProviderStub(
    "anthropic",
    Array.from({ length: 6 }, (_, i) => ({ kind: "text" as const, chunks: [`answer ${i}`] })),
  );
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-rate-"));
});
afterAll(async () => {
  await stub?.close();
  fs.rmSync(workspace, { recursive: true, force: true });
  delete process.env[KEY_ENV];
});

describe("agent CLIs under the shared rate limit", () => {
  it("two runners' claude agents on one provider reach it at most once per interval", async () => {
    const runners = [createPool(db.url, 2), createPool(db.url, 2)];
    try {
      const runs = runners.flatMap((pool) => {
        const callGate = databaseCallGate(pool, { onWait: ({ waitedMs }) => void waits.push(waitedMs) });
        const agent = createAgent({
          kind: "claude",
          id: "shared-claude",
          model: "claude-sonnet-4-5",
          apiKeyEnv: KEY_ENV,
          baseUrl: stub.baseUrl,
          rateLimit: { minIntervalMs: INTERVAL_MS },
        });
        return [0, 1, 2].map(() =>
          agent.invoke({
            role: "coder",
            prompt: "say hello",
            context: [],
            workspace,
            invocation: 0,
            signal: new AbortController().signal,
            deadline: Date.now() + 120_000,
            callGate,
            // The stub on the host's loopback, allowed as an admin would (settings access.agentHosts).
            egress: { hosts: [new URL(stub.baseUrl).host] },
          }),
        );
      });
      const answers = await Promise.all(runs);
      expect(answers.map((a) => a.text).sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => `answer ${i}`));
      const at = stub
        .modelRequests()
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(at).toHaveLength(6);
      for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!, `gap ${i}`).toBeGreaterThanOrEqual(INTERVAL_MS);
      // They did wait for each other, and each wait was reported (the runner records it as RateLimitWaited).
      expect(waits.length).toBeGreaterThanOrEqual(5);
    } finally {
      await Promise.all(runners.map((p) => p.end()));
    }
  }, 180_000);
});
