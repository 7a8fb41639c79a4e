// bake_off_fanout_ms (docs/bake-off.md): what a person waits for between confirming a bake-off
// of six contenders and all six building — from the confirm's commit (tasks.confirm returned:
// the parent's BakeOffForked and the six forks were appended in its transaction) to the last
// contender's first step started (claimed by the runner: the claim records StepStarted). One
// in-process runner with room for the six at once, instant scripted agents; each sample is a
// new bake-off (its roundtable first, not timed), dismissed once measured.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { dismissBakeOff } from "../../server/bake-off/pick";
import { DEMO_ALLOWLIST, DEMO_FIXED_SOURCE, DEMO_TEST_ARGV } from "../../server/demo/content";
import { ensureDemoRepo } from "../../server/demo/repo";
import { upsertProject } from "../../server/projects/projects";
import { confirmTask, startTask } from "../../server/tasks/commands";
import { foldTask } from "../../server/task-engine";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { percentiles, round } from "../lib/percentiles";
import { timedRunner } from "../lib/timed-runner";

const PROJECT_ID = "bench-bake-off";
const CONTENDERS = 6;
const SAMPLES = 10;

/** The demo repository with `.catcafe/`: six scripted coders, a reviewer and a tester. */
function commitAgents(repo: string): void {
  const coders = Array.from({ length: CONTENDERS }, (_, i) => `coder-${i + 1}`);
  const brains: Record<string, unknown> = {
    reviewer: { provider: "scripted", responses: [{ reply: JSON.stringify({ decision: "approve", summary: "Fine.", findings: [] }) }] },
    tester: {
      provider: "scripted",
      responses: [{ reply: JSON.stringify({ summary: "Unit tests.", commands: [{ argv: DEMO_TEST_ARGV }] }) }],
    },
  };
  for (const id of coders)
    brains[id] = { provider: "scripted", responses: [{ reply: "Fixed slugify().", files: { "src/slugify.js": DEMO_FIXED_SOURCE } }] };
  const files: Record<string, unknown> = {
    "version.json": { configVersion: "1.0" },
    "brains.json": { brains },
    "agents.json": {
      agents: [
        ...coders.map((id) => ({ id, role: "coder", defaultBrain: id, manifest: { capabilities: ["code-generation"] } })),
        { id: "reviewer-bench", role: "reviewer", defaultBrain: "reviewer" },
        { id: "tester-bench", role: "tester", defaultBrain: "tester" },
      ],
    },
  };
  fs.mkdirSync(path.join(repo, ".catcafe"), { recursive: true });
  for (const [name, content] of Object.entries(files))
    fs.writeFileSync(path.join(repo, ".catcafe", name), JSON.stringify(content, null, 2));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false", ...args], {
      cwd: repo,
      stdio: "ignore",
    });
  git("add", "-A", ".catcafe");
  git("commit", "-q", "-m", "six coders");
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const bakeOffFanout: Measurement = {
  name: "bake_off_fanout_ms",
  keys: ["bake_off_fanout_ms"],
  async run(ctx) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-bakeoff-"));
    const timing = timedRunner(ctx.url, root, "bench-bakeoff", { concurrency: CONTENDERS + 2 });
    const deps = { store: ctx.store, pool: ctx.pool };
    try {
      const repo = await ensureDemoRepo(root);
      commitAgents(repo.path);
      await upsertProject(ctx.pool, {
        id: PROJECT_ID,
        name: "bench: bake-off fan-out",
        repoPath: repo.path,
        allowlist: DEMO_ALLOWLIST,
        agents: {},
      });
      await timing.runner.start();
      const fanouts: number[] = [];
      const dones: number[] = [];
      const confirms: number[] = [];
      const contenders = Array.from({ length: CONTENDERS }, (_, i) => ({ coder: `coder-${i + 1}` }));
      for (let i = 0; i <= SAMPLES; i++) {
        const { sessionId } = await startTask(
          deps,
          { projectId: PROJECT_ID, prompt: `Fix slugify() (bake-off ${i})`, bakeOff: { contenders } },
          benchActor,
        );
        await waitFor("the roundtable", async () => foldTask(await ctx.store.readStream(sessionId)).fsm === "awaiting_operator_confirm");
        const t0 = performance.now();
        await confirmTask(deps, { sessionId, via: "api" }, benchActor);
        const committed = performance.now();
        const forked = (await ctx.store.readStream(sessionId)).find((e) => e.type === "BakeOffForked")!.data as {
          contenders: Array<{ sessionId: string }>;
        };
        const ids = new Set(forked.contenders.map((c) => c.sessionId));
        /** Each contender's first step's `mark` (claimed, or its outcome committed), when it has one. */
        const firsts = (mark: "claimedAt" | "committedAt") => {
          const first = new Map<string, number>();
          for (const t of timing.steps.values()) {
            const at = t[mark];
            if (!ids.has(t.sessionId) || at === undefined) continue;
            first.set(t.sessionId, Math.min(first.get(t.sessionId) ?? Infinity, at));
          }
          return first;
        };
        await waitFor("every contender's first step", async () => firsts("claimedAt").size === CONTENDERS, 30_000);
        const last = Math.max(...firsts("claimedAt").values());
        await waitFor("every contender's first step done", async () => firsts("committedAt").size === CONTENDERS, 30_000);
        const lastDone = Math.max(...firsts("committedAt").values());
        await dismissBakeOff(deps, { sessionId, reason: "measured" }, benchActor);
        if (i === 0) continue; // warms the statements, git and the runner
        fanouts.push(last - committed);
        dones.push(lastDone - committed);
        confirms.push(committed - t0);
      }
      const p = percentiles(fanouts);
      const done = percentiles(dones);
      ctx.note("bake_off_fanout", {
        definition: `tasks.confirm of a ${CONTENDERS}-contender bake-off committed → the last contender's first step claimed (StepStarted) by one runner with ${CONTENDERS + 2} slots`,
        samples: SAMPLES,
        confirm_ms: percentiles(confirms),
        all: fanouts.map((t) => round(t)),
        first_steps_done: {
          definition:
            "the same confirm → the last contender's first step's outcome committed: the claims and what each step did (its workspace, its agent), so that claiming sooner and starting the work sooner are told apart",
          ms: done,
        },
      });
      return {
        bake_off_fanout_ms: { p50: p.p50, p99: p.p99, n: p.n, max: p.max, first_steps_done_p50: done.p50, first_steps_done_p95: done.p95 },
      };
    } finally {
      await timing.runner.stop().catch(() => {});
      await timing.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
