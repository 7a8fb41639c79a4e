// Agents that report usage, for the usage and cost tests: a fake `claude` printing Claude
// Code's stream-json (its init event naming the model, its result with usage) that fixes
// sum.js, and an OpenAI-compatible brain stub that approves with usage. Their numbers and a
// price table, with the costs they make.
import fs from "node:fs";
import path from "node:path";
import type { PricingSettings } from "../../server/config/schemas";
import { startBrainStub, streamOf, stubAccess, type BrainStub } from "./brains-stub";
import { FIXED_SUM, makeSumRepo, reviewApprove, testPlan } from "./tasks";

export const CLI_MODEL = "claude-fake-4";
/** Claude Code counts cache reads and writes as input too: 1000 + 300 + 200. */
export const CLI_USAGE = { input_tokens: 1000, cache_read_input_tokens: 300, cache_creation_input_tokens: 200, output_tokens: 450 };
export const CLI_TOKENS = { inputTokens: 1500, outputTokens: 450, cachedInputTokens: 300, cacheCreationInputTokens: 200 };
export const BRAIN_MODEL = "gpt-test";
/** An OpenAI-compatible brain reporting 1,024 of its 2,000 prompt tokens read from the cache. */
export const BRAIN_TOKENS = { inputTokens: 2000, outputTokens: 100, cachedInputTokens: 1024 };

/** The CLI's model with the default cache rates (reads 0.1×, writes 1.25× input); the brain's with its own read rate (0.5×). */
export const USAGE_PRICING: PricingSettings = {
  currency: "EUR",
  models: {
    [CLI_MODEL]: { inputPerMillion: 3, outputPerMillion: 15 },
    [BRAIN_MODEL]: { inputPerMillion: 2.5, outputPerMillion: 10, cacheReadPerMillion: 1.25 },
  },
};
/** 1,000 uncached at 3, 300 read at 0.3, 200 written at 3.75, 450 out at 15. */
export const CLI_COST = (1000 * 3 + 300 * 0.3 + 200 * 3.75 + 450 * 15) / 1e6;
/** 976 uncached at 2.5, 1,024 read at 1.25, 100 out at 10. */
export const BRAIN_COST = (976 * 2.5 + 1024 * 1.25 + 100 * 10) / 1e6;
/** What the brain's calls would cost with no cache: every input token at the input rate. */
export const BRAIN_COST_UNCACHED = (2000 * 2.5 + 100 * 10) / 1e6;

/** Writes `<dir>/claude` (world-readable, as the sandbox needs a file named on its command line). */
export function writeFakeClaude(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = path.join(dir, "claude");
  const lines = [
    { type: "system", subtype: "init", session_id: "fake", model: CLI_MODEL, tools: [] },
    { type: "result", subtype: "success", is_error: false, result: "Changed sum to add.", usage: CLI_USAGE },
  ];
  const script = [
    "#!/usr/bin/env node",
    'const fs = require("node:fs");',
    "fs.readFileSync(0);",
    `fs.writeFileSync("src/sum.js", ${JSON.stringify(FIXED_SUM)});`,
    `for (const line of ${JSON.stringify(lines)}) console.log(JSON.stringify(line));`,
  ];
  fs.writeFileSync(file, `${script.join("\n")}\n`, { mode: 0o755 });
  return file;
}

/** A brain that approves every review, reporting BRAIN_TOKENS. */
export function startUsageBrain(): Promise<BrainStub> {
  return startBrainStub((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    const usage = { input: BRAIN_TOKENS.inputTokens, output: BRAIN_TOKENS.outputTokens, cached: BRAIN_TOKENS.cachedInputTokens };
    for (const event of streamOf("openai", [reviewApprove], usage)) res.write(event);
    res.end();
  });
}

/**
 * A project (as projects.upsert takes it) in a new sum repository under `root` (world-readable):
 * the fake `claude` codes, a brain at `brainUrl` reviews, a scripted tester plans; its settings
 * allow the brain stub's loopback host (access.privateHosts).
 */
export function usageProject(id: string, name: string, root: string, brainUrl: string) {
  fs.chmodSync(root, 0o755);
  return {
    id,
    name,
    repoPath: makeSumRepo(root),
    allowlist: [["node", "--test", "**"]],
    agents: {
      // isolateHome off: a live server's runner has no key for it, and the fake needs none.
      coder: { kind: "claude" as const, id: "claude-coder", command: writeFakeClaude(path.join(root, "bin")), isolateHome: false },
      reviewer: { kind: "openai" as const, id: "gpt-reviewer", baseUrl: brainUrl, model: BRAIN_MODEL, rateLimit: { minIntervalMs: 0 } },
      tester: { kind: "scripted" as const, id: `${id}-tester`, responses: [{ reply: testPlan() }] },
    },
    settings: stubAccess,
  };
}
