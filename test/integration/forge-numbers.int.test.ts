// One source for every count a person sees of a Forge run (docs/delivery.md "Usage and cost",
// docs/forge.md), through the real runner on a real database: the demo's pipeline, its critic
// an HTTP brain that reports tokens. The calls, tokens and cost are the same on the Usage page
// (usage.report), the session's usage (usage.session), the Forge page (forge.status),
// summary.json and `catcafe usage` (the CLI as a process); an artifact's "vN" and its version
// menu are one list; a redraft that kept a person's edit is credited to them too (forge.status
// and `catcafe forge status`); a Check run twice counts 2 on the Forge page, in the session's
// summary and in summary.json.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORGE_CODE_FILES, FORGE_DEMO_IDEA } from "../../server/demo/forge-content";
import { exportSession } from "../../server/export";
import { ARTIFACT_PATHS as A } from "../../server/forge/artifacts";
import { artifactText, newForge } from "../../server/tasks/forge";
import type { CurrentUser } from "../../server/auth/request";
import { createApiFixture, type ApiFixture } from "../helpers/api";
import { startApiServer, type ApiServer } from "../helpers/api-server";
import { startBrainStub, streamOf, stubAccess, type BrainStub } from "../helpers/brains-stub";
import { createTestDatabase, testActor, type TestDatabase } from "../helpers/db";
import { forgeAgents, quickForgeScripts, type ForgeScripts } from "../helpers/forge";
import { cleanEnv, run } from "../helpers/live-server";
import { createHarness, type Harness } from "../helpers/tasks";
import { BRAIN_COST, BRAIN_MODEL, BRAIN_TOKENS, USAGE_PRICING } from "../helpers/usage";

const BIN = path.resolve(import.meta.dirname, "../../bin/catcafe.mjs");
const CRITIC_PASS = JSON.stringify({ decision: "pass", summary: "Fits the idea.", findings: [] });

let db: TestDatabase;
let h: Harness;
let api: ApiFixture;
let server: ApiServer;
let brain: BrainStub;
let operator: CurrentUser & { name: string };
let token: string;
let home: string;
const savedDataDir = process.env.CATCAFE_DATA_DIR;
const deps = () => ({ store: db.store, pool: db.pool });

beforeAll(async () => {
  // settings.json's price table, as the web process (and so the API and the CLI's answers) reads it.
  home = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-numbers-"));
  fs.writeFileSync(path.join(home, "settings.json"), JSON.stringify({ pricing: USAGE_PRICING }));
  process.env.CATCAFE_DATA_DIR = home;
  db = await createTestDatabase();
  h = createHarness(db);
  await h.startRunner();
  api = createApiFixture(db);
  operator = await api.user("operator");
  token = (await api.caller(operator).tokens.create({ name: "numbers" })).token;
  server = await startApiServer(api.source);
  // The critic: a brain that passes every stage and reports BRAIN_TOKENS per call.
  brain = await startBrainStub((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    const usage = { input: BRAIN_TOKENS.inputTokens, output: BRAIN_TOKENS.outputTokens, cached: BRAIN_TOKENS.cachedInputTokens };
    for (const e of streamOf("openai", [CRITIC_PASS], usage)) res.write(e);
    res.end();
  });
});

afterAll(async () => {
  await server?.close();
  await brain?.close();
  if (savedDataDir === undefined) delete process.env.CATCAFE_DATA_DIR;
  else process.env.CATCAFE_DATA_DIR = savedDataDir;
  fs.rmSync(home, { recursive: true, force: true });
});

const cli = async (...args: string[]) => {
  const r = await run(BIN, [...args], {
    env: cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), CATCAFE_URL: server.url, CATCAFE_TOKEN: token }),
    timeoutMs: 60_000,
  });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};

/** A project of its own whose agents are the demo's (changed by `change`), the critic the brain when `brainCritic`. */
async function forgeProject(id: string, options: { brainCritic?: boolean; change?: (s: ForgeScripts) => ForgeScripts } = {}) {
  const agents = forgeAgents((options.change ?? ((s) => s))(quickForgeScripts()));
  const reviewer = options.brainCritic
    ? { kind: "openai", id: "critic-brain", baseUrl: brain.url, model: BRAIN_MODEL, rateLimit: { minIntervalMs: 0 } }
    : agents.reviewer;
  return h.project(id, { ...agents, reviewer }, { settings: stubAccess });
}

async function summaryOf(sessionId: string) {
  const files = await exportSession(db.store, db.pool, sessionId, { pricing: USAGE_PRICING });
  return JSON.parse(files.get("summary.json")!.toString("utf8")) as {
    usage: Record<string, unknown>;
    pipeline: {
      stages: Array<{
        name: string;
        iterations: number;
        calls: number;
        inputTokens: number;
        outputTokens: number;
        cachedInputTokens: number;
      }>;
    };
    rounds: Array<{ outputs: Array<{ role: string; usage: Record<string, unknown> | null }> }>;
  };
}

