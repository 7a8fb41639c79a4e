// step_overhead_ms and review_loop_cycle_ms (req N2: orchestration overhead per step with
// zero-latency scripted agents). Implementation-mode review-loop sessions on the demo
// repository, one at a time, through an in-process Runner wired like the runner process
// (own pool, the real workflow executors: git worktree, commits, blobs, the allowlisted
// `node --test`; the reactor deciding the next step in the result's transaction). The
// scripted agents answer at once: build → approve → test plan → node --test → approved.
//
// Per step, by performance.now() in this process:
//   prev     = the previous step's outcome committed (recordStepOutcome returned: the
//              runner's "step completed" log), or startTask() returned for the first step;
//              that commit also scheduled this step.
//   overhead = (this step's outcome committed − prev) − (executor end − executor start)
//            = pickup (prev → claim) + start (claim → StepStarted committed, executor called)
//              + record (executor returned → StepCompleted, next decision and next
//              StepScheduled committed).
// The executor's own time (worktree, git, blobs, the agent, the commands) is not overhead;
// it is noted per state. A cycle is startTask() called → the approving outcome committed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { DEMO_ALLOWLIST, DEMO_FIXED_SOURCE, DEMO_TEST_ARGV, DEMO_TEST_COUNT } from "../../server/demo/content";
import { ensureDemoRepo } from "../../server/demo/repo";
import { upsertProject } from "../../server/projects/projects";
import { startTask } from "../../server/tasks/commands";
import type { BenchContext, Measurement } from "../lib/context";
import { benchActor } from "../lib/fixtures";
import { percentiles, round } from "../lib/percentiles";
import { timedRunner } from "../lib/timed-runner";

const SESSIONS = 20;
const WARMUP_SESSIONS = 2;
/** build, review, test plan, test commands. */
const STEPS_PER_SESSION = 4;
const SESSION_TIMEOUT_MS = 30_000;
const PROJECT_ID = "bench-review-loop";

const p50p99 = (values: number[]) => {
  const s = percentiles(values);
  return { p50: s.p50, p99: s.p99 };
};

/** The demo repository under `root`, and a project on it whose scripted agents answer at once: build → approve → test plan. */
export async function instantReviewLoopProject(ctx: Pick<BenchContext, "pool">, root: string, projectId: string): Promise<void> {
  const repo = await ensureDemoRepo(root);
  await upsertProject(ctx.pool, {
    id: projectId,
    name: "bench: review loop with instant scripted agents",
    repoPath: repo.path,
    allowlist: DEMO_ALLOWLIST,
    agents: {
      coder: {
        kind: "scripted",
        id: "coder-bench",
        responses: [{ reply: "Fixed slugify().", files: { "src/slugify.js": DEMO_FIXED_SOURCE } }],
      },
      reviewer: {
        kind: "scripted",
        id: "reviewer-bench",
        responses: [{ reply: JSON.stringify({ decision: "approve", summary: "Fine.", findings: [] }) }],
      },
      tester: {
        kind: "scripted",
        id: "tester-bench",
        responses: [{ reply: JSON.stringify({ summary: "Unit tests.", commands: [{ argv: DEMO_TEST_ARGV }] }) }],
      },
    },
  });
}

