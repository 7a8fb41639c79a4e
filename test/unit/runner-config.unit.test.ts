import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Db } from "../../server/db/pool";
import type { EventStore } from "../../server/events/store";
import { parseEnv, ZRunnerEnv } from "../../server/env";
import { retryDelayMs, retryWaitMs } from "../../server/runner/dispatch";
import { Runner } from "../../server/runner/runner";

describe("runner configuration", () => {
  it("applies defaults and fails fast naming the bad variable", () => {
    const env = parseEnv(ZRunnerEnv, { DATABASE_URL: "postgresql://u:p@localhost/db" });
    expect(env).toMatchObject({ CATCAFE_RUNNER_LEASE_MS: 15_000, CATCAFE_RUNNER_POLL_MS: 1_000, CATCAFE_RUNNER_CONCURRENCY: 4 });
    expect(() => parseEnv(ZRunnerEnv, {})).toThrow(/DATABASE_URL/);
    expect(() => parseEnv(ZRunnerEnv, { DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL: must be a postgres/);
    expect(() => parseEnv(ZRunnerEnv, { DATABASE_URL: "postgres://x", CATCAFE_RUNNER_POLL_MS: "5000" })).toThrow(
      /CATCAFE_RUNNER_POLL_MS: the fallback poll must be at most 1000 ms/,
    );
    expect(() => parseEnv(ZRunnerEnv, { DATABASE_URL: "postgres://x", CATCAFE_RUNNER_LEASE_MS: "soon" })).toThrow(
      /CATCAFE_RUNNER_LEASE_MS/,
    );
  });

  it("backs off retries 1 s, 2 s, 4 s by default, capped", () => {
    expect([1, 2, 3].map((a) => retryDelayMs(a))).toEqual([1000, 2000, 4000]);
    expect(retryDelayMs(20)).toBe(60_000);
    expect(retryDelayMs(2, 100)).toBe(200);
  });

  it("waits a step's own backoff when its session's settings give one, the last wait repeating", () => {
    const backoffMs = [500, 1500];
    expect([1, 2, 3, 4].map((a) => retryWaitMs(a, { baseMs: 100, backoffMs }))).toEqual([500, 1500, 1500, 1500]);
    // Without one, the runner's default; a provider's Retry-After wins when it is longer.
    expect(retryWaitMs(2, { baseMs: 100 })).toBe(200);
    expect(retryWaitMs(1, { backoffMs, retryAfterMs: 3000 })).toBe(3000);
    expect(retryWaitMs(1, { backoffMs: [0] })).toBe(0);
  });
});

describe("where a runner keeps its process ledger", () => {
  // Only the constructor runs, and nothing connects; the directory it makes is only noted.
  const newRunner = () => new Runner({} as EventStore, {} as Db, "postgresql://unused", { executors: {} });
  const dataDir = process.env.CATCAFE_DATA_DIR;
  afterEach(() => {
    vi.restoreAllMocks();
    if (dataDir === undefined) delete process.env.CATCAFE_DATA_DIR;
    else process.env.CATCAFE_DATA_DIR = dataDir;
  });

  it("in runners/ under CATCAFE_DATA_DIR, by default under .data of the working directory", () => {
    const made = vi.spyOn(fs, "mkdirSync").mockImplementation(() => undefined);
    process.env.CATCAFE_DATA_DIR = "/srv/catcafe";
    newRunner();
    delete process.env.CATCAFE_DATA_DIR;
    newRunner();
    expect(made.mock.calls.map(([dir]) => dir)).toEqual(["/srv/catcafe/runners", path.join(process.cwd(), ".data", "runners")]);
  });
});