describe("calls, tokens and cost: one projection, five readers", () => {
  it(
    "the Usage page, the session's usage, the Forge page, summary.json and `catcafe usage` show the same figures",
    { timeout: 150_000 },
    async () => {
      const projectId = await forgeProject("numbers-usage", { brainCritic: true });
      const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
      const done = await h.waitFor(sessionId, "completed", (s) => s.status === "finished", 120_000);
      expect(done.outcome).toBe("completed");

      // 12 agent calls: the idea, two PRD drafts (the rules reject the first), design, plan,
      // coding and delivery by the scripted agents (no tokens), and five critiques by the brain.
      const expected = {
        calls: 12,
        inputTokens: 5 * BRAIN_TOKENS.inputTokens,
        outputTokens: 5 * BRAIN_TOKENS.outputTokens,
        cachedInputTokens: 5 * BRAIN_TOKENS.cachedInputTokens,
        cacheCreationInputTokens: 0,
        unpriced: [],
      };
      const viewer = api.caller(await api.user("viewer"));
      const report = await viewer.usage.report({ days: 1, projectId });
      const session = await viewer.usage.session({ sessionId });
      const forge = await viewer.forge.status({ sessionId });
      const summary = await summaryOf(sessionId);
      const fromCli = JSON.parse(await cli("usage", "--days", "1", "--project", projectId, "--json")) as typeof report;

      const total = { ...expected, cost: session.total.cost };
      expect(session.total.cost).toBeCloseTo(5 * BRAIN_COST, 9);
      expect(session.total).toEqual(total);
      expect(report.total).toEqual(total);
      expect(fromCli.total).toEqual(total);
      expect(forge.usage).toEqual({ currency: "EUR", ...total });
      expect(summary.usage).toEqual({ currency: "EUR", ...total });

      // Per stage: the Forge page's rail and summary.json's stages read the same rows.
      const perStage = Object.fromEntries(
        session.byStage.map((s) => [s.stage, { calls: s.calls, in: s.inputTokens, out: s.outputTokens, cached: s.cachedInputTokens }]),
      );
      expect(perStage.prd).toEqual({
        calls: 4,
        in: 2 * BRAIN_TOKENS.inputTokens,
        out: 2 * BRAIN_TOKENS.outputTokens,
        cached: 2 * BRAIN_TOKENS.cachedInputTokens,
      });
      for (const s of forge.stages.filter((st) => st.usage.calls > 0))
        expect({ calls: s.usage.calls, in: s.usage.inputTokens, out: s.usage.outputTokens, cached: s.usage.cachedInputTokens }).toEqual(
          perStage[s.name],
        );
      for (const s of summary.pipeline.stages.filter((st) => st.calls > 0))
        expect({ calls: s.calls, in: s.inputTokens, out: s.outputTokens, cached: s.cachedInputTokens }).toEqual(perStage[s.name]);
      // summary.json per step: each critique's tokens as the brain reported them, cached ones included.
      const critiques = summary.rounds.flatMap((r) => r.outputs).filter((o) => o.usage);
      expect(critiques).toHaveLength(5);
      for (const o of critiques) expect(o.usage).toEqual({ ...BRAIN_TOKENS, model: BRAIN_MODEL });
      expect(forge.stages.reduce((n, s) => n + s.usage.calls, 0)).toBe(12);
    },
  );
});