export const reviewLoop: Measurement = {
  name: "review_loop",
  keys: ["step_overhead_ms", "review_loop_cycle_ms"],
  async run(ctx) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "catcafe-bench-loop-"));
    const timing = timedRunner(ctx.url, root, "bench-loop");
    const { runner } = timing;
    try {
      await instantReviewLoopProject(ctx, root, PROJECT_ID);

      const cycles: number[] = [];
      const overheads: number[] = [];
      const parts = { pickup: [] as number[], start: [] as number[], record: [] as number[] };
      const executorByState: Record<string, number[]> = {};
      let claimedBeforeCommitSeen = 0;
      await runner.start();
      try {
        for (let i = 0; i < WARMUP_SESSIONS + SESSIONS; i++) {
          const calledAt = performance.now();
          let sessionId = "";
          let committed = 0;
          const finished = new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error(`session ${i} did not finish its ${STEPS_PER_SESSION} steps within ${SESSION_TIMEOUT_MS} ms`)),
              SESSION_TIMEOUT_MS,
            );
            timing.onCommitted = (id) => {
              if (id === sessionId && ++committed === STEPS_PER_SESSION) {
                clearTimeout(timer);
                resolve();
              }
            };
          });
          finished.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
          // The session id is known only when startTask returns; its first step cannot
          // complete before that (it needs a worktree and a git commit).
          ({ sessionId } = await startTask(
            { store: ctx.store, pool: ctx.pool },
            { projectId: PROJECT_ID, prompt: `Fix slugify() (bench ${i})`, mode: "implementation" },
            benchActor,
          ));
          const startedAt = performance.now();
          await finished;
          const state = await ctx.pool.query<{ state: string }>("SELECT state FROM sessions WHERE id = $1", [sessionId]);
          if (state.rows[0]?.state !== "approved") throw new Error(`session ${sessionId} ended "${state.rows[0]?.state}", not "approved"`);
          if (i < WARMUP_SESSIONS) continue;

          let prev = startedAt;
          for (const t of timing.stepsOf(sessionId)) {
            const executor = t.execEnd - t.execStart;
            overheads.push(t.committedAt - prev - executor);
            // The claim can land before our client has read the previous COMMIT's reply.
            if (t.claimedAt < prev) claimedBeforeCommitSeen++;
            parts.pickup.push(Math.max(0, t.claimedAt - prev));
            parts.start.push(t.execStart - t.claimedAt);
            parts.record.push(t.committedAt - t.execEnd);
            (executorByState[t.state] ??= []).push(executor);
            prev = t.committedAt;
          }
          cycles.push(prev - calledAt);
        }
      } finally {
        await runner.stop();
      }

      const tests = await ctx.pool.query<{ stdout: string }>(
        "SELECT data->>'stdoutTail' AS stdout FROM events WHERE type = 'TestCommandRecorded' AND (data->>'passed')::boolean ORDER BY position DESC LIMIT 1",
      );
      if (!new RegExp(`# pass ${DEMO_TEST_COUNT}\\b`).test(tests.rows[0]?.stdout ?? ""))
        throw new Error("node --test did not report the demo's tests passing");

      const o = percentiles(overheads);
      const c = percentiles(cycles);
      ctx.note("step_overhead", {
        definition:
          "per step: (its outcome committed − the previous outcome committed, or startTask() returned) − its executor's time; i.e. pickup + StepStarted + StepCompleted with the next decision and StepScheduled, all committed",
        sessions: SESSIONS,
        warmup_sessions: WARMUP_SESSIONS,
        steps_per_session: STEPS_PER_SESSION,
        p95: o.p95,
        mean: o.mean,
        pickup_ms: p50p99(parts.pickup),
        start_ms: p50p99(parts.start),
        record_ms: p50p99(parts.record),
        claimed_before_commit_reply: claimedBeforeCommitSeen,
        executor_note:
          "not in the overhead: with an instant agent, an agent step's executor time is workspace work (worktree add or reset, the coder's commit) and blob writes; running_tests is node --test",
        executor_ms_by_state: Object.fromEntries(Object.entries(executorByState).map(([state, v]) => [state, p50p99(v)])),
      });
      ctx.note("review_loop_cycle", {
        definition:
          "startTask() called (implementation mode) → the outcome that finalized the session approved committed; 4 steps, instant scripted agents, real git worktree and node --test",
        sessions: SESSIONS,
        p95: c.p95,
        mean: c.mean,
        min: round(Math.min(...cycles)),
        overhead_share_p50: round((o.p50 * STEPS_PER_SESSION) / c.p50, 3),
      });
      return {
        step_overhead_ms: { p50: o.p50, p99: o.p99, n: o.n, max: o.max },
        review_loop_cycle_ms: { p50: c.p50, p99: c.p99, n: c.n, max: c.max },
      };
    } finally {
      await timing.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
