// forge_stage_overhead_ms: the Forge pipeline's orchestration per stage, with the demo's
// simulated agents answering at once (no gates). Each session takes the word counter from
// idea to delivery (13 steps: the PRD is rejected once), through the same timed in-process
// runner as review_loop. A stage's overhead is the sum of its steps' overheads (pickup,
// StepStarted, the result with its artifacts recorded, the next decision and the next
// StepScheduled, all committed); the executors' own time (worktree, git, the merge and
// collection of artifacts, node --test at Check) is not overhead and is noted per stage.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { DEMO_ALLOWLIST } from "../../server/demo/content";
import { FORGE_DEMO_IDEA, FORGE_DEMO_SCRIPTS, instantScripts } from "../../server/demo/forge-content";
import { ensureDemoRepo } from "../../server/demo/repo";
import { upsertProject } from "../../server/projects/projects";
import { newForge } from "../../server/tasks/forge";
import { BUILTIN_WORKFLOWS } from "../../server/task-engine";
import { stageOf } from "../../server/workflow/transition";
import type { Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { percentiles } from "../lib/percentiles";
import { timedRunner } from "../lib/timed-runner";

const SESSIONS = 5;
const WARMUP_SESSIONS = 1;
const STEPS_PER_SESSION = 13;
const SESSION_TIMEOUT_MS = 60_000;
const PROJECT_ID = "bench-forge";

export const forgePipeline: Measurement = {
  name: "forge",
  keys: ["forge_stage_overhead_ms"],
  async run(ctx) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-forge-"));
    const timing = timedRunner(ctx.url, root, "bench-forge");
    const definition = BUILTIN_WORKFLOWS.forge!;
    try {
      const repo = await ensureDemoRepo(root);
      const agent = (role: keyof typeof FORGE_DEMO_SCRIPTS) => ({
        kind: "scripted",
        id: `${role}-bench`,
        responses: [{ reply: "-" }],
        byStage: instantScripts(FORGE_DEMO_SCRIPTS[role]),
      });
      await upsertProject(ctx.pool, {
        id: PROJECT_ID,
        name: "bench: the Forge pipeline with instant simulated agents",
        repoPath: repo.path,
        allowlist: DEMO_ALLOWLIST,
        agents: { planner: agent("planner"), coder: agent("coder"), reviewer: agent("reviewer") } as never,
      });
      const byStage: Record<string, number[]> = {};
      const executorByStage: Record<string, number[]> = {};
      const all: number[] = [];
      const cycles: number[] = [];
      await timing.runner.start();
      try {
        for (let i = 0; i < WARMUP_SESSIONS + SESSIONS; i++) {
          let sessionId = "";
          let committed = 0;
          const finished = new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error(`forge session ${i} did not finish within ${SESSION_TIMEOUT_MS} ms`)),
              SESSION_TIMEOUT_MS,
            );
            timing.onCommitted = (id) => {
              if (id === sessionId && ++committed === STEPS_PER_SESSION) {
                clearTimeout(timer);
                resolve();
              }
            };
          });
          finished.catch(() => {});
          const calledAt = performance.now();
          ({ sessionId } = await newForge(
            { store: ctx.store, pool: ctx.pool },
            { projectId: PROJECT_ID, idea: FORGE_DEMO_IDEA, gates: [] },
            benchActor,
          ));
          const startedAt = performance.now();
          await finished;
          const state = await ctx.pool.query<{ state: string }>("SELECT state FROM sessions WHERE id = $1", [sessionId]);
          if (state.rows[0]?.state !== "completed")
            throw new Error(`forge session ${sessionId} ended "${state.rows[0]?.state}", not "completed"`);
          if (i < WARMUP_SESSIONS) continue;
          const perStage: Record<string, number> = {};
          let prev = startedAt;
          for (const t of timing.stepsOf(sessionId)) {
            const stage = stageOf(definition, t.state) ?? "?";
            const executor = t.execEnd - t.execStart;
            const overhead = t.committedAt - prev - executor;
            perStage[stage] = (perStage[stage] ?? 0) + overhead;
            (executorByStage[stage] ??= []).push(executor);
            prev = t.committedAt;
          }
          for (const [stage, ms] of Object.entries(perStage)) {
            (byStage[stage] ??= []).push(ms);
            all.push(ms);
          }
          cycles.push(prev - calledAt);
        }
      } finally {
        await timing.runner.stop();
      }
      const o = percentiles(all);
      const c = percentiles(cycles);
      ctx.note("forge_stage_overhead", {
        definition:
          "per stage: the sum of its steps' (outcome committed − previous outcome committed) − executor time; the demo's word counter, idea to delivery, instant simulated agents, no gates (13 steps, one PRD rejection)",
        sessions: SESSIONS,
        steps_per_session: STEPS_PER_SESSION,
        by_stage_ms: Object.fromEntries(Object.entries(byStage).map(([s, v]) => [s, { p50: percentiles(v).p50, p99: percentiles(v).p99 }])),
        executor_ms_by_stage: Object.fromEntries(Object.entries(executorByStage).map(([s, v]) => [s, { p50: percentiles(v).p50 }])),
        pipeline_cycle_ms: { p50: c.p50, p99: c.p99 },
      });
      return { forge_stage_overhead_ms: { p50: o.p50, p99: o.p99, n: o.n, max: o.max } };
    } finally {
      await timing.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