describe("an artifact's versions: one list for the list's vN and the version menu, with credit", () => {
  it(
    "a redraft that keeps a person's edit is v3, credited to the agent and the person (forge.status and `forge status`)",
    { timeout: 90_000 },
    async () => {
      const projectId = await forgeProject("numbers-credit");
      const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
      await h.waitFor(sessionId, "the PRD gate", (s) => s.fsm === "prd_review");
      const person = api.caller(operator);
      const first = (await person.forge.status({ sessionId })).artifacts.find((a) => a.path === A.prd)!;
      const drafted = (await artifactText(deps(), await db.store.readStream(sessionId), first.hash)).text;
      // The person rewrites the title; the agent's redraft rewrites other lines, so it merges cleanly.
      await person.forge.edit({
        sessionId,
        path: A.prd,
        content: drafted.replace(/^.*\n/, "# PRD: wc (worded by a person)\n"),
        baseHash: first.hash,
      });
      await person.forge.feedback({ sessionId, text: "Drop the monitoring requirement." });
      await h.waitFor(sessionId, "the redraft at the gate", (s) => s.fsm === "prd_review" && (s as { iteration: number }).iteration === 2);

      const status = await person.forge.status({ sessionId });
      const prd = status.artifacts.find((a) => a.path === A.prd)!;
      const me = `user:${operator.id}`;
      expect(prd.versions.map((v) => ({ number: v.number, kind: v.kind, by: v.by, kept: v.keptEditsBy }))).toEqual([
        { number: 1, kind: "draft", by: expect.not.stringMatching(/^user:/), kept: [] },
        { number: 2, kind: "edit", by: me, kept: [] },
        { number: 3, kind: "draft", by: expect.not.stringMatching(/^user:/), kept: [me] },
      ]);
      expect(prd).toMatchObject({ number: 3, by: "agent", keptEditsBy: [me] });
      expect(prd.versions[prd.number - 1]!.hash).toBe(prd.hash);
      expect(status.names[me]).toBe(operator.name);

      const text = await cli("forge", "status", sessionId);
      const line = text.split("\n").find((l) => l.startsWith(A.prd))!;
      expect(line).toContain("v3");
      expect(line).toContain(`agent, with ${operator.name}'s edit kept`);
    },
  );

  it("a redraft held back over a person's edit is no version: the list and the menu both end at v2", { timeout: 90_000 }, async () => {
    const projectId = await forgeProject("numbers-held");
    const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: ["prd"] }, testActor);
    await h.waitFor(sessionId, "the PRD gate", (s) => s.fsm === "prd_review");
    const person = api.caller(operator);
    const first = (await person.forge.status({ sessionId })).artifacts.find((a) => a.path === A.prd)!;
    const lines = (await artifactText(deps(), await db.store.readStream(sessionId), first.hash)).text.split("\n");
    // The person rewrites the very line the redraft rewrites: the person's text stays, the agent's is held.
    lines[2] = "Count lines, words and characters of one file. (Worded by a person.)";
    await person.forge.edit({ sessionId, path: A.prd, content: lines.join("\n"), baseHash: first.hash });
    await person.forge.feedback({ sessionId, text: "Remove the monitoring requirement." });
    await h.waitFor(sessionId, "the redraft at the gate", (s) => s.fsm === "prd_review" && (s as { iteration: number }).iteration === 2);

    const prd = (await person.forge.status({ sessionId })).artifacts.find((a) => a.path === A.prd)!;
    expect(prd.held).toMatchObject({ conflicts: 1 });
    expect(prd.number).toBe(2);
    expect(prd.versions.map((v) => `v${v.number}`)).toEqual(["v1", "v2"]);
    expect(prd.versions.every((v) => v.hash !== prd.held!.hash)).toBe(true);
    expect(prd.versions.at(-1)).toMatchObject({ kind: "edit", hash: prd.hash });
  });
});

describe("iterations and verdicts", () => {
  it(
    "a Check run twice counts 2 on the Forge page, in the session's summary and in summary.json; the verdicts are the critic's",
    { timeout: 120_000 },
    async () => {
      const broken = FORGE_CODE_FILES["src/count.js"].replace("characters: text.length", "characters: text.length + 1");
      const projectId = await forgeProject("numbers-check", {
        change: (s) => {
          const fixed = s.coder.coding![0]!;
          s.coder.coding = [{ ...fixed, files: { ...(fixed.files as Record<string, string>), "src/count.js": broken } }, fixed];
          s.reviewer.check = [{ reply: JSON.stringify({ goto: "coding", reason: "count() reports one character too many" }) }];
          return s;
        },
      });
      const { sessionId } = await newForge(deps(), { projectId, idea: FORGE_DEMO_IDEA, gates: [] }, testActor);
      const done = await h.waitFor(sessionId, "the end", (s) => s.status === "finished", 90_000);
      expect(done.outcome).toBe("completed");

      const viewer = api.caller(await api.user("viewer"));
      const forge = await viewer.forge.status({ sessionId });
      const page = await viewer.live.session({ sessionId });
      const summary = await summaryOf(sessionId);
      const runs = (stages: Array<{ name: string; runs?: number; iterations?: number }>) =>
        Object.fromEntries(stages.map((s) => [s.name, s.runs ?? s.iterations]));

      const expected = { idea: 1, prd: 2, design: 1, plan: 1, coding: 2, check: 2, delivery: 1 };
      expect(runs(forge.stages)).toMatchObject(expected);
      expect(runs(page.status.stages!)).toEqual(expected);
      expect(runs(summary.pipeline.stages)).toEqual(expected);
      // The critic revised the PRD once (the rules) and passed every stage it judged.
      expect(forge.stages.find((s) => s.name === "prd")!.verdicts).toEqual({ pass: 1, revise: 1, escalate: 0 });
      expect(page.status.stageVerdicts).toEqual({ pass: 5, revise: 1, escalate: 0 });
      expect(page.status.stages!.find((s) => s.name === "check")).toMatchObject({ runs: 2, completed: true });
    },
  );
});
